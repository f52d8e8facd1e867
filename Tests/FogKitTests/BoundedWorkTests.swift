import FogKitTesting
import FogStorageLMDB
import Foundation
import Testing

@testable import FogKit

/// Pruning works in bounded chunks: a request drops at most ``EngineDefaults/pruneBatchSize``
/// tombstones of a zone, or zone deletion events of a database, and the horizons move only
/// past what was dropped. `Docs/Reliability.md` ("Bounded work") has the million-entry runs.
@Suite struct BoundedWorkTests {
    /// A container of `store`'s user that prunes every tombstone older than now.
    private static func pruning(_ store: TestStore) throws -> Container {
        try store.admin.container(user: "alice", configuration: .init(durability: .none, tombstoneRetention: 0))
    }

    @Test func aRequestPrunesAtMostOneBatchOfTombstonesAndTheHorizonFollows() async throws {
        let store = try TestStore()
        let db = store.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        let batch = EngineDefaults.pruneBatchSize
        let names = (0..<batch + 100).map { "n\($0)" }
        for part in stride(from: 0, to: names.count, by: 400) {
            let records = names[part..<min(part + 400, names.count)].map { SampleRecords.note($0, in: zone, value: 1) }
            _ = try await db.modifyRecords(saving: records, deleting: [])
        }
        _ = try await db.save(SampleRecords.note("kept", in: zone, value: 1))
        // Three requests delete them all; the default retention keeps the tombstones.
        var tokens: [ServerChangeToken] = []
        for part in stride(from: 0, to: names.count, by: 400) {
            let ids = names[part..<min(part + 400, names.count)].map { Record.ID(recordName: $0, zoneID: zone) }
            _ = try await db.modifyRecords(saving: [], deleting: ids)
            tokens.append(try await db.recordZoneChanges(inZoneWith: zone, since: nil, resultsLimit: 5_000).changeToken)
        }
        let all = try await db.recordZoneChanges(inZoneWith: zone, since: nil, resultsLimit: 5_000)
        #expect(all.deletions.count == names.count)

        let pruner = try Self.pruning(store)
        defer { pruner.close() }
        let pdb = pruner.privateCloudDatabase
        try await Task.sleep(for: .milliseconds(5))
        _ = try await pdb.save(SampleRecords.note("x", in: zone, value: 1))
        try await pdb.deleteRecord(withID: Record.ID(recordName: "x", zoneID: zone))
        // One batch went, oldest first: the first two requests' tombstones and part of the
        // third's. The rest, and the new one, stay.
        let after = try await db.recordZoneChanges(inZoneWith: zone, since: nil, resultsLimit: 5_000)
        #expect(after.deletions.count == names.count - batch + 1)
        #expect(Set(after.deletions.map(\.recordID.recordName)) == Set(names.suffix(names.count - batch) + ["x"]))
        #expect(after.modificationResultsByID.keys.map(\.recordName) == ["kept"])
        // A token from before the third request missed pruned deletions; one after it did not.
        await expectFogError(.changeTokenExpired) { try await db.recordZoneChanges(inZoneWith: zone, since: tokens[1]) }
        let since = try await db.recordZoneChanges(inZoneWith: zone, since: tokens[2])
        #expect(since.deletions.map(\.recordID.recordName) == ["x"])
        #expect(try store.admin.checkIntegrity().isSound)

        // The next deleting request takes the rest.
        try await Task.sleep(for: .milliseconds(5))
        _ = try await pdb.save(SampleRecords.note("y", in: zone, value: 1))
        try await pdb.deleteRecord(withID: Record.ID(recordName: "y", zoneID: zone))
        let last = try await db.recordZoneChanges(inZoneWith: zone, since: nil)
        #expect(last.deletions.map(\.recordID.recordName) == ["y"])
        await expectFogError(.changeTokenExpired) { try await db.recordZoneChanges(inZoneWith: zone, since: tokens[2]) }
        #expect(try store.admin.checkIntegrity().isSound)
    }

