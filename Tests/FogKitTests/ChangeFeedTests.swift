import FogKit
import FogKitTesting
import Foundation
import Testing

/// Zone and database change feeds: tokens, pages, tombstones, expiry, and a randomized
/// sync of several consumers against a store under random writes.
@Suite struct ChangeFeedTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    /// Reads every page of a zone's changes since `token` into `mirror`.
    private func sync(
        _ database: Database, zone: RecordZone.ID, token: inout ServerChangeToken?, mirror: inout [String: Int], pageSize: Int
    ) async throws {
        while true {
            let page = try await database.recordZoneChanges(inZoneWith: zone, since: token, resultsLimit: pageSize)
            #expect(page.modificationResultsByID.count + page.deletions.count <= pageSize)
            for (id, result) in page.modificationResultsByID {
                mirror[id.recordName] = try result.get().record["v"] as? Int
            }
            for deletion in page.deletions {
                #expect(deletion.recordType == "Note")
                mirror[deletion.recordID.recordName] = nil
            }
            token = page.changeToken
            if !page.moreComing { return }
        }
    }

    @Test func aNewZoneFeedReturnsEverySavedRecordOnceAndAnEmptyPageAfterTheToken() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        _ = try await db.modifyRecords(saving: (0..<5).map { SampleRecords.note("n\($0)", in: zone, value: $0) }, deleting: [])
        // Saved twice: still once in the feed, at its latest state.
        let again = try await db.record(for: Record.ID(recordName: "n2", zoneID: zone))
        again["v"] = 20
        try await db.save(again)

        let first = try await db.recordZoneChanges(inZoneWith: zone, since: nil)
        #expect(first.modificationResultsByID.count == 5)
        #expect(try first.modificationResultsByID[Record.ID(recordName: "n2", zoneID: zone)]?.get().record["v"] as? Int == 20)
        #expect(first.deletions.isEmpty)
        #expect(!first.moreComing)

        let second = try await db.recordZoneChanges(inZoneWith: zone, since: first.changeToken)
        #expect(second.modificationResultsByID.isEmpty && second.deletions.isEmpty && !second.moreComing)

        try await db.deleteRecord(withID: Record.ID(recordName: "n1", zoneID: zone))
        let third = try await db.recordZoneChanges(inZoneWith: zone, since: second.changeToken)
        #expect(third.modificationResultsByID.isEmpty)
        #expect(third.deletions.map(\.recordID.recordName) == ["n1"])
        #expect(third.deletions.first?.recordType == "Note")
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func desiredKeysLimitTheFieldsOfChangedRecords() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        let record = SampleRecords.note("a", in: zone, value: 1)
        record["title"] = "kept"
        try await db.save(record)
        let page = try await db.recordZoneChanges(inZoneWith: zone, since: nil, desiredKeys: ["title"])
        let fetched = try #require(try page.modificationResultsByID[record.recordID]?.get().record)
        #expect(fetched.allKeys() == ["title"])
    }

    @Test func aRecordDeletedAndSavedAgainAppearsOnlyAsItsNewState() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        try await db.save(SampleRecords.note("x", in: zone, value: 1))
        let token = try await db.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        try await db.deleteRecord(withID: Record.ID(recordName: "x", zoneID: zone))
        try await db.save(SampleRecords.note("x", in: zone, value: 2))
        let page = try await db.recordZoneChanges(inZoneWith: zone, since: token)
        #expect(page.deletions.isEmpty)
        #expect(try page.modificationResultsByID[Record.ID(recordName: "x", zoneID: zone)]?.get().record["v"] as? Int == 2)
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func corruptAndMismatchedTokensAreInvalidArguments() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        let zoneToken = try await db.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        let databaseToken = try await db.databaseChanges(since: nil).changeToken

        var flipped = zoneToken.data
        flipped[flipped.count / 2] ^= 0x40
        await expectFogError(.invalidArguments) {
            try await db.recordZoneChanges(inZoneWith: zone, since: ServerChangeToken(data: flipped))
        }
        await expectFogError(.invalidArguments) { try await db.recordZoneChanges(inZoneWith: zone, since: ServerChangeToken(data: Data())) }
        await expectFogError(.invalidArguments) {
            try await db.recordZoneChanges(inZoneWith: zone, since: ServerChangeToken(data: Data(repeating: 7, count: 64)))
        }
        await expectFogError(.invalidArguments) { try await db.recordZoneChanges(inZoneWith: zone, since: databaseToken) }
        await expectFogError(.invalidArguments) { try await db.databaseChanges(since: zoneToken) }
        var rng = SplitMix64(seed: 5)
        for _ in 0..<200 {
            var bytes = zoneToken.data
            let count = Int.random(in: 1...4, using: &rng)
            for _ in 0..<count { bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            if bytes == zoneToken.data { continue }
            await expectFogError(.invalidArguments) {
                try await db.recordZoneChanges(inZoneWith: zone, since: ServerChangeToken(data: bytes))
            }
        }
        // A token survives Codable.
        let decoded = try JSONDecoder().decode(ServerChangeToken.self, from: JSONEncoder().encode(zoneToken))
        #expect(decoded == zoneToken)
        _ = try await db.recordZoneChanges(inZoneWith: zone, since: decoded)
    }

    @Test func onlyCustomZonesHaveFeedsUnlessEveryZoneIsAsked() async throws {
        try await db.save(SampleRecords.note("d", in: .default, value: 1))
        await expectFogError(.invalidArguments) { try await db.recordZoneChanges(inZoneWith: .default, since: nil) }
        await expectFogError(.invalidArguments) { try await store.publicDatabase.databaseChanges(since: nil) }
        await expectFogError(.zoneNotFound) { try await db.recordZoneChanges(inZoneWith: RecordZone.ID(zoneName: "Missing"), since: nil) }
        // The private database feed leaves the default zone out.
        let zones = try await db.databaseChanges(since: nil)
        #expect(zones.modifications.isEmpty)

        let everything = try Container(
            identifier: "iCloud.test", store: store.location, user: "alice",
            configuration: .init(durability: .none, changeFeeds: .everyZone))
        defer { everything.close() }
        let all = try await everything.privateCloudDatabase.recordZoneChanges(inZoneWith: .default, since: nil)
        // The note, and the user record the container made when alice first opened it.
        #expect(all.modificationResultsByID.count == 2)
        #expect(all.modificationResultsByID[Record.ID(recordName: "d")] != nil)
        let dbChanges = try await everything.privateCloudDatabase.databaseChanges(since: nil)
        #expect(dbChanges.modifications.map(\.zoneID.zoneName) == [RecordZone.ID.defaultZoneName])
        try await everything.publicCloudDatabase.save(SampleRecords.note("p", in: .default, value: 3))
        let publicChanges = try await everything.publicCloudDatabase.recordZoneChanges(inZoneWith: .default, since: nil)
        #expect(publicChanges.modificationResultsByID[Record.ID(recordName: "p")] != nil)
    }

    @Test func theDatabaseFeedReportsZoneCreationChangeDeletionRecreationAndPurge() async throws {
        let a = try await db.save(RecordZone(zoneName: "A")).zoneID
        let b = try await db.save(RecordZone(zoneName: "B")).zoneID
        let start = try await db.databaseChanges(since: nil)
        #expect(Set(start.modifications.map(\.zoneID.zoneName)) == ["A", "B"])
        #expect(start.deletions.isEmpty)

        // Nothing since; then a record change in A reports A alone.
        let quiet = try await db.databaseChanges(since: start.changeToken)
        #expect(quiet.modifications.isEmpty && quiet.deletions.isEmpty)
        try await db.save(SampleRecords.note("r", in: a, value: 1))
        let changedA = try await db.databaseChanges(since: quiet.changeToken)
        #expect(changedA.modifications.map(\.zoneID.zoneName) == ["A"])

        let zoneTokenA = try await db.recordZoneChanges(inZoneWith: a, since: nil).changeToken
        try await db.deleteRecordZone(withID: a)
        let deleted = try await db.databaseChanges(since: changedA.changeToken)
        #expect(deleted.modifications.isEmpty)
        #expect(deleted.deletions.map(\.zoneID.zoneName) == ["A"])
        #expect(deleted.deletions.first?.reason == .deleted)
        await expectFogError(.zoneNotFound) { try await db.recordZoneChanges(inZoneWith: a, since: zoneTokenA) }

        // Recreated: a modification, and the old zone token has expired.
        try await db.save(RecordZone(zoneName: "A"))
        let recreated = try await db.databaseChanges(since: deleted.changeToken)
        #expect(recreated.modifications.map(\.zoneID.zoneName) == ["A"])
        #expect(recreated.deletions.isEmpty)
        await expectFogError(.changeTokenExpired) { try await db.recordZoneChanges(inZoneWith: a, since: zoneTokenA) }
        // Seen from the start, A appears once, as changed.
        let fromStart = try await db.databaseChanges(since: nil)
        #expect(fromStart.modifications.map(\.zoneID.zoneName).sorted() == ["A", "B"])

        try await db.purgeRecordZone(withID: b)
        let purged = try await db.databaseChanges(since: recreated.changeToken)
        #expect(purged.deletions.map(\.zoneID.zoneName) == ["B"])
        #expect(purged.deletions.first?.reason == .purged)

        // The operation reports purges through their own block.
        let operation = FetchDatabaseChangesOperation(previousServerChangeToken: recreated.changeToken)
        let seen = Locked<[String]>([])
        operation.recordZoneWithIDWasPurgedBlock = { seen.append("purged \($0.zoneName)") }
        operation.recordZoneWithIDWasDeletedBlock = { seen.append("deleted \($0.zoneName)") }
        operation.recordZoneWithIDChangedBlock = { seen.append("changed \($0.zoneName)") }
        try await run(operation, on: db) { done in operation.fetchDatabaseChangesResultBlock = { done($0.map { _ in () }) } }
        #expect(seen.value == ["purged B"])
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func databaseFeedPagesWithSmallLimits() async throws {
        for i in 0..<7 { try await db.save(RecordZone(zoneName: "Z\(i)")) }
        var token: ServerChangeToken?
        var names: [String] = []
        var pages = 0
        while true {
            let page = try await db.databaseChanges(since: token, resultsLimit: 2)
            names += page.modifications.map(\.zoneID.zoneName)
            token = page.changeToken
            pages += 1
            if !page.moreComing { break }
        }
        #expect(names == (0..<7).map { "Z\($0)" })
        #expect(pages == 4)

        let operation = FetchDatabaseChangesOperation()
        operation.resultsLimit = 3
        let seen = Locked<[String]>([])
        let updates = Locked<Int>(0)
        operation.recordZoneWithIDChangedBlock = { seen.append($0.zoneName) }
        operation.changeTokenUpdatedBlock = { _ in updates.mutate { $0 += 1 } }
        try await run(operation, on: db) { done in operation.fetchDatabaseChangesResultBlock = { done($0.map { _ in () }) } }
        #expect(seen.value == (0..<7).map { "Z\($0)" })
        #expect(updates.value == 2)
    }

    @Test func aBackupIsANewIncarnationSoOldTokensExpire() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        try await db.save(SampleRecords.note("a", in: zone, value: 1))
        let zoneToken = try await db.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        let databaseToken = try await db.databaseChanges(since: nil).changeToken

        let copy = try TemporaryDirectory()
        try store.admin.backup(to: copy.url)
        let restoredAdmin = try copy.openAdministrator()
        defer { restoredAdmin.close() }
        let restored = try restoredAdmin.container(user: "alice")
        defer { restored.close() }
        let rdb = restored.privateCloudDatabase
        await expectFogError(.changeTokenExpired) { try await rdb.recordZoneChanges(inZoneWith: zone, since: zoneToken) }
        await expectFogError(.changeTokenExpired) { try await rdb.databaseChanges(since: databaseToken) }
        // From nil the copy has everything.
        let all = try await rdb.recordZoneChanges(inZoneWith: zone, since: nil)
        #expect(all.modificationResultsByID.count == 1)
        #expect(try restoredAdmin.checkIntegrity().isSound)
        // The original's tokens still work on the original.
        _ = try await db.recordZoneChanges(inZoneWith: zone, since: zoneToken)
    }

    @Test func prunedTombstonesExpireOlderTokens() async throws {
        let store = try TestStore(configuration: .init(durability: .none, tombstoneRetention: 0))
        let db = store.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        _ = try await db.modifyRecords(saving: (0..<3).map { SampleRecords.note("n\($0)", in: zone, value: $0) }, deleting: [])
        let before = try await db.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        try await db.deleteRecord(withID: Record.ID(recordName: "n0", zoneID: zone))
        try await Task.sleep(for: .milliseconds(5))
        try await db.deleteRecord(withID: Record.ID(recordName: "n1", zoneID: zone))
        // n0's tombstone is gone, so a token from before it cannot see that deletion.
        await expectFogError(.changeTokenExpired) { try await db.recordZoneChanges(inZoneWith: zone, since: before) }
        let fresh = try await db.recordZoneChanges(inZoneWith: zone, since: nil)
        #expect(fresh.modificationResultsByID.keys.map(\.recordName) == ["n2"])
        #expect(fresh.deletions.map(\.recordID.recordName) == ["n1"])
        _ = try await db.recordZoneChanges(inZoneWith: zone, since: fresh.changeToken)
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func theOperationPagesZonesAndEchoesTheClientChangeTokenData() async throws {
        let a = try await db.save(RecordZone(zoneName: "A")).zoneID
        let b = try await db.save(RecordZone(zoneName: "B")).zoneID
        let save = ModifyRecordsOperation(
            recordsToSave: (0..<5).map { SampleRecords.note("a\($0)", in: a, value: $0) } + [SampleRecords.note("b0", in: b, value: 9)],
            recordIDsToDelete: nil)
        save.clientChangeTokenData = Data("client-1".utf8)
        try await run(save, on: db) { done in save.modifyRecordsResultBlock = { done($0) } }

        let operation = FetchRecordZoneChangesOperation(
            recordZoneIDs: [a, b], configurationsByRecordZoneID: [a: .init(resultsLimit: 2), b: .init(resultsLimit: 2)])
        let events = Locked<[String]>([])
        operation.recordWasChangedBlock = { id, _ in events.append("changed \(id.recordName)") }
        operation.recordZoneChangeTokensUpdatedBlock = { zone, _, data in
            events.append("token \(zone.zoneName) \(String(decoding: data ?? Data(), as: UTF8.self))")
        }
        operation.recordZoneFetchResultBlock = { zone, result in
            let value = try? result.get()
            events.append(
                "done \(zone.zoneName) more=\(value?.moreComing ?? true) \(String(decoding: value?.clientChangeTokenData ?? Data(), as: UTF8.self))"
            )
        }
        try await run(operation, on: db) { done in operation.fetchRecordZoneChangesResultBlock = { done($0) } }
        let e = events.value
        #expect(e.filter { $0.hasPrefix("changed a") }.count == 5)
        #expect(e.filter { $0 == "token A client-1" }.count == 2)
        #expect(e.last == "done B more=false client-1")
        #expect(e.contains("done A more=false client-1"))
        #expect(e.firstIndex(of: "done A more=false client-1")! < e.firstIndex(of: "changed b0")!)

        // One page per zone without fetchAllChanges.
        let single = FetchRecordZoneChangesOperation(recordZoneIDs: [a], configurationsByRecordZoneID: [a: .init(resultsLimit: 2)])
        single.fetchAllChanges = false
        let more = Locked<[Bool]>([])
        let count = Locked<Int>(0)
        single.recordWasChangedBlock = { _, _ in count.mutate { $0 += 1 } }
        single.recordZoneFetchResultBlock = { _, result in more.append((try? result.get().moreComing) ?? false) }
        try await run(single, on: db) { done in single.fetchRecordZoneChangesResultBlock = { done($0) } }
        #expect(count.value == 2)
        #expect(more.value == [true])

        // A missing zone fails that zone and the operation with partialFailure.
        let missing = FetchRecordZoneChangesOperation(recordZoneIDs: [RecordZone.ID(zoneName: "Nope"), a])
        let results = Locked<[String]>([])
        missing.recordZoneFetchResultBlock = { zone, result in
            results.append("\(zone.zoneName) \(fogCode(result.failureError).map { "\($0)" } ?? "ok")")
        }
        await #expect(throws: FogError.self) {
            try await run(missing, on: db) { done in missing.fetchRecordZoneChangesResultBlock = { done($0) } }
        }
        #expect(results.value == ["Nope zoneNotFound", "A ok"])
    }

    /// Thousands of random saves and deletes across zones while consumers sync from their
    /// tokens at random moments, with small pages, through the convenience API and the
    /// operations; at the end every consumer's mirror equals the store.
    @Test(arguments: [UInt64(1), 2, 3])
    func consumersThatSyncAtRandomMomentsEndWithTheStoresContent(seed: UInt64) async throws {
        var rng = SplitMix64(seed: seed)
        let zones = try await (0..<3).asyncMap { try await db.save(RecordZone(zoneName: "Z\($0)")).zoneID }
        var model: [RecordZone.ID: [String: Int]] = Dictionary(uniqueKeysWithValues: zones.map { ($0, [:]) })

        struct Consumer {
            var databaseToken: ServerChangeToken?
            var tokens: [RecordZone.ID: ServerChangeToken?] = [:]
            var mirror: [RecordZone.ID: [String: Int]] = [:]
        }
        var consumers = [Consumer](repeating: Consumer(), count: 3)

        func syncConsumer(_ i: Int, _ rng: inout SplitMix64) async throws {
            // Which zones changed, from the database feed, then each zone's changes.
            var changed: Set<RecordZone.ID> = []
            var token = consumers[i].databaseToken
            while true {
                let page = try await db.databaseChanges(since: token, resultsLimit: Int.random(in: 1...3, using: &rng))
                changed.formUnion(page.modifications.map(\.zoneID))
                token = page.changeToken
                if !page.moreComing { break }
            }
            consumers[i].databaseToken = token
            for zone in changed.sorted(by: { $0.zoneName < $1.zoneName }) {
                var zoneToken = consumers[i].tokens[zone] ?? nil
                var mirror = consumers[i].mirror[zone] ?? [:]
                if Bool.random(using: &rng) {
                    try await sync(db, zone: zone, token: &zoneToken, mirror: &mirror, pageSize: Int.random(in: 1...7, using: &rng))
                } else {
                    let operation = FetchRecordZoneChangesOperation(
                        recordZoneIDs: [zone],
                        configurationsByRecordZoneID: [
                            zone: .init(previousServerChangeToken: zoneToken, resultsLimit: Int.random(in: 1...7, using: &rng))
                        ])
                    let box = Locked<(mirror: [String: Int], token: ServerChangeToken?)>((mirror, zoneToken))
                    operation.recordWasChangedBlock = { id, result in
                        box.mutate { $0.mirror[id.recordName] = (try? result.get())?["v"] as? Int }
                    }
                    operation.recordWithIDWasDeletedBlock = { id, _ in box.mutate { $0.mirror[id.recordName] = nil } }
                    operation.recordZoneFetchResultBlock = { _, result in
                        if let value = try? result.get() { box.mutate { $0.token = value.serverChangeToken } }
                    }
                    try await run(operation, on: db) { done in operation.fetchRecordZoneChangesResultBlock = { done($0) } }
                    (mirror, zoneToken) = box.value
                }
                consumers[i].tokens[zone] = zoneToken
                consumers[i].mirror[zone] = mirror
            }
        }

        var nextName = 0
        var deletedNames: [RecordZone.ID: [String]] = [:]
        for _ in 0..<600 {
            let zone = zones.randomElement(using: &rng)!
            var saves: [Record] = []
            var deletes: [Record.ID] = []
            var touched: Set<String> = []
            for _ in 0..<Int.random(in: 1...5, using: &rng) {
                let existing = model[zone]!.keys.filter { !touched.contains($0) }
                let roll = Int.random(in: 0..<10, using: &rng)
                if roll < 4 || existing.isEmpty {
                    // A new record, sometimes reusing a deleted record's name.
                    let name: String
                    if roll == 0, let reused = deletedNames[zone]?.popLast(), !touched.contains(reused), model[zone]![reused] == nil {
                        name = reused
                    } else {
                        nextName += 1
                        name = "r\(nextName)"
                    }
                    touched.insert(name)
                    saves.append(SampleRecords.note(name, in: zone, value: Int.random(in: 0..<1000, using: &rng)))
                } else if roll < 7 {
                    let name = existing.sorted().randomElement(using: &rng)!
                    touched.insert(name)
                    let record = SampleRecords.note(name, in: zone, value: Int.random(in: 0..<1000, using: &rng))
                    saves.append(record)
                } else {
                    let name = existing.sorted().randomElement(using: &rng)!
                    touched.insert(name)
                    deletes.append(Record.ID(recordName: name, zoneID: zone))
                }
            }
            // Updates overwrite whatever is stored (allKeys policy, no change tags needed).
            let (saveResults, deleteResults) = try await db.modifyRecords(saving: saves, deleting: deletes, savePolicy: .allKeys)
            for record in saves {
                _ = try saveResults[record.recordID]!.get()
                model[zone]![record.recordID.recordName] = record["v"] as? Int
            }
            for id in deletes {
                try deleteResults[id]!.get()
                model[zone]![id.recordName] = nil
                deletedNames[zone, default: []].append(id.recordName)
            }
            if Int.random(in: 0..<12, using: &rng) == 0 {
                try await syncConsumer(Int.random(in: 0..<consumers.count, using: &rng), &rng)
            }
        }
        for i in consumers.indices {
            try await syncConsumer(i, &rng)
            for zone in zones {
                #expect((consumers[i].mirror[zone] ?? [:]) == model[zone]!, "consumer \(i), zone \(zone.zoneName)")
            }
        }
        // And the model is the store: a fresh sync from nil sees exactly it.
        for zone in zones {
            var token: ServerChangeToken?
            var mirror: [String: Int] = [:]
            try await sync(db, zone: zone, token: &token, mirror: &mirror, pageSize: 50)
            #expect(mirror == model[zone]!)
        }
        #expect(try store.admin.checkIntegrity().isSound)
    }

    /// Runs an operation on `database` and waits for the result its final block reports.
    private func run(
        _ operation: DatabaseOperation, on database: Database, _ install: (@escaping @Sendable (Result<Void, any Error>) -> Void) -> Void
    ) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            install { result in continuation.resume(with: result) }
            database.add(operation)
        }
    }
}

