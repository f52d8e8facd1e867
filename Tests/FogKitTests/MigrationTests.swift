import FogKit
import FogStorage
import Foundation
import Testing

/// Opening a store of format version 1 (empty indexes and change logs) brings it to version 2:
/// the change logs are filled, the store is sound, and the feeds and queries work.
@Suite struct MigrationTests {
    private static let tables = ["meta", "zones", "zoneids", "names", "records", "schema", "users", "refs", "indexes", "changes", "dbchanges"]

    @Test func aVersionOneStoreIsMigratedWhenOpened() async throws {
        let directory = TemporaryDirectory()
        var names: Set<String> = []
        do {
            let container = try directory.open()
            let db = container.privateCloudDatabase
            let zone = try await db.save(RecordZone(zoneName: "Old")).zoneID
            let records = (0..<20).map { i -> Record in
                let r = Record(recordType: "Note", recordID: Record.ID(recordName: "n\(i)", zoneID: zone))
                r["n"] = i
                return r
            }
            _ = try await db.modifyRecords(saving: records, deleting: [])
            names = Set(records.map(\.recordID.recordName))
            container.close()
        }
        // Make it a version 1 store: format 1, no change logs (version 1 wrote none).
        do {
            let environment = try Environment.open(directory: directory.url, configuration: .init(tables: Self.tables))
            let meta = environment.table(named: "meta")
            try environment.writeAndWait { txn in
                try txn.put([0, 0, 0, 0, 0, 0, 0, 1], forKey: Array("format".utf8), in: meta)
                try txn.clear(environment.table(named: "changes"))
                try txn.clear(environment.table(named: "dbchanges"))
            }
            environment.close()
        }
        let container = try directory.open()
        defer { container.close() }
        #expect(try container.storeInfo().formatVersion == 2)
        #expect(try container.checkIntegrity().isSound)
        let db = container.privateCloudDatabase
        let zone = RecordZone.ID(zoneName: "Old")
        let changes = try await db.recordZoneChanges(inZoneWith: zone, since: nil)
        #expect(Set(changes.modificationResultsByID.keys.map(\.recordName)) == names)
        let zones = try await db.databaseChanges(since: nil)
        #expect(zones.modifications.map(\.zoneID.zoneName) == ["Old"])
        let query = Query(recordType: "Note", predicate: try QueryPredicate(format: "n >= %@", 10))
        let (matches, _) = try await db.records(matching: query, inZoneWith: zone)
        #expect(matches.count == 10)
    }
}
