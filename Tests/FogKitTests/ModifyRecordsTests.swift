import FogKit
import FogKitTesting
import Foundation
import Testing

/// modifyRecords, deletes, cascades and fetches (reference §2.2, §3.6, §6.3,
/// §6.4, §7.3): per-item results and per-zone atomicity.
@Suite struct ModifyRecordsTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    /// How one item of a batch goes wrong.
    enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Malformed before the store is consulted: a reserved field key.
        case malformedKey
        /// A stale change tag (a conflict found against the stored record).
        case staleTag
        /// A value whose type clashes with the field's fixed type.
        case fieldTypeClash
        /// A parent that does not exist.
        case missingParent

        var testDescription: String { rawValue }

        var expected: FogError.Code {
            switch self {
            case .malformedKey, .fieldTypeClash: .invalidArguments
            case .staleTag: .serverRecordChanged
            case .missingParent: .referenceViolation
            }
        }

        /// Whether the fault is found before the request reaches the store.
        var isMalformed: Bool { self == .malformedKey }
    }

    /// Prepares a record in `zoneID` that fails with `fault` when saved.
    static func makeBad(_ fault: Fault, in db: Database, zoneID: RecordZone.ID) async throws -> Record {
        let id = Record.ID(recordName: "bad", zoneID: zoneID)
        switch fault {
        case .malformedKey:
            let r = Record(recordType: "Note", recordID: id)
            r["_reserved"] = 1
            return r
        case .staleTag:
            let r = Record(recordType: "Note", recordID: id)
            r["v"] = 0
            let stale = try await db.save(r)
            let fresh = try await db.record(for: id)
            fresh["v"] = 1
            try await db.save(fresh)
            stale["v"] = 2
            return stale
        case .fieldTypeClash:
            let typed = Record(recordType: "Note", recordID: .init(recordName: "typed", zoneID: zoneID))
            typed["v"] = 1
            try await db.save(typed)
            let r = Record(recordType: "Note", recordID: id)
            r["v"] = "string"
            return r
        case .missingParent:
            let r = Record(recordType: "Note", recordID: id)
            r.setParent(Record.ID(recordName: "ghost", zoneID: zoneID))
            return r
        }
    }

    static func goodRecords(_ count: Int, in zoneID: RecordZone.ID, prefix: String = "good") -> [Record] {
        (0..<count).map { i in
            let r = Record(recordType: "Note", recordID: .init(recordName: "\(prefix)\(i)", zoneID: zoneID))
            r["v"] = i
            return r
        }
    }

    // MARK: - Per-item results

    @Test func modifyRecordsReportsEachSaveAndDelete() async throws {
        let doomed = Record(recordType: "Note", recordID: .init(recordName: "doomed"))
        try await db.save(doomed)
        let saves = Self.goodRecords(3, in: .default)
        let missing = Record.ID(recordName: "missing")
        let result = try await db.modifyRecords(saving: saves, deleting: [doomed.recordID, missing], atomically: false)
        #expect(result.saveResults.count == 3)
        #expect(result.deleteResults.count == 2)
        for r in saves {
            let saved = try #require(try result.saveResults[r.recordID]?.get())
            #expect(saved["v"] as? Int == r["v"] as? Int)
            #expect(saved.recordChangeTag != nil)
        }
        #expect(result.deleteResults[doomed.recordID]?.succeeded == true)
        #expect(result.deleteResults[missing]?.fogCode == .unknownItem)
        await expectNotStored(doomed.recordID, in: db)
    }

    @Test func deletingAMissingRecordIsUnknownItem() async throws {
        await expectFogError(.unknownItem) { try await db.deleteRecord(withID: .init(recordName: "missing")) }
        let r = Record(recordType: "Note")
        try await db.save(r)
        #expect(try await db.deleteRecord(withID: r.recordID) == r.recordID)
        await expectFogError(.unknownItem) { try await db.deleteRecord(withID: r.recordID) }
        try await db.save(RecordZone(zoneName: "Z"))
        await expectFogError(.unknownItem) { try await db.deleteRecord(withID: .init(recordName: "missing", zoneID: .init(zoneName: "Z"))) }
        await expectFogError(.zoneNotFound) { try await db.deleteRecord(withID: .init(recordName: "x", zoneID: .init(zoneName: "NoZone"))) }
    }

    // MARK: - Atomicity

    @Test(arguments: Fault.allCases)
    func nonAtomicRequestsSaveTheGoodRecordsBesideABadOne(fault: Fault) async throws {
        let zoneID = RecordZone.ID(zoneName: "Atomic")
        try await db.save(RecordZone(zoneID: zoneID))
        let bad = try await Self.makeBad(fault, in: db, zoneID: zoneID)
        let before = try? await db.record(for: bad.recordID)
        let good = Self.goodRecords(3, in: zoneID)
        let result = try await db.modifyRecords(saving: good + [bad], deleting: [], atomically: false)
        #expect(result.saveResults[bad.recordID]?.fogCode == fault.expected)
        for r in good {
            #expect(result.saveResults[r.recordID]?.succeeded == true)
            #expect(try await db.record(for: r.recordID)["v"] as? Int == r["v"] as? Int)
        }
        if let before {
            expectSameRecord(try await db.record(for: bad.recordID), before)
        } else {
            await expectNotStored(bad.recordID, in: db)
        }
    }

    @Test(arguments: Fault.allCases)
    func anAtomicRequestInACustomZoneFailsAsAWhole(fault: Fault) async throws {
        let zoneID = RecordZone.ID(zoneName: "Atomic")
        try await db.save(RecordZone(zoneID: zoneID))
        let bad = try await Self.makeBad(fault, in: db, zoneID: zoneID)
        let before = try? await db.record(for: bad.recordID)
        let existing = Record(recordType: "Note", recordID: .init(recordName: "existing", zoneID: zoneID))
        existing["v"] = 100
        let existingStored = try await db.save(existing)
        let good = Self.goodRecords(3, in: zoneID)

        let error = await expectFogError(.partialFailure) {
            try await db.modifyRecords(saving: good + [bad], deleting: [existing.recordID], atomically: true)
        }
        let partial = try #require(error?.partialErrorsByItemID)
        #expect(fogCode(partial[bad.recordID]) == fault.expected)
        for r in good { #expect(fogCode(partial[r.recordID]) == .batchRequestFailed, "\(r.recordID.recordName)") }
        #expect(fogCode(partial[existing.recordID]) == .batchRequestFailed)
        #expect(partial.count == 5)

        // Nothing in the zone changed.
        for r in good { await expectNotStored(r.recordID, in: db) }
        expectSameRecord(try await db.record(for: existing.recordID), existingStored)
        if let before {
            expectSameRecord(try await db.record(for: bad.recordID), before)
        } else {
            await expectNotStored(bad.recordID, in: db)
        }
    }

    @Test func anAtomicRequestWithAMissingDeleteInACustomZoneChangesNothing() async throws {
        let zoneID = RecordZone.ID(zoneName: "Atomic")
        try await db.save(RecordZone(zoneID: zoneID))
        let existing = Record(recordType: "Note", recordID: .init(recordName: "existing", zoneID: zoneID))
        let stored = try await db.save(existing)
        let missing = Record.ID(recordName: "missing", zoneID: zoneID)
        let good = Self.goodRecords(2, in: zoneID)
        let error = await expectFogError(.partialFailure) {
            try await db.modifyRecords(saving: good, deleting: [existing.recordID, missing], atomically: true)
        }
        #expect(fogCode(error?.partialErrorsByItemID?[missing]) == .unknownItem)
        #expect(fogCode(error?.partialErrorsByItemID?[existing.recordID]) == .batchRequestFailed)
        expectSameRecord(try await db.record(for: existing.recordID), stored)
        for r in good { await expectNotStored(r.recordID, in: db) }
    }

    @Test func atomicityIsPerZone() async throws {
        let zoneA = RecordZone.ID(zoneName: "A")
        let zoneB = RecordZone.ID(zoneName: "B")
        _ = try await db.modifyRecordZones(saving: [RecordZone(zoneID: zoneA), RecordZone(zoneID: zoneB)], deleting: [])
        let bad = try await Self.makeBad(.staleTag, in: db, zoneID: zoneA)
        let goodA = Self.goodRecords(2, in: zoneA)
        let goodB = Self.goodRecords(2, in: zoneB)
        let goodDefault = Self.goodRecords(2, in: .default)
        let error = await expectFogError(.partialFailure) {
            try await db.modifyRecords(saving: goodA + goodB + goodDefault + [bad], deleting: [], atomically: true)
        }
        let partial = try #require(error?.partialErrorsByItemID)
        #expect(fogCode(partial[bad.recordID]) == .serverRecordChanged)
        for r in goodA { #expect(fogCode(partial[r.recordID]) == .batchRequestFailed) }
        for r in goodB + goodDefault { #expect(partial[r.recordID] == nil, "\(r.recordID) is in another zone") }
        for r in goodA { await expectNotStored(r.recordID, in: db) }
        for r in goodB + goodDefault { #expect(try await db.record(for: r.recordID)["v"] as? Int == r["v"] as? Int) }
    }

    @Test func anAtomicRequestInTheDefaultZoneSavesTheIndependentRecordsBesideAConflict() async throws {
        // The default zone has no atomic capability: each record is saved on its own.
        let bad = try await Self.makeBad(.staleTag, in: db, zoneID: .default)
        let before = try await db.record(for: bad.recordID)
        let good = Self.goodRecords(3, in: .default)
        let error = await expectFogError(.partialFailure) {
            try await db.modifyRecords(saving: good + [bad], deleting: [], atomically: true)
        }
        let partial = try #require(error?.partialErrorsByItemID)
        #expect(fogCode(partial[bad.recordID]) == .serverRecordChanged)
        #expect(partial.count == 1)
        for r in good { #expect(try await db.record(for: r.recordID)["v"] as? Int == r["v"] as? Int) }
        expectSameRecord(try await db.record(for: bad.recordID), before)
    }

    @Test func aMalformedItemInAnAtomicRequestFailsItsWholeZoneEvenTheDefaultZone() async throws {
        // "with isAtomic = true the client still fails every other record in that
        // zone if one record can't even be sent (e.g. malformed)".
        let bad = try await Self.makeBad(.malformedKey, in: db, zoneID: .default)
        let good = Self.goodRecords(3, in: .default)
        let error = await expectFogError(.partialFailure) {
            try await db.modifyRecords(saving: good + [bad], deleting: [], atomically: true)
        }
        let partial = try #require(error?.partialErrorsByItemID)
        #expect(fogCode(partial[bad.recordID]) == .invalidArguments)
        for r in good {
            #expect(fogCode(partial[r.recordID]) == .batchRequestFailed)
            await expectNotStored(r.recordID, in: db)
        }
    }

    @Test func aNonAtomicRequestDoesNotThrowForItemFailures() async throws {
        let bad = try await Self.makeBad(.malformedKey, in: db, zoneID: .default)
        let result = try await db.modifyRecords(saving: [bad], deleting: [.init(recordName: "missing")], atomically: false)
        #expect(result.saveResults[bad.recordID]?.fogCode == .invalidArguments)
        #expect(result.deleteResults[.init(recordName: "missing")]?.fogCode == .unknownItem)
    }

    // MARK: - Cascades

    @Test(arguments: [false, true])
    func deletingARecordCascadesDeleteSelfReferencesTransitively(customZone: Bool) async throws {
        let zoneID: RecordZone.ID = customZone ? .init(zoneName: "Tree") : .default
        if customZone { try await db.save(RecordZone(zoneID: zoneID)) }
        func id(_ name: String) -> Record.ID { .init(recordName: name, zoneID: zoneID) }
        let a = Record(recordType: "Node", recordID: id("A"))
        let b = Record(recordType: "Node", recordID: id("B"))
        b["owner"] = Record.Reference(record: a, action: .deleteSelf)
        let c = Record(recordType: "Node", recordID: id("C"))
        c["owner"] = Record.Reference(record: b, action: .deleteSelf)
        let d = Record(recordType: "Node", recordID: id("D"))  // through a list
        d["owners"] = [Record.Reference(recordID: id("unrelated"), action: .none), Record.Reference(record: c, action: .deleteSelf)]
        let weak = Record(recordType: "Node", recordID: id("weak"))
        weak["owner"] = Record.Reference(record: a, action: .none)
        let weakChild = Record(recordType: "Node", recordID: id("weakChild"))
        weakChild["owner"] = Record.Reference(record: weak, action: .deleteSelf)
        let bystander = Record(recordType: "Node", recordID: id("bystander"))
        _ = try await db.modifyRecords(saving: [a, b, c, d, weak, weakChild, bystander], deleting: [])

        let result = try await db.modifyRecords(saving: [], deleting: [a.recordID], atomically: false)
        #expect(result.deleteResults.count == 1, "cascaded deletions are not reported")
        #expect(result.deleteResults[a.recordID]?.succeeded == true)
        for gone in [a, b, c, d] { await expectNotStored(gone.recordID, in: db) }
        // A .none reference keeps the dead ID and its record survives.
        let survivor = try await db.record(for: weak.recordID)
        #expect((survivor["owner"] as? Record.Reference)?.recordID == a.recordID)
        #expect(try await db.record(for: weakChild.recordID).recordType == "Node")
        #expect(try await db.record(for: bystander.recordID).recordType == "Node")
    }

    @Test func deleteRecordCascadesToo() async throws {
        let a = Record(recordType: "Node", recordID: .init(recordName: "A"))
        let b = Record(recordType: "Node", recordID: .init(recordName: "B"))
        b["owner"] = Record.Reference(record: a, action: .deleteSelf)
        let c = Record(recordType: "Node", recordID: .init(recordName: "C"))
        c["owner"] = Record.Reference(record: b, action: .deleteSelf)
        _ = try await db.modifyRecords(saving: [a, b, c], deleting: [])
        #expect(try await db.deleteRecord(withID: a.recordID) == a.recordID)
        for gone in [a, b, c] { await expectNotStored(gone.recordID, in: db) }
    }

    @Test func circularDeleteSelfReferencesAreDeletedTogether() async throws {
        let a = Record(recordType: "Node", recordID: .init(recordName: "A"))
        let b = Record(recordType: "Node", recordID: .init(recordName: "B"))
        a["owner"] = Record.Reference(record: b, action: .deleteSelf)
        b["owner"] = Record.Reference(record: a, action: .deleteSelf)
        _ = try await db.modifyRecords(saving: [a, b], deleting: [])
        try await db.deleteRecord(withID: a.recordID)
        await expectNotStored(a.recordID, in: db)
        await expectNotStored(b.recordID, in: db)
    }

    @Test func aRecordWithSeveralOwnersIsDeletedWithAnyOfThem() async throws {
        let p = Record(recordType: "Node", recordID: .init(recordName: "P"))
        let q = Record(recordType: "Node", recordID: .init(recordName: "Q"))
        let child = Record(recordType: "Node", recordID: .init(recordName: "child"))
        child["p"] = Record.Reference(record: p, action: .deleteSelf)
        child["q"] = Record.Reference(record: q, action: .deleteSelf)
        _ = try await db.modifyRecords(saving: [p, q, child], deleting: [])
        try await db.deleteRecord(withID: q.recordID)
        await expectNotStored(child.recordID, in: db)
        #expect(try await db.record(for: p.recordID).recordType == "Node")
    }

    @Test func aReferenceChangedAwayFromDeleteSelfNoLongerCascades() async throws {
        let a = Record(recordType: "Node", recordID: .init(recordName: "A"))
        let other = Record(recordType: "Node", recordID: .init(recordName: "other"))
        let b = Record(recordType: "Node", recordID: .init(recordName: "B"))
        b["owner"] = Record.Reference(record: a, action: .deleteSelf)
        let c = Record(recordType: "Node", recordID: .init(recordName: "C"))
        c["owner"] = Record.Reference(record: a, action: .deleteSelf)
        _ = try await db.modifyRecords(saving: [a, other, b, c], deleting: [])

        let editB = try await db.record(for: b.recordID)
        editB["owner"] = Record.Reference(record: a, action: .none)
        try await db.save(editB)
        let editC = try await db.record(for: c.recordID)
        editC["owner"] = Record.Reference(record: other, action: .deleteSelf)
        try await db.save(editC)

        try await db.deleteRecord(withID: a.recordID)
        #expect(try await db.record(for: b.recordID).recordType == "Node")
        #expect(try await db.record(for: c.recordID).recordType == "Node")
        try await db.deleteRecord(withID: other.recordID)
        await expectNotStored(c.recordID, in: db)
    }

    @Test func aRecordWithADeleteSelfReferenceSurvivesItsRemoval() async throws {
        let a = Record(recordType: "Node", recordID: .init(recordName: "A"))
        let b = Record(recordType: "Node", recordID: .init(recordName: "B"))
        b["owner"] = Record.Reference(record: a, action: .deleteSelf)
        _ = try await db.modifyRecords(saving: [a, b], deleting: [])
        let edit = try await db.record(for: b.recordID)
        edit["owner"] = nil
        try await db.save(edit)
        try await db.deleteRecord(withID: a.recordID)
        #expect(try await db.record(for: b.recordID).allKeys().isEmpty)
    }

    // MARK: - Fetching

    @Test func recordsForIDsReturnsOnlyDesiredKeys() async throws {
        let r = Record(recordType: "Note", recordID: .init(recordName: "r"))
        r["a"] = "A"
        r["b"] = 2
        r["c"] = Data([3])
        let folder = Record(recordType: "Folder", recordID: .init(recordName: "folder"))
        r.setParent(folder)
        _ = try await db.modifyRecords(saving: [folder, r], deleting: [])
        let full = try await db.record(for: r.recordID)

        let some = try #require(try await db.records(for: [r.recordID], desiredKeys: ["a", "c", "notAField"])[r.recordID]?.get())
        #expect(some.allKeys() == ["a", "c"])
        #expect(some["a"] as? String == "A")
        #expect(some["c"] as? Data == Data([3]))
        #expect(some["b"] == nil)
        #expect(some.changedKeys().isEmpty)

        let none = try #require(try await db.records(for: [r.recordID], desiredKeys: [])[r.recordID]?.get())
        #expect(none.allKeys().isEmpty)
        // System fields come with every fetch.
        for partial in [some, none] {
            #expect(partial.recordType == "Note")
            #expect(partial.recordChangeTag == full.recordChangeTag)
            #expect(partial.creationDate == full.creationDate)
            #expect(partial.modificationDate == full.modificationDate)
            #expect(partial.creatorUserRecordID == full.creatorUserRecordID)
            #expect(partial.parent?.recordID == folder.recordID)
        }

        let all = try #require(try await db.records(for: [r.recordID], desiredKeys: nil)[r.recordID]?.get())
        #expect(all.allKeys() == ["a", "b", "c"])
    }

    @Test func recordsForIDsReportsUnknownIDsPerItem() async throws {
        try await db.save(RecordZone(zoneName: "Z"))
        let present = Record(recordType: "Note", recordID: .init(recordName: "present"))
        try await db.save(present)
        let missing = Record.ID(recordName: "missing")
        let missingInZone = Record.ID(recordName: "missing", zoneID: .init(zoneName: "Z"))
        let inMissingZone = Record.ID(recordName: "x", zoneID: .init(zoneName: "NoSuchZone"))
        let results = try await db.records(for: [present.recordID, missing, missingInZone, inMissingZone])
        #expect(results.count == 4)
        #expect(results[present.recordID]?.succeeded == true)
        #expect(results[missing]?.fogCode == .unknownItem)
        #expect(results[missingInZone]?.fogCode == .unknownItem)
        #expect(results[inMissingZone]?.fogCode == .zoneNotFound)
        #expect(try await db.records(for: []).isEmpty)
    }

    @Test func modifyRecordsWithNothingToDoSucceeds() async throws {
        let result = try await db.modifyRecords(saving: [], deleting: [])
        #expect(result.saveResults.isEmpty)
        #expect(result.deleteResults.isEmpty)
    }
}
