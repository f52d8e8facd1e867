import FogKit
import FogKitTesting
import FogStorage
import FogStorageLMDB
import Foundation
import Synchronization
import Testing

/// CloudKit's error codes that FogKit produces by its own behaviour, each reached through
/// the public API as an app reaches it: the code, where it is placed (the whole request, or
/// one item inside `partialFailure`), and the user-info keys CloudKit code reads. The table
/// in `Docs/CloudKitDifferences.md` ("Errors") names the test of every code.
@Suite struct ErrorCodeTests {
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    func note(_ name: String, _ zone: RecordZone.ID = .default, text: String = "") -> Record {
        let record = Record(recordType: "Note", recordID: Record.ID(recordName: name, zoneID: zone))
        record["text"] = text
        return record
    }

    /// A store whose users and public database have quotas.
    func quotaStore(user: Int? = nil, public: Int? = nil) throws -> TestStore {
        var configuration = Container.Configuration(durability: .none)
        configuration.userStorageQuota = user
        configuration.publicStorageQuota = `public`
        return try TestStore(configuration: configuration)
    }

    // MARK: quotaExceeded (25)

    /// A save that would take the user past their quota fails as a whole request with
    /// `quotaExceeded`, stores nothing, and says what and where; saves under the quota and
    /// deletes go through.
    @Test func quotaExceededWhenASaveWouldPassTheUsersQuota() async throws {
        let store = try quotaStore(user: 6_000)
        let db = store.privateDatabase
        _ = try await db.save(note("a", text: String(repeating: "x", count: 2_000)))
        _ = try await db.save(note("b", text: String(repeating: "y", count: 2_000)))
        let big = note("c", text: String(repeating: "z", count: 2_000))
        let error = await expectFogError(.quotaExceeded) { try await db.save(big) }
        #expect(error?.message.contains("quota") == true)
        #expect((error?.userInfo[ServerErrorDescriptionKey] as? String)?.contains("quota") == true)
        #expect(error?.userInfo[PartialErrorsByItemIDKey] == nil)
        await expectNotStored(big.recordID, in: db)
        // Freeing storage goes through, and then the save fits.
        _ = try await db.deleteRecord(withID: Record.ID(recordName: "a"))
        _ = try await db.save(big)
        #expect(try await db.record(for: big.recordID)["text"] as? String == String(repeating: "z", count: 2_000))
    }

    /// A batch over the quota fails whole, even when atomic is off: no record of it is
    /// stored, and every per-record block of the operation gets `quotaExceeded`, as CloudKit
    /// reports whole-request errors.
    @Test func quotaExceededFailsTheWholeBatchAndEveryItemBlock() async throws {
        let store = try quotaStore(user: 5_000)
        let db = store.privateDatabase
        let records = (0..<4).map { note("n\($0)", text: String(repeating: "q", count: 1_500)) }
        let codes = Mutex<[Record.ID: FogError.Code]>([:])
        let final = Mutex<FogError.Code?>(nil)
        let op = ModifyRecordsOperation(recordsToSave: records)
        op.isAtomic = false
        op.perRecordSaveBlock = { id, result in codes.withLock { $0[id] = result.fogCode } }
        op.modifyRecordsResultBlock = { result in final.withLock { $0 = result.fogCode } }
        await db.run(op)
        #expect(final.withLock { $0 } == .quotaExceeded)
        #expect(codes.withLock { $0 } == Dictionary(uniqueKeysWithValues: records.map { ($0.recordID, FogError.Code.quotaExceeded) }))
        for record in records { await expectNotStored(record.recordID, in: db) }
    }

