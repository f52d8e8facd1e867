import FogKit
import FogKitTesting
import Foundation
import Testing

/// Bad input never hurts data (reference §3.1, §3.4–3.6, §4.1, §6.3, §7): each
/// malformed save fails with CloudKit's code and leaves the store as it was.
@Suite struct ValidationTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    // MARK: - Names

    static let badRecordNames: [String] = [
        "",
        String(repeating: "n", count: 256),
        "café",
        "note😀",
        "_reserved",
        "tab\there",
        "del\u{7F}",
    ]

    @Test(arguments: badRecordNames)
    func badRecordNamesAreInvalidArgumentsAndNothingIsStored(name: String) async throws {
        let record = Record(recordType: "Note", recordID: .init(recordName: name))
        record["title"] = "t"
        await expectFogError(.invalidArguments, "name \(name.prefix(20))") { try await db.save(record) }
        await expectNotStored(record.recordID, in: db)
        // With every policy, and per item.
        for policy in RecordSavePolicy.allCases {
            let result = try await db.modifyRecords(saving: [record], deleting: [], savePolicy: policy, atomically: false)
            #expect(result.saveResults[record.recordID]?.fogCode == .invalidArguments, "policy \(policy)")
        }
        await expectNotStored(record.recordID, in: db)
    }

    @Test func aRecordNameOf255ASCIICharactersIsAccepted() async throws {
        let record = Record(recordType: "Note", recordID: .init(recordName: String(repeating: "n", count: 255)))
        try await db.save(record)
        #expect(try await db.record(for: record.recordID).recordID == record.recordID)
    }

    static let badRecordTypes: [String] = [
        "",
        "1Note",
        "Note.Item",
        "Note Item",
        "_Note",
        "Nöte",
        "Note-Item",
    ]

    @Test(arguments: badRecordTypes)
    func badRecordTypesAreInvalidArgumentsAndNothingIsStored(type: String) async throws {
        let record = Record(recordType: type, recordID: .init(recordName: "r"))
        record["title"] = "t"
        await expectFogError(.invalidArguments, "type \(type)") { try await db.save(record) }
        await expectNotStored(record.recordID, in: db)
    }

    @Test func recordTypesWithLettersDigitsAndUnderscoresAreAccepted() async throws {
        for type in ["N", "Note2", "Note_Item", "note_2_x"] {
            let record = Record(recordType: type)
            try await db.save(record)
            #expect(try await db.record(for: record.recordID).recordType == type)
        }
    }

    static let badFieldKeys: [String] = [
        "_secret",
        "1field",
        String(repeating: "k", count: 256),
        "has space",
        "dash-key",
        "ümlaut",
        "",
        "recordID",
        "recordType",
        "creationDate",
        "modificationDate",
        "creatorUserRecordID",
        "lastModifiedUserRecordID",
        "recordChangeTag",
        "parent",
        "share",
        "allTokens",
        "self",
        "recordName",
    ]

    @Test(arguments: badFieldKeys)
    func badFieldKeysAreInvalidArgumentsAndNothingIsStored(key: String) async throws {
        // A new record.
        let record = Record(recordType: "Note", recordID: .init(recordName: "new"))
        record["title"] = "t"
        record[key] = "value"
        await expectFogError(.invalidArguments, "key \(key.prefix(20))") { try await db.save(record) }
        await expectNotStored(record.recordID, in: db)

        // An update of an existing record.
        let existing = Record(recordType: "Note", recordID: .init(recordName: "existing"))
        existing["title"] = "before"
        let stored = try await db.save(existing)
        let edit = try await db.record(for: existing.recordID)
        edit["title"] = "after"
        edit[key] = "value"
        await expectFogError(.invalidArguments, "key \(key.prefix(20))") { try await db.save(edit) }
        expectSameRecord(try await db.record(for: existing.recordID), stored)
    }

    @Test func aFieldKeyOf255CharactersIsAccepted() async throws {
        let key = "k" + String(repeating: "_", count: 253) + "9"
        let record = Record(recordType: "Note")
        record[key] = 1
        try await db.save(record)
        #expect(try await db.record(for: record.recordID)[key] as? Int == 1)
    }

    // MARK: - Field types

    @Test(arguments: [
        (FieldValue.int64(1), FieldValue.string("one")),
        (.string("one"), .int64(1)),
        (.int64(1), .double(1.5)),
        (.double(1.5), .int64(1)),
        (.stringList(["a"]), .string("a")),
        (.string("a"), .stringList(["a"])),
        (.date(Date(timeIntervalSince1970: 0)), .double(0)),
        (.bytes(Data([1])), .string("\u{1}")),
    ])
    func aFieldsTypeIsFixedByItsFirstWrite(first: FieldValue, second: FieldValue) async throws {
        let original = Record(recordType: "Note", recordID: .init(recordName: "original"))
        original.setFieldValue(first, forKey: "field")
        original["title"] = "kept"
        let stored = try await db.save(original)

        // The same record, updated with the other type.
        let edit = try await db.record(for: original.recordID)
        edit.setFieldValue(second, forKey: "field")
        edit["title"] = "changed"
        await expectFogError(.invalidArguments) { try await db.save(edit) }
        expectSameRecord(try await db.record(for: original.recordID), stored)

        // Another record of the same type.
        let other = Record(recordType: "Note", recordID: .init(recordName: "other"))
        other.setFieldValue(second, forKey: "field")
        await expectFogError(.invalidArguments) { try await db.save(other) }
        await expectNotStored(other.recordID, in: db)

        // The schema is shared by every database and zone of the container.
        try await db.save(RecordZone(zoneName: "Z"))
        let inZone = Record(recordType: "Note", zoneID: .init(zoneName: "Z"))
        inZone.setFieldValue(second, forKey: "field")
        await expectFogError(.invalidArguments) { try await db.save(inZone) }
        let inPublic = Record(recordType: "Note")
        inPublic.setFieldValue(second, forKey: "field")
        await expectFogError(.invalidArguments) { try await store.publicDatabase.save(inPublic) }

        // A different record type may use the name with the other type.
        let task = Record(recordType: "Task", recordID: .init(recordName: "task"))
        task.setFieldValue(second, forKey: "field")
        let savedTask = try await db.save(task)
        #expect(savedTask.fieldValue(forKey: "field") == second)
    }

    @Test(arguments: [false, true])
    func twoNewRecordsInOneRequestCannotGiveAFieldTwoTypes(atomically: Bool) async throws {
        let zoneID = RecordZone.ID(zoneName: "Z")
        try await db.save(RecordZone(zoneID: zoneID))
        let first = Record(recordType: "Note", recordID: .init(recordName: "first", zoneID: zoneID))
        first["count"] = 1
        let second = Record(recordType: "Note", recordID: .init(recordName: "second", zoneID: zoneID))
        second["count"] = "one"
        if atomically {
            let error = await expectFogError(.partialFailure) {
                try await db.modifyRecords(saving: [first, second], deleting: [], atomically: true)
            }
            #expect(fogCode(error?.partialErrorsByItemID?[second.recordID]) == .invalidArguments)
            #expect(fogCode(error?.partialErrorsByItemID?[first.recordID]) == .batchRequestFailed)
            await expectNotStored(first.recordID, in: db)
        } else {
            let result = try await db.modifyRecords(saving: [first, second], deleting: [], atomically: false)
            #expect(result.saveResults[first.recordID]?.succeeded == true)
            #expect(result.saveResults[second.recordID]?.fogCode == .invalidArguments)
        }
        await expectNotStored(second.recordID, in: db)
        // Whatever happened, the field's type is not STRING.
        let later = Record(recordType: "Note", recordID: .init(recordName: "later", zoneID: zoneID))
        later["count"] = 5
        try await db.save(later)
    }

    @Test func aRecordCannotChangeItsType() async throws {
        let note = Record(recordType: "Note", recordID: .init(recordName: "r"))
        note["title"] = "t"
        let stored = try await db.save(note)
        let task = Record(recordType: "Task", recordID: note.recordID)
        task["title"] = "as a task"
        for policy in [RecordSavePolicy.changedKeys, .allKeys] {
            let result = try await db.modifyRecords(saving: [task], deleting: [], savePolicy: policy, atomically: false)
            #expect(result.saveResults[note.recordID]?.fogCode == .invalidArguments, "policy \(policy)")
        }
        expectSameRecord(try await db.record(for: note.recordID), stored)
    }

    // MARK: - Sizes and counts

    @Test func aRecordOverOneMegabyteIsLimitExceededAndOneJustUnderSaves() async throws {
        let big = Record(recordType: "Blob", recordID: .init(recordName: "big"))
        big["data"] = Data(count: 1_048_577)
        await expectFogError(.limitExceeded) { try await db.save(big) }
        await expectNotStored(big.recordID, in: db)

        let justUnder = Record(recordType: "Blob", recordID: .init(recordName: "under"))
        justUnder["data"] = Data(count: 999_000)
        let saved = try await db.save(justUnder)
        #expect((saved["data"] as? Data)?.count == 999_000)
        #expect((try await db.record(for: justUnder.recordID)["data"] as? Data)?.count == 999_000)
    }

    @Test func growingAStoredRecordPastOneMegabyteIsLimitExceededAndChangesNothing() async throws {
        let r = Record(recordType: "Blob", recordID: .init(recordName: "r"))
        r["first"] = Data(count: 600_000)
        let stored = try await db.save(r)
        // Fetched without its data, so the client copy itself is small.
        let partial = try #require(try await db.records(for: [r.recordID], desiredKeys: [])[r.recordID]?.get())
        partial["second"] = Data(count: 600_000)
        await expectFogError(.limitExceeded) { try await db.save(partial) }
        expectSameRecord(try await db.record(for: r.recordID), stored)
    }

    @Test func assetsDoNotCountTowardTheRecordSizeLimit() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-asset-\(UUID().uuidString)")
        try Data(count: 1_200_000).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let r = Record(recordType: "Doc")
        r["file"] = Asset(fileURL: file)
        r["data"] = Data(count: 900_000)
        try await db.save(r)
        #expect(try await db.record(for: r.recordID).allKeys() == ["data", "file"])
    }

    @Test func moreThan400ItemsInOneRequestIsLimitExceededAndNothingIsStored() async throws {
        let existing = Record(recordType: "Note", recordID: .init(recordName: "existing"))
        try await db.save(existing)
        let records = (0..<400).map { Record(recordType: "Note", recordID: .init(recordName: "r\($0)")) }
        for atomically in [false, true] {
            await expectFogError(.limitExceeded) {
                try await db.modifyRecords(saving: records, deleting: [existing.recordID], atomically: atomically)
            }
            await expectFogError(.limitExceeded) {
                try await db.modifyRecords(saving: records + [Record(recordType: "Note")], deleting: [], atomically: atomically)
            }
        }
        let fetched = try await db.records(for: records.map(\.recordID) + [existing.recordID])
        #expect(records.allSatisfy { fetched[$0.recordID]?.fogCode == .unknownItem })
        #expect(fetched[existing.recordID]?.succeeded == true)

        // Exactly 400 is fine.
        let result = try await db.modifyRecords(saving: records, deleting: [])
        #expect(result.saveResults.count == 400)
        #expect(result.saveResults.values.allSatisfy { $0.succeeded })
    }

    @Test func aRequestOverTwoMegabytesIsLimitExceededAndNothingIsStored() async throws {
        let records = (0..<3).map { i -> Record in
            let r = Record(recordType: "Blob", recordID: .init(recordName: "b\(i)"))
            r["data"] = Data(count: 900_000)
            return r
        }
        await expectFogError(.limitExceeded) {
            try await db.modifyRecords(saving: records, deleting: [], atomically: false)
        }
        for r in records { await expectNotStored(r.recordID, in: db) }
    }

    // MARK: - Request shape

    @Test(arguments: [false, true])
    func theSameRecordTwiceInOneRequestIsInvalidArgumentsAndNothingIsStored(atomically: Bool) async throws {
        let id = Record.ID(recordName: "twice")
        let one = Record(recordType: "Note", recordID: id)
        one["v"] = 1
        let two = Record(recordType: "Note", recordID: id)
        two["v"] = 2
        if atomically {
            let error = await expectFogError(.partialFailure) {
                try await db.modifyRecords(saving: [one, two], deleting: [], atomically: true)
            }
            #expect(fogCode(error?.partialErrorsByItemID?[id]) == .invalidArguments)
        } else {
            let result = try await db.modifyRecords(saving: [one, two], deleting: [], atomically: false)
            #expect(result.saveResults[id]?.fogCode == .invalidArguments)
        }
        await expectNotStored(id, in: db)
    }

    @Test func theSameRecordSavedAndDeletedInOneRequestIsInvalidArgumentsTwice() async throws {
        let id = Record.ID(recordName: "both")
        let stored = Record(recordType: "Note", recordID: id)
        stored["v"] = 1
        try await db.save(stored)
        let again = Record(recordType: "Note", recordID: id)
        again["v"] = 2
        let result = try await db.modifyRecords(saving: [again], deleting: [id], atomically: false)
        #expect(result.saveResults[id]?.fogCode == .invalidArguments)
        #expect(result.deleteResults[id]?.fogCode == .invalidArguments)
        #expect(try await db.record(for: id)["v"] as? Int == 1)
    }

    // MARK: - References

    @Test func aReferenceIntoAnotherZoneIsInvalidArgumentsAndNothingIsStored() async throws {
        try await db.save(RecordZone(zoneName: "Other"))
        let target = Record(recordType: "Target", recordID: .init(recordName: "t", zoneID: .init(zoneName: "Other")))
        try await db.save(target)

        let single = Record(recordType: "Source", recordID: .init(recordName: "single"))
        single["to"] = Record.Reference(record: target, action: .none)
        await expectFogError(.invalidArguments) { try await db.save(single) }
        await expectNotStored(single.recordID, in: db)

        let list = Record(recordType: "Source", recordID: .init(recordName: "list"))
        list["to"] = [
            Record.Reference(recordID: .init(recordName: "local"), action: .none),
            Record.Reference(record: target, action: .deleteSelf),
        ]
        await expectFogError(.invalidArguments) { try await db.save(list) }
        await expectNotStored(list.recordID, in: db)

        // Deleting the target must not delete anything it was never linked to.
        try await db.deleteRecord(withID: target.recordID)
    }

    @Test func aParentWithActionDeleteSelfIsInvalidArguments() async throws {
        let folder = Record(recordType: "Folder", recordID: .init(recordName: "folder"))
        try await db.save(folder)
        let note = Record(recordType: "Note", recordID: .init(recordName: "note"))
        note.parent = Record.Reference(record: folder, action: .deleteSelf)
        await expectFogError(.invalidArguments) { try await db.save(note) }
        await expectNotStored(note.recordID, in: db)
    }

    @Test func aParentInAnotherZoneOrTheRecordItselfIsInvalidArguments() async throws {
        try await db.save(RecordZone(zoneName: "Other"))
        let folder = Record(recordType: "Folder", recordID: .init(recordName: "folder", zoneID: .init(zoneName: "Other")))
        try await db.save(folder)
        let note = Record(recordType: "Note", recordID: .init(recordName: "note"))
        note.setParent(folder)
        await expectFogError(.invalidArguments) { try await db.save(note) }
        await expectNotStored(note.recordID, in: db)

        let selfish = Record(recordType: "Note", recordID: .init(recordName: "selfish"))
        selfish.setParent(selfish.recordID)
        await expectFogError(.invalidArguments) { try await db.save(selfish) }
        await expectNotStored(selfish.recordID, in: db)
    }

    @Test func aParentThatDoesNotExistIsReferenceViolation() async throws {
        let note = Record(recordType: "Note", recordID: .init(recordName: "note"))
        note.setParent(Record.ID(recordName: "ghost"))
        await expectFogError(.referenceViolation) { try await db.save(note) }
        await expectNotStored(note.recordID, in: db)

        // Setting a missing parent on an existing record leaves it unchanged.
        let plain = Record(recordType: "Note", recordID: .init(recordName: "plain"))
        let stored = try await db.save(plain)
        let edit = try await db.record(for: plain.recordID)
        edit.setParent(Record.ID(recordName: "ghost"))
        await expectFogError(.referenceViolation) { try await db.save(edit) }
        expectSameRecord(try await db.record(for: plain.recordID), stored)
    }

    @Test(arguments: [false, true])
    func aParentSavedInTheSameRequestIsAccepted(parentFirst: Bool) async throws {
        let folder = Record(recordType: "Folder", recordID: .init(recordName: "folder"))
        let note = Record(recordType: "Note", recordID: .init(recordName: "note"))
        note.setParent(folder)
        let records = parentFirst ? [folder, note] : [note, folder]
        let result = try await db.modifyRecords(saving: records, deleting: [])
        #expect(result.saveResults.values.allSatisfy { $0.succeeded })
        #expect(try await db.record(for: note.recordID).parent?.recordID == folder.recordID)
    }

    @Test func aParentThatFailsToSaveInTheSameRequestIsReferenceViolation() async throws {
        // The parent "must exist on the server or be in the same operation": a
        // parent whose own save fails is neither.
        let typed = Record(recordType: "Folder", recordID: .init(recordName: "typed"))
        typed["n"] = 1
        try await db.save(typed)

        let folder = Record(recordType: "Folder", recordID: .init(recordName: "folder"))
        folder["n"] = "not an int"  // fails when planned: n is INT64
        let note = Record(recordType: "Note", recordID: .init(recordName: "note"))
        note.setParent(folder)
        let result = try await db.modifyRecords(saving: [folder, note], deleting: [], atomically: false)
        #expect(result.saveResults[folder.recordID]?.fogCode == .invalidArguments)
        #expect(result.saveResults[note.recordID]?.fogCode == .referenceViolation)
        await expectNotStored(folder.recordID, in: db)
        await expectNotStored(note.recordID, in: db)
    }

    // MARK: - Cascade limit

    /// Records in `zoneID` that each reference `target` with deleteSelf.
    static func owned(by target: Record.ID, _ range: Range<Int>, zoneID: RecordZone.ID) -> [Record] {
        range.map { i in
            let r = Record(recordType: "Owned", recordID: .init(recordName: "owned\(i)", zoneID: zoneID))
            r["owner"] = Record.Reference(recordID: target, action: .deleteSelf)
            return r
        }
    }

    @Test(arguments: [false, true])
    func atMost750DeleteSelfReferencesMayPointAtOneRecord(atomically: Bool) async throws {
        let zoneID = RecordZone.ID(zoneName: "Owners")
        try await db.save(RecordZone(zoneID: zoneID))
        let target = Record(recordType: "Owner", recordID: .init(recordName: "target", zoneID: zoneID))
        try await db.save(target)
        for chunk in [0..<400, 400..<749] {
            let result = try await db.modifyRecords(saving: Self.owned(by: target.recordID, chunk, zoneID: zoneID), deleting: [])
            #expect(result.saveResults.values.allSatisfy { $0.succeeded })
        }
        // Two more in one request would make 751: at least one must fail, and in
        // an atomic request in this (atomic) zone neither is stored.
        let lastTwo = Self.owned(by: target.recordID, 749..<751, zoneID: zoneID)
        do {
            let result = try await db.modifyRecords(saving: lastTwo, deleting: [], atomically: atomically)
            let codes = lastTwo.map { result.saveResults[$0.recordID]?.fogCode }
            #expect(codes.contains(.limitExceeded), "751 deleteSelf references were accepted: \(codes)")
        } catch let error as FogError {
            #expect(error.code == .partialFailure)
            let codes = lastTwo.map { fogCode(error.partialErrorsByItemID?[$0.recordID]) }
            #expect(codes.contains(.limitExceeded), "\(codes)")
            for r in lastTwo { await expectNotStored(r.recordID, in: db) }
        }
        // However the request ended, the store holds at most 750 of them.
        let all = try await db.records(for: Self.owned(by: target.recordID, 0..<751, zoneID: zoneID).map(\.recordID))
        #expect(all.values.filter { $0.succeeded }.count <= 750)
        // The 750th alone is fine when there is room; a 751st is not.
        if all.values.filter({ $0.succeeded }).count == 749 {
            try await db.save(Self.owned(by: target.recordID, 749..<750, zoneID: zoneID)[0])
        }
        await expectFogError(.limitExceeded) { try await db.save(Self.owned(by: target.recordID, 751..<752, zoneID: zoneID)[0]) }
    }

    // MARK: - Assets

    @Test func aMissingAssetFileIsAssetFileNotFoundAndNothingIsStored() async throws {
        let missing = URL(fileURLWithPath: "/nonexistent/fogkit-\(UUID().uuidString)")
        let r = Record(recordType: "Doc", recordID: .init(recordName: "doc"))
        r["title"] = "t"
        r["file"] = Asset(fileURL: missing)
        await expectFogError(.assetFileNotFound) { try await db.save(r) }
        await expectNotStored(r.recordID, in: db)

        let present = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-asset-\(UUID().uuidString)")
        try Data("x".utf8).write(to: present)
        defer { try? FileManager.default.removeItem(at: present) }
        let list = Record(recordType: "Doc", recordID: .init(recordName: "list"))
        list["files"] = [Asset(fileURL: present), Asset(fileURL: missing)]
        await expectFogError(.assetFileNotFound) { try await db.save(list) }
        await expectNotStored(list.recordID, in: db)

        // On an existing record the old version stays.
        let existing = Record(recordType: "Doc", recordID: .init(recordName: "existing"))
        existing["file"] = Asset(fileURL: present)
        let stored = try await db.save(existing)
        let edit = try await db.record(for: existing.recordID)
        edit["file"] = Asset(fileURL: missing)
        await expectFogError(.assetFileNotFound) { try await db.save(edit) }
        expectSameRecord(try await db.record(for: existing.recordID), stored)
    }

    // MARK: - User records

    @Test func clientsCannotCreateUsersRecords() async throws {
        let fake = Record(recordType: "Users", recordID: .init(recordName: "fakeuser"))
        await expectFogError(.invalidArguments) { try await db.save(fake) }
        await expectNotStored(fake.recordID, in: db)
    }

    @Test func appsMayAddFieldsToTheirUserRecord() async throws {
        let me = try await store.container.userRecordID()
        let user = try await db.record(for: me)
        user["nickname"] = "Al"
        let saved = try await db.save(user)
        #expect(saved["nickname"] as? String == "Al")
        #expect(saved.recordType == "Users")
        // But a new record cannot take the user record's ID.
        let clash = Record(recordType: "Users", recordID: me)
        await expectFogError(.serverRecordChanged) { try await db.save(clash) }
    }
}