    /// A request that deletes more than half a batch (here by cascade) prunes twice what it
    /// deletes, so such requests cannot let the backlog grow.
    @Test func aRequestThatDeletesManyPrunesTwiceAsMany() async throws {
        let store = try TestStore()
        let db = store.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        let old = (0..<1_600).map { "old\($0)" }
        for part in stride(from: 0, to: old.count, by: 400) {
            _ = try await db.modifyRecords(saving: old[part..<part + 400].map { SampleRecords.note($0, in: zone, value: 1) }, deleting: [])
            _ = try await db.modifyRecords(saving: [], deleting: old[part..<part + 400].map { Record.ID(recordName: $0, zoneID: zone) })
        }
        let parent = SampleRecords.note("parent", in: zone, value: 1)
        try await db.save(parent)
        let children = (0..<600).map { i -> Record in
            let child = SampleRecords.note("child\(i)", in: zone, value: i)
            child["up"] = Record.Reference(record: parent, action: .deleteSelf)
            return child
        }
        for part in stride(from: 0, to: children.count, by: 300) {
            _ = try await db.modifyRecords(saving: Array(children[part..<part + 300]), deleting: [])
        }
        let pruner = try Self.pruning(store)
        defer { pruner.close() }
        try await Task.sleep(for: .milliseconds(5))
        // 601 deletions: 1,202 of the 1,600 old tombstones go, not 1,000.
        try await pruner.privateCloudDatabase.deleteRecord(withID: parent.recordID)
        let after = try await db.recordZoneChanges(inZoneWith: zone, since: nil, resultsLimit: 5_000)
        #expect(after.deletions.count == 1_600 - 1_202 + 601)
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func aDeletedZoneLeavesTheDatabaseLogAfterTheRetentionAndOlderTokensExpire() async throws {
        let store = try TestStore(configuration: .init(durability: .none, tombstoneRetention: 0.01))
        let db = store.privateDatabase
        for name in ["A", "B", "C", "D"] { _ = try await db.save(RecordZone(zoneName: name)) }
        let before = try await db.databaseChanges(since: nil).changeToken
        _ = try await db.deleteRecordZone(withID: RecordZone.ID(zoneName: "A"))
        let sawA = try await db.databaseChanges(since: nil)
        #expect(sawA.deletions.map(\.zoneID.zoneName) == ["A"])
        // C is deleted and created again: its deletion event is replaced, age and all.
        _ = try await db.deleteRecordZone(withID: RecordZone.ID(zoneName: "C"))
        _ = try await db.save(RecordZone(zoneName: "C"))
        #expect(try store.admin.checkIntegrity().isSound)

        try await Task.sleep(for: .milliseconds(30))
        _ = try await db.deleteRecordZone(withID: RecordZone.ID(zoneName: "B"))
        // A's deletion is older than the retention: the deletion of B pruned it.
        let now = try await db.databaseChanges(since: nil)
        #expect(now.deletions.map(\.zoneID.zoneName) == ["B"])
        #expect(Set(now.modifications.map(\.zoneID.zoneName)) == ["C", "D"])
        // A token from before A's deletion has missed it; one that saw it has not.
        await expectFogError(.changeTokenExpired) { try await db.databaseChanges(since: before) }
        let since = try await db.databaseChanges(since: sawA.changeToken)
        #expect(since.deletions.map(\.zoneID.zoneName) == ["B"])
        #expect(Set(since.modifications.map(\.zoneID.zoneName)) == ["C"])
        #expect(try store.admin.checkIntegrity().isSound)

        // With an infinite retention nothing is pruned.
        let keeping = try store.admin.container(user: "alice", configuration: .init(durability: .none, tombstoneRetention: .infinity))
        defer { keeping.close() }
        try await Task.sleep(for: .milliseconds(30))
        _ = try await keeping.privateCloudDatabase.deleteRecordZone(withID: RecordZone.ID(zoneName: "D"))
        let kept = try await db.databaseChanges(since: nil)
        #expect(Set(kept.deletions.map(\.zoneID.zoneName)) == ["B", "D"])
    }
}