    /// Assets count against the quota with their file's size.
    @Test func quotaCountsAssetBytes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.url.appendingPathComponent("photo.bin")
        try Data(repeating: 7, count: 20_000).write(to: file)
        let store = try quotaStore(user: 15_000)
        let record = note("photo")
        record["image"] = Asset(fileURL: file)
        await expectFogError(.quotaExceeded) { try await store.privateDatabase.save(record) }
        await expectNotStored(record.recordID, in: store.privateDatabase)
        let roomy = try quotaStore(user: 25_000)
        let again = note("photo")
        again["image"] = Asset(fileURL: file)
        _ = try await roomy.privateDatabase.save(again)
    }

    /// Deleting a zone gives its records' storage back.
    @Test func deletingAZoneFreesItsStorage() async throws {
        let store = try quotaStore(user: 5_000)
        let db = store.privateDatabase
        let zone = RecordZone.ID(zoneName: "Big")
        _ = try await db.save(RecordZone(zoneID: zone))
        _ = try await db.save(note("a", zone, text: String(repeating: "x", count: 3_000)))
        await expectFogError(.quotaExceeded) { try await db.save(note("b", text: String(repeating: "y", count: 3_000))) }
        _ = try await db.deleteRecordZone(withID: zone)
        _ = try await db.save(note("b", text: String(repeating: "y", count: 3_000)))
    }

    /// Each user has their own quota; the public database has the container's.
    @Test func quotasArePerUserAndPublicDatabase() async throws {
        let store = try quotaStore(user: 4_000, public: 3_000)
        _ = try await store.privateDatabase.save(note("a", text: String(repeating: "x", count: 2_500)))
        let bob = try store.container(user: "bob")
        _ = try await bob.privateCloudDatabase.save(note("a", text: String(repeating: "x", count: 2_500)))
        _ = try await store.publicDatabase.save(note("p", text: String(repeating: "p", count: 2_000)))
        await expectFogError(.quotaExceeded) {
            try await bob.publicCloudDatabase.save(note("q", text: String(repeating: "p", count: 2_000)))
        }
        await expectFogError(.quotaExceeded) {
            try await store.privateDatabase.save(note("b", text: String(repeating: "x", count: 2_500)))
        }
    }

    /// A store written before usage was counted (no counters in `meta`) is counted when it
    /// is opened, so its quota holds from the first save.
    @Test func aStoreWithoutCountsIsCountedWhenOpened() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let container = try directory.open()
            let records = (0..<4).map { note("old\($0)", text: String(repeating: "o", count: 1_000)) }
            _ = try await container.privateCloudDatabase.modifyRecords(saving: records, deleting: [])
            container.close()
        }
        // Remove every usage key, as a store made before the counters has none.
        let environment = try LMDBStore.open(directory: directory.url, configuration: .init(tables: ["meta"]))
        try environment.writeAndWait { txn throws in
            let meta = environment.table(named: "meta")
            var keys: [[UInt8]] = []
            try txn.scan(meta) { key, _ in
                if String(decoding: key, as: UTF8.self).contains("usage") { keys.append(Array(key)) }
                return true
            }
            #expect(keys.count == 2)  // alice's count and the "counted" mark
            for key in keys { try txn.delete(key, in: meta) }
        }
        environment.close()
        var configuration = Container.Configuration(durability: .none)
        configuration.userStorageQuota = 5_000
        let container = try Container(identifier: "iCloud.test", directory: directory.url, user: "alice", configuration: configuration)
        defer { container.close() }
        await expectFogError(.quotaExceeded) {
            try await container.privateCloudDatabase.save(note("new", text: String(repeating: "n", count: 1_500)))
        }
        _ = try await container.privateCloudDatabase.save(note("small", text: "fits"))
    }

    /// The usage counters of the store in `directory` (each owner's key → bytes), read
    /// while no container has it open.
    private func usageCounts(in directory: TemporaryDirectory, removing: Bool = false) throws -> [[UInt8]: Int64] {
        let environment = try LMDBStore.open(directory: directory.url, configuration: .init(tables: ["meta"]))
        defer { environment.close() }
        var counts: [[UInt8]: Int64] = [:]
        try environment.writeAndWait { txn throws in
            let meta = environment.table(named: "meta")
            var keys: [[UInt8]] = []
            try txn.scan(meta) { key, value in
                guard String(decoding: key, as: UTF8.self).contains("usage") else { return true }
                keys.append(Array(key))
                if Array(key) != Array("usageCounted".utf8) {
                    counts[Array(key)] = value.reduce(Int64(0)) { $0 << 8 | Int64($1) }
                }
                return true
            }
            if removing { for key in keys { try txn.delete(key, in: meta) } }
        }
        return counts
    }

    /// Updates keep the running count equal to a count of the stored records, whether they
    /// keep, add, replace or remove assets or hold none: the count after the updates is the
    /// one a store without counters gets when it is opened. (The store is counted once
    /// before the updates too, so that the user records sign-in writes, which requests do not
    /// count, are in both.)
    @Test func updatesCountWhatACountOfTheStoredRecordsFinds() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let small = directory.url.appendingPathComponent("small.bin")
        let large = directory.url.appendingPathComponent("large.bin")
        try Data(repeating: 1, count: 1_234).write(to: small)
        try Data(repeating: 2, count: 5_678).write(to: large)
        do {
            let container = try directory.open()
            defer { container.close() }
            let plain = note("plain", text: "no assets")
            let photo = note("photo", text: "one asset")
            photo["image"] = Asset(fileURL: small)
            let album = note("album", text: "a list of assets")
            album["images"] = [Asset(fileURL: small), Asset(fileURL: large)]
            _ = try await container.privateCloudDatabase.modifyRecords(saving: [plain, photo, album], deleting: [])
        }
        _ = try usageCounts(in: directory, removing: true)
        try directory.open().close()
        let before = try usageCounts(in: directory)
        do {
            let container = try directory.open()
            defer { container.close() }
            let db = container.privateCloudDatabase
            func update(_ name: String, _ change: (Record) -> Void) async throws {
                let record = Record(recordType: "Note", recordID: Record.ID(recordName: name))
                change(record)
                _ = try await db.modifyRecords(saving: [record], deleting: [], savePolicy: .changedKeys)
            }
            try await update("plain") { $0["text"] = "still none" }
            try await update("photo") { $0["text"] = "keeps its asset" }
            try await update("photo") { $0["image"] = Asset(fileURL: large) }
            try await update("album") { $0["images"] = [Asset(fileURL: large)] }
            try await update("plain") { $0["image"] = Asset(fileURL: small) }
            try await update("photo") { $0["image"] = nil }
            try await update("photo") { $0["text"] = "none left" }
        }
        let running = try usageCounts(in: directory, removing: true)
        #expect(running != before)
        // Reopened without counters, the store counts its records.
        try directory.open().close()
        let counted = try usageCounts(in: directory)
        #expect(counted == running)
    }

    /// A participant's saves into a shared zone count against the zone owner's storage, as
    /// CloudKit charges shared data to its owner; the participant's own storage is untouched.
    @Test func sharedZoneWritesCountAgainstTheOwner() async throws {
        let store = try quotaStore(user: 6_000)
        let alice = store.container
        let zone = RecordZone.ID(zoneName: "Albums")
        _ = try await alice.privateCloudDatabase.save(RecordZone(zoneID: zone))
        _ = try await store.admin.addUser("bob", emailAddress: "bob@example.com")
        let root = Record(recordType: "Album", recordID: Record.ID(recordName: "holiday", zoneID: zone))
        root["title"] = String(repeating: "a", count: 3_000)
        let share = Share(rootRecord: root)
        let participant = try await alice.shareParticipant(forEmailAddress: "bob@example.com")
        participant.permission = .readWrite
        share.addParticipant(participant)
        let saved = try await alice.privateCloudDatabase.modifyRecords(saving: [root, share], deleting: [])
        let savedShare = try #require(try saved.saveResults[share.recordID]?.get() as? Share)
        let url = try #require(savedShare.url)
        let bob = try store.container(user: "bob")
        _ = try await bob.accept(try await bob.shareMetadata(for: url))

        let owner = RecordZone.ID(zoneName: "Albums", ownerName: try await alice.userRecordID().recordName)
        let photo = Record(recordType: "Photo", recordID: Record.ID(recordName: "day1", zoneID: owner))
        photo.parent = Record.Reference(recordID: Record.ID(recordName: "holiday", zoneID: owner), action: .none)
        photo["caption"] = String(repeating: "p", count: 3_500)
        let error = await expectFogError(.quotaExceeded) { try await bob.sharedCloudDatabase.save(photo) }
        let aliceName = try await alice.userRecordID().recordName
        #expect(error?.message.contains(aliceName) == true)
        // Bob's own storage is his: the same record fits there.
        let own = Record(recordType: "Photo", recordID: Record.ID(recordName: "day1"))
        own["caption"] = String(repeating: "p", count: 3_500)
        _ = try await bob.privateCloudDatabase.save(own)
    }

    /// A development reset deletes every record, and with them every user's usage.
    @Test func aDevelopmentResetFreesEveryonesStorage() async throws {
        let store = try quotaStore(user: 5_000)
        let db = store.privateDatabase
        _ = try await db.save(note("a", text: String(repeating: "x", count: 3_000)))
        await expectFogError(.quotaExceeded) { try await db.save(note("b", text: String(repeating: "y", count: 3_000))) }
        try await store.admin.resetDevelopmentEnvironment()
        _ = try await db.save(note("b", text: String(repeating: "y", count: 3_000)))
    }

    @Test func negativeQuotasAreRefusedAtOpen() throws {
        #expect(throws: FogError.self) { _ = try quotaStore(user: -1) }
        #expect(throws: FogError.self) { _ = try quotaStore(public: -1) }
    }

    // MARK: limitExceeded (27)

    /// More than 400 items, or more than 2 MB of record data, in one request fail the
    /// whole request with `limitExceeded` (CloudKit's advice: split the batch and retry).
    @Test func limitExceededForTooManyItemsOrTooManyBytes() async throws {
        let many = (0..<401).map { note("m\($0)") }
        let error = await expectFogError(.limitExceeded) { try await db.modifyRecords(saving: many, deleting: []) }
        #expect(error?.message.contains("400") == true)
        await expectNotStored(many[0].recordID, in: db)
        // 400 is allowed.
        _ = try await db.modifyRecords(saving: Array(many.prefix(400)), deleting: [])
        let heavy = (0..<3).map { note("h\($0)", text: String(repeating: "h", count: 800_000)) }
        await expectFogError(.limitExceeded) { try await db.modifyRecords(saving: heavy, deleting: []) }
        await expectNotStored(heavy[0].recordID, in: db)
    }

    // MARK: userDeletedZone (28)

    /// After a user's purge of a zone (their deletion of its data), every later use of the
    /// zone answers `userDeletedZone`: its change feed with a token from before, a save into
    /// it (per item), a fetch. A zone deleted through the API answers `zoneNotFound`, and a
    /// purged zone saved again is a zone like any other.
    @Test func userDeletedZoneAfterAPurge() async throws {
        let zone = RecordZone.ID(zoneName: "Journal")
        _ = try await db.save(RecordZone(zoneID: zone))
        _ = try await db.save(note("entry", zone))
        let token = try await db.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        try await db.purgeRecordZone(withID: zone)

        let error = await expectFogError(.userDeletedZone) { try await db.recordZoneChanges(inZoneWith: zone, since: token) }
        #expect(error?.message.contains("Journal") == true)
        await expectFogError(.userDeletedZone) { try await db.record(for: Record.ID(recordName: "entry", zoneID: zone)) }
        let save = await expectFogError(.partialFailure) { try await db.modifyRecords(saving: [note("again", zone)], deleting: []) }
        let byID = save?.userInfo[PartialErrorsByItemIDKey] as? [AnyHashable: any Error]
        #expect(fogCode(byID?[Record.ID(recordName: "again", zoneID: zone)]) == .userDeletedZone)
        await expectFogError(.userDeletedZone) { try await db.recordZone(for: zone) }

        // Saving the zone again ends it.
        _ = try await db.save(RecordZone(zoneID: zone))
        _ = try await db.save(note("again", zone))

        // A deletion through the API is `zoneNotFound`.
        let other = RecordZone.ID(zoneName: "Scratch")
        _ = try await db.save(RecordZone(zoneID: other))
        let otherToken = try await db.recordZoneChanges(inZoneWith: other, since: nil).changeToken
        _ = try await db.deleteRecordZone(withID: other)
        await expectFogError(.zoneNotFound) { try await db.recordZoneChanges(inZoneWith: other, since: otherToken) }
        await expectFogError(.zoneNotFound) { try await db.recordZone(for: other) }
    }

    // MARK: assetFileModified (17)

    /// An asset's file whose size changes while it is copied in fails its record with
    /// `assetFileModified` and leaves no copy. A Linux `/proc` file stands in for a file
    /// written to during the copy: its size reads 0 but it holds bytes.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status")))
    func assetFileModifiedWhenTheFileChangesWhileCopied() async throws {
        let changing = note("changing")
        changing["file"] = Asset(fileURL: URL(fileURLWithPath: "/proc/self/status"))
        let plain = note("plain")
        let result = try await db.modifyRecords(saving: [changing, plain], deleting: [], atomically: false)
        #expect(result.saveResults[changing.recordID]?.fogCode == .assetFileModified)
        #expect(result.saveResults[plain.recordID]?.succeeded == true)
        await expectNotStored(changing.recordID, in: db)
        let assets = store.directory.appendingPathComponent("assets")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: assets.path)) ?? []
        #expect(files.filter { !$0.hasPrefix(".") }.isEmpty)
    }

    // MARK: operationCancelled (20)

    /// A cancelled operation reports `operationCancelled` to each item it did not do and to
    /// its final block; nothing is written.
    @Test func operationCancelledForEveryItemNotDone() async throws {
        let records = (0..<3).map { note("c\($0)") }
        let codes = Mutex<[Record.ID: FogError.Code]>([:])
        let final = Mutex<FogError.Code?>(nil)
        let op = ModifyRecordsOperation(recordsToSave: records)
        op.perRecordSaveBlock = { id, result in codes.withLock { $0[id] = result.fogCode } }
        op.modifyRecordsResultBlock = { result in final.withLock { $0 = result.fogCode } }
        op.cancel()
        await db.run(op)
        #expect(final.withLock { $0 } == .operationCancelled)
        #expect(codes.withLock { $0 } == Dictionary(uniqueKeysWithValues: records.map { ($0.recordID, FogError.Code.operationCancelled) }))
        for record in records { await expectNotStored(record.recordID, in: db) }
    }

    // MARK: referenceViolation (31)

    /// A record whose parent does not exist (and is not saved with it) fails with
    /// `referenceViolation`, inside `partialFailure`; the other records of an atomic zone get
    /// `batchRequestFailed`.
    @Test func referenceViolationForAMissingParent() async throws {
        let zone = RecordZone.ID(zoneName: "Tree")
        _ = try await db.save(RecordZone(zoneID: zone))
        let child = note("child", zone)
        child.parent = Record.Reference(recordID: Record.ID(recordName: "nobody", zoneID: zone), action: .none)
        let sibling = note("sibling", zone)
        let error = await expectFogError(.partialFailure) { try await db.modifyRecords(saving: [child, sibling], deleting: []) }
        let byID = error?.userInfo[PartialErrorsByItemIDKey] as? [AnyHashable: any Error]
        #expect(fogCode(byID?[child.recordID]) == .referenceViolation)
        #expect(fogCode(byID?[sibling.recordID]) == .batchRequestFailed)
        await expectNotStored(sibling.recordID, in: db)
    }

    // MARK: constraintViolation (19)

    /// A unique value taken by another: a user directory email address.
    @Test func constraintViolationForATakenEmailAddress() async throws {
        _ = try await store.admin.addUser("bob", emailAddress: "shared@example.com")
        let error = await expectFogError(.constraintViolation) {
            try await store.admin.addUser("carol", emailAddress: "shared@example.com")
        }
        #expect(error?.message.contains("bob") == true)
        #expect(try store.admin.users()["carol"] == nil)
    }

    // MARK: retry-later codes (6, 7, 23)

    /// The retry-later codes come from the fault plan (FogKit has no service to be down,
    /// throttle or contend), with `retryAfterSeconds` in the typed property and under
    /// ``ErrorRetryAfterKey``; a busy zone fails per item, the others the whole request.
    @Test func retryLaterCodesCarryRetryAfter() async throws {
        for (code, perItem) in [(FogError.Code.serviceUnavailable, false), (.requestRateLimited, false), (.zoneBusy, true)] {
            store.container.faultPlan = FaultPlan([.init(.error(code, retryAfterSeconds: 2.5), requests: [.modifyRecords])])
            let record = note("r-\(code)")
            let error = await expectFogError(perItem ? .partialFailure : code) {
                try await db.modifyRecords(saving: [record], deleting: [])
            }
            let reported = perItem ? (error?.partialErrorsByItemID?[record.recordID] as? FogError) : error
            #expect(reported?.code == code)
            #expect(reported?.retryAfterSeconds == 2.5)
            #expect(reported?.userInfo[ErrorRetryAfterKey] as? Double == 2.5)
            store.container.faultPlan = .none
            await expectNotStored(record.recordID, in: db)
        }
    }
}
