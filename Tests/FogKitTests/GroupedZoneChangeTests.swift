import FogKit
import FogKitTesting
import Foundation
import Testing

/// The database change feed under concurrent requests, which the writer groups into shared
/// commits: a zone's entry in the feed moves once for a group (to its last request), and a
/// deletion in the same group still comes after the changes before it.
@Suite struct GroupedZoneChangeTests {
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    @Test func concurrentSavesShowEachZoneOnceAndAConcurrentDeletionAsDeleted() async throws {
        let zones = try await ["A", "B", "C"].asyncMap { try await db.save(RecordZone(zoneName: $0)).zoneID }
        let (_, _, before, _) = try await db.databaseChanges(since: nil)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<48 {
                group.addTask { [db] in
                    _ = try await db.save(SampleRecords.note("n\(i)", in: zones[i % 2], value: i))
                }
                if i == 24 { group.addTask { [db] in _ = try await db.deleteRecordZone(withID: zones[2]) } }
            }
            try await group.waitForAll()
        }
        let (modified, deleted, after, more) = try await db.databaseChanges(since: before)
        #expect(!more)
        #expect(modified.map(\.zoneID.zoneName).sorted() == ["A", "B"])
        #expect(deleted.map(\.zoneID.zoneName) == ["C"])
        // Nothing after the token; one more save shows its zone alone.
        let (none, noDeletions, _, _) = try await db.databaseChanges(since: after)
        #expect(none.isEmpty && noDeletions.isEmpty)
        _ = try await db.save(SampleRecords.note("last", in: zones[1], value: 0))
        let (last, _, _, _) = try await db.databaseChanges(since: after)
        #expect(last.map(\.zoneID.zoneName) == ["B"])
        for zone in zones.prefix(2) {
            let (changes, _, _, _) = try await db.recordZoneChanges(inZoneWith: zone, since: nil)
            #expect(changes.count == 24 + (zone.zoneName == "B" ? 1 : 0))
        }
    }

    @Test func aZoneDeletedAmongConcurrentSavesToItEndsDeletedWhateverTheOrder() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        let (_, _, before, _) = try await db.databaseChanges(since: nil)
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<32 {
                // Saves after the deletion fail (the zone is gone); those before it succeed.
                group.addTask { [db] in _ = try? await db.save(SampleRecords.note("n\(i)", in: zone, value: i)) }
                if i == 16 { group.addTask { [db] in _ = try? await db.deleteRecordZone(withID: zone) } }
            }
        }
        let (modified, deleted, _, _) = try await db.databaseChanges(since: before)
        #expect(modified.isEmpty)
        #expect(deleted.map(\.zoneID.zoneName) == ["Z"])
        await expectFogError(.zoneNotFound) { try await db.recordZoneChanges(inZoneWith: zone, since: nil) }
    }
}