/// A value shared with operation callbacks.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}

extension Locked {
    func append<Element>(_ element: Element) where Value == [Element] { mutate { $0.append(element) } }
}

extension Result {
    /// The error of a failure.
    var failureError: Failure? {
        if case .failure(let e) = self { return e }
        return nil
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}

/// Regressions found in review.
@Suite struct ChangeFeedEdgeTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    /// A page can end inside one commit's entries; pruning that commit's later tombstones
    /// must expire the token rather than skip them.
    @Test func aTokenInsideAPrunedCommitExpires() async throws {
        let store = try TestStore(configuration: .init(durability: .none, tombstoneRetention: 0))
        let db = store.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        _ = try await db.modifyRecords(saving: ["a", "b", "c", "d"].map { SampleRecords.note($0, in: zone, value: 1) }, deleting: [])
        let all = try await db.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        _ = try await db.modifyRecords(saving: [], deleting: ["a", "b", "c"].map { Record.ID(recordName: $0, zoneID: zone) })
        let partial = try await db.recordZoneChanges(inZoneWith: zone, since: all, resultsLimit: 1)
        #expect(partial.deletions.count == 1 && partial.moreComing)
        try await Task.sleep(for: .milliseconds(5))
        try await db.deleteRecord(withID: Record.ID(recordName: "d", zoneID: zone))
        await expectFogError(.changeTokenExpired) { try await db.recordZoneChanges(inZoneWith: zone, since: partial.changeToken) }
    }

    @Test func aTokenFromBeforeTheDefaultZoneExistedSeesEverything() async throws {
        // Nobody has written yet: the public default zone does not exist.
        let store = try TestStore(user: nil, configuration: .init(durability: .none, changeFeeds: .everyZone))
        let nobody = store.container
        let empty = try await nobody.publicCloudDatabase.recordZoneChanges(inZoneWith: .default, since: nil)
        #expect(empty.modificationResultsByID.isEmpty)
        // alice's first visit creates it, with her user record.
        _ = try store.container(user: "alice")
        let page = try await nobody.publicCloudDatabase.recordZoneChanges(inZoneWith: .default, since: empty.changeToken)
        #expect(page.modificationResultsByID.values.compactMap { try? $0.get().record.recordType } == ["Users"])
    }

    @Test func aTokenOfAnotherZoneOrDatabaseIsInvalidArguments() async throws {
        let a = try await db.save(RecordZone(zoneName: "A")).zoneID
        let b = try await db.save(RecordZone(zoneName: "B")).zoneID
        let tokenA = try await db.recordZoneChanges(inZoneWith: a, since: nil).changeToken
        await expectFogError(.invalidArguments) { try await db.recordZoneChanges(inZoneWith: b, since: tokenA) }
        let bob = try store.container(user: "bob")
        let aliceDatabaseToken = try await db.databaseChanges(since: nil).changeToken
        await expectFogError(.invalidArguments) { try await bob.privateCloudDatabase.databaseChanges(since: aliceDatabaseToken) }
        await expectFogError(.invalidArguments) { try await db.recordZoneChanges(inZoneWith: a, since: nil, resultsLimit: -1) }
        await expectFogError(.invalidArguments) { try await db.databaseChanges(since: nil, resultsLimit: -1) }
    }

    @Test func aNegativeTombstoneRetentionIsRefused() throws {
        let directory = try TemporaryDirectory()
        #expect(throws: FogError.self) {
            try Container(identifier: "iCloud.test", directory: directory.url, user: "alice", configuration: .init(tombstoneRetention: -1))
        }
    }
}

@Suite struct ErrorPatternTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore

    init() throws { store = try TestStore() }

    @Test func catchMatchesACodeAsWithCKError() async throws {
        var matched = false
        do {
            _ = try await store.privateDatabase.record(for: Record.ID(recordName: "missing"))
        } catch FogError.zoneNotFound {
            Issue.record("wrong code matched")
        } catch FogError.unknownItem {
            matched = true
        }
        #expect(matched)
    }
}
