import FogKitTesting
import FogStorage
import FogStorageLMDB
import Foundation
import Testing

@testable import FogKit

/// Opening a store of an older format version brings it to the current one. From version 1 (empty
/// indexes and change logs): the change logs are filled. From version 2 (index keys ending
/// with the row id, in a table without duplicates): `indexes` is recreated with sorted
/// duplicates and rebuilt. From version 3 (no `assets` table, asset files under UUID names):
/// the table is created and counts every asset, the UUID names stay. Either way the store is
/// sound and the feeds and queries work.
@Suite struct MigrationTests {
    private static let tables = [
        "meta", "zones", "zoneids", "names", "records", "schema", "users", "refs", "indexes", "changes", "dbchanges",
    ]
    private static let indexLayout: TableLayout = .multiValue(fixedSizeValues: true)

    /// Opens the store's environment as the older versions did: no table layouts, so that
    /// `replaceWithEmpty` makes a single-value table.
    private static func withEnvironment<R>(_ url: URL, _ body: (LMDBStore) throws -> R) throws -> R {
        let environment = try LMDBStore.open(directory: url, configuration: .init(tables: tables))
        defer { environment.close() }
        return try body(environment)
    }

    private static func format(_ environment: LMDBStore) throws -> [UInt8]? {
        try environment.read { txn in try txn.value(forKey: Array("format".utf8), in: environment.table(named: "meta")) }
    }

    /// The index entries as (key, row) pairs, and the layout of the table.
    private static func indexEntries(_ environment: LMDBStore) throws -> (Set<[UInt8]>, TableLayout) {
        let indexes = environment.table(named: "indexes")
        return try environment.read { txn in
            var entries: Set<[UInt8]> = []
            try txn.scan(indexes) { key, value in
                entries.insert(Array(key) + Array(value))
                return true
            }
            return (entries, try txn.layout(of: indexes))
        }
    }

    /// Rewrites a store's `indexes` in the layout of format 2: a table without duplicates whose
    /// keys end with the row id as a tuple element and whose values are empty; and sets the
    /// format to 2. Adds an entry for a row that does not exist, which the rebuild drops.
    private static func rewriteInFormatTwo(_ url: URL) throws {
        try withEnvironment(url) { environment in
            let indexes = environment.table(named: "indexes")
            try environment.writeAloneAndWait { txn throws in
                var keys: [[UInt8]] = []
                try txn.scan(indexes) { key, value in
                    var row = KeyWriter()
                    row.append(Int64(bitPattern: value.reduce(0) { $0 << 8 | UInt64($1) }))
                    keys.append(Array(key) + row.bytes)
                    return true
                }
                #expect(!keys.isEmpty)
                try txn.replaceWithEmpty(indexes)
                for key in keys { try txn.put([], forKey: key, in: indexes) }
                var stale = KeyWriter()
                stale.append(Int64(999_999))
                try txn.put([], forKey: keys[0] + stale.bytes, in: indexes)
                try txn.put([0, 0, 0, 0, 0, 0, 0, 2], forKey: Array("format".utf8), in: environment.table(named: "meta"))
                // Format 2 had no record type ("t") or grant ("g") entries in its catalog.
                for tag in ["t", "g"] {
                    var prefix = KeyWriter()
                    prefix.append(tag)
                    try txn.deleteAll(in: environment.table(named: "schema"), range: .prefix(prefix.bytes))
                }
            }
            #expect(try environment.read { txn in try txn.layout(of: indexes) } == .singleValue)
        }
    }

    @Test func aVersionOneStoreIsMigratedWhenOpened() async throws {
        let directory = try TemporaryDirectory()
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
        // Make it a version 1 store: format 1, no change logs (version 1 wrote none), and an
        // empty `indexes` without duplicates.
        try Self.withEnvironment(directory.url) { environment in
            let meta = environment.table(named: "meta")
            try environment.writeAloneAndWait { txn throws in
                try txn.put([0, 0, 0, 0, 0, 0, 0, 1], forKey: Array("format".utf8), in: meta)
                try txn.clear(environment.table(named: "changes"))
                try txn.clear(environment.table(named: "dbchanges"))
                try txn.replaceWithEmpty(environment.table(named: "indexes"))
            }
        }
        do {
            // A user's container may not migrate the store: only its administrator does.
            await expectFogError(.permissionFailure) { try directory.open() }
            let admin = try directory.openAdministrator()
            defer { admin.close() }
            let container = try admin.container(user: "alice")
            defer { container.close() }
            #expect(try admin.storeInfo().formatVersion == Layout.formatVersion)
            #expect(try admin.checkIntegrity().isSound)
            let db = container.privateCloudDatabase
            let zone = RecordZone.ID(zoneName: "Old")
            let changes = try await db.recordZoneChanges(inZoneWith: zone, since: nil)
            #expect(Set(changes.modificationResultsByID.keys.map(\.recordName)) == names)
            let zones = try await db.databaseChanges(since: nil)
            #expect(zones.modifications.map(\.zoneID.zoneName) == ["Old"])
            // An index declared after the migration is built in the new layout.
            try await admin.setIndexes(["n": [.queryable, .sortable]], ofRecordType: "Note")
            let query = Query(recordType: "Note", predicate: try QueryPredicate(format: "n >= %@", 10))
            let (matches, _) = try await db.records(matching: query, inZoneWith: zone)
            #expect(matches.count == 10)
            #expect(try db.explain(query, inZoneWith: zone).access.contains("index Note.n"))
            #expect(try admin.checkIntegrity().isSound)
        }
        try Self.withEnvironment(directory.url) { environment in
            #expect(try Self.format(environment) == [0, 0, 0, 0, 0, 0, 0, 7])
            let (entries, layout) = try Self.indexEntries(environment)
            #expect(layout == Self.indexLayout)
            #expect(entries.count == 20)
        }
    }

    @Test func aVersionTwoStoreGetsItsIndexesRebuiltWhenOpened() async throws {
        let directory = try TemporaryDirectory()
        var names: [String] = []
        do {
            let admin = try directory.openAdministrator()
            defer { admin.close() }
            let container = try admin.container(user: "alice")
            try await QueryFixture.declareIndexes(admin)
            names = try await QueryFixture.populate(container.privateCloudDatabase, count: 120, seed: 71).map(\.name)
            container.close()
        }
        let before = try Self.withEnvironment(directory.url) { try Self.indexEntries($0).0 }
        try Self.rewriteInFormatTwo(directory.url)
        do {
            let admin = try directory.openAdministrator()
            defer { admin.close() }
            let container = try admin.container(user: "alice")
            defer { container.close() }
            let report = try admin.checkIntegrity()
            #expect(report.isSound, "\(report)")
            // Format 5's record type entries, with CloudKit's default grants.
            let schema = try admin.schema(for: .development)
            #expect(Set(schema.recordTypes.keys) == [QueryFixture.postType, QueryFixture.authorType, "Users"])
            #expect(schema.recordTypes[QueryFixture.postType]?.grants == [.creator: .write, .authenticated: .create, .world: .read])
            try await QueryIndexTests.checkAllShapes(
                container.privateCloudDatabase, container: container, admin: admin, names: names, label: "migrated from format 2")
        }
        try Self.withEnvironment(directory.url) { environment in
            #expect(try Self.format(environment) == [0, 0, 0, 0, 0, 0, 0, 7])
            let (after, layout) = try Self.indexEntries(environment)
            #expect(layout == Self.indexLayout)
            #expect(after == before, "the rebuild writes the entries the saves wrote, and drops the stale one")
        }
    }

    /// The rebuild sorts its entries in chunks written to scratch files and merged; a store
    /// with more entries than one chunk gets exactly the entries its saves wrote, and no
    /// scratch file stays, whether the rebuild fails or succeeds.
    @Test func aVersionTwoStoreOfSeveralRebuildChunksIsRebuiltExactly() async throws {
        let directory = try TemporaryDirectory()
        let recordCount = 400
        do {
            let admin = try directory.openAdministrator()
            defer { admin.close() }
            try await admin.setIndexes(["tags": [.queryable]], ofRecordType: "Tagged")
            let container = try admin.container(user: "alice")
            defer { container.close() }
            let db = container.privateCloudDatabase
            for part in stride(from: 0, to: recordCount, by: 200) {
                let records = (part..<part + 200).map { i -> Record in
                    let r = Record(recordType: "Tagged", recordID: Record.ID(recordName: "r\(i)"))
                    r["tags"] = (0..<50).map { "t\((i * 7 + $0) % 3_000)" }
                    return r
                }
                _ = try await db.modifyRecords(saving: records, deleting: [])
            }
        }
        let before = try Self.withEnvironment(directory.url) { try Self.indexEntries($0).0 }
        #expect(before.count == recordCount * 50)
        #expect(before.count > 1 * Maintenance<LMDBStore>.rebuildChunkSize)
        try Self.rewriteInFormatTwo(directory.url)
        // A scratch folder a crashed migration left behind goes too.
        let stale = directory.url.appendingPathComponent(SortedRuns.folderPrefix + "crashed")
        try FileManager.default.createDirectory(at: stale, withIntermediateDirectories: true)
        func scratch() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(SortedRuns.folderPrefix) }
        }
        // A rebuild that fails after writing a run file (the last record cannot be decoded)
        // leaves the version 2 store and no scratch file.
        let last = try Self.withEnvironment(directory.url) { environment in
            let records = environment.table(named: "records")
            let last = try environment.read { txn in
                var last: ([UInt8], [UInt8])?
                try txn.scan(records, reverse: true) { key, value in
                    last = (Array(key), Array(value))
                    return false
                }
                return last!
            }
            try environment.writeAndWait { txn throws in try txn.put([0xFF, 0xFF, 0xFF], forKey: last.0, in: records) }
            return last
        }
        #expect(throws: FogError.self) { try directory.openAdministrator() }
        #expect(try scratch().isEmpty)
        try Self.withEnvironment(directory.url) { environment in
            #expect(try Self.format(environment) == [0, 0, 0, 0, 0, 0, 0, 2])
            try environment.writeAndWait { txn throws in try txn.put(last.1, forKey: last.0, in: environment.table(named: "records")) }
        }
        do {
            let admin = try directory.openAdministrator()
            defer { admin.close() }
            #expect(try scratch().isEmpty, "the sort's run files are removed")
            let report = try admin.checkIntegrity()
            #expect(report.isSound, "\(report)")
            let container = try admin.container(user: "alice")
            defer { container.close() }
            let query = Query(recordType: "Tagged", predicate: try QueryPredicate(format: "tags CONTAINS %@", "t7"))
            let (matches, _) = try await container.privateCloudDatabase.records(matching: query, resultsLimit: 0)
            #expect(!matches.isEmpty)
        }
        try Self.withEnvironment(directory.url) { environment in
            let (after, layout) = try Self.indexEntries(environment)
            #expect(layout == Self.indexLayout)
            #expect(after == before)
        }
    }

    @Test func aFailedMigrationLeavesTheVersionTwoStoreAsItWas() async throws {
        let directory = try TemporaryDirectory()
        do {
            let admin = try directory.openAdministrator()
            defer { admin.close() }
            let container = try admin.container(user: "alice")
            try await QueryFixture.declareIndexes(admin)
            _ = try await QueryFixture.populate(container.privateCloudDatabase, count: 30, seed: 72)
            container.close()
        }
        try Self.rewriteInFormatTwo(directory.url)
        // A record that cannot be decoded makes the rebuild fail.
        let (stored, corruptRow) = try Self.withEnvironment(directory.url) { environment in
            let records = environment.table(named: "records")
            let last = try environment.read { txn in
                var last: ([UInt8], [UInt8])?
                try txn.scan(records, reverse: true) { key, value in
                    last = (Array(key), Array(value))
                    return false
                }
                return last!
            }
            try environment.writeAndWait { txn throws in try txn.put([0xFF, 0xFF, 0xFF], forKey: last.0, in: records) }
            return (try Self.indexEntries(environment), last)
        }
        #expect(stored.1 == .singleValue)
        #expect(throws: FogError.self) { try directory.openAdministrator() }
        try Self.withEnvironment(directory.url) { environment in
            #expect(try Self.format(environment) == [0, 0, 0, 0, 0, 0, 0, 2])
            let (entries, layout) = try Self.indexEntries(environment)
            #expect(layout == .singleValue, "the rolled-back migration leaves the old table")
            #expect(entries == stored.0)
            // Repaired, the store migrates.
            try environment.writeAndWait { txn throws in
                try txn.put(corruptRow.1, forKey: corruptRow.0, in: environment.table(named: "records"))
            }
        }
        let admin = try directory.openAdministrator()
        defer { admin.close() }
        #expect(try admin.checkIntegrity().isSound)
    }

    /// Version 7's zone logs may keep stale entries; version 6's have none and no compaction
    /// state, so a version 6 store is opened as it is, and its log keeps stale entries from then.
    @Test func aVersionSixStoreOpensAsVersionSevenAndItsLogKeepsStaleEntriesFromThen() async throws {
        let directory = try TemporaryDirectory()
        let zoneID = RecordZone.ID(zoneName: "Notes")
        do {
            let container = try directory.open()
            defer { container.close() }
            _ = try await container.privateCloudDatabase.save(RecordZone(zoneID: zoneID))
            _ = try await container.privateCloudDatabase.modifyRecords(
                saving: (0..<5).map { SampleRecords.note("n\($0)", in: zoneID, value: $0) }, deleting: [])
        }
        // What version 6 wrote for the same saves (one log entry per record, no compaction
        // state), with its version.
        do {
            let environment = try LMDBStore.open(directory: directory.url, configuration: .init(tables: ["meta"]))
            defer { environment.close() }
            try environment.writeAndWait { txn throws in
                try txn.put([0, 0, 0, 0, 0, 0, 0, 6], forKey: Array("format".utf8), in: environment.table(named: "meta"))
            }
        }
        let admin = try directory.openAdministrator()
        defer { admin.close() }
        #expect(try admin.storeInfo().formatVersion == 7)
        let container = try admin.container(user: "alice")
        defer { container.close() }
        let db = container.privateCloudDatabase
        let token = try await db.recordZoneChanges(inZoneWith: zoneID, since: nil).changeToken
        let record = try await db.record(for: Record.ID(recordName: "n1", zoneID: zoneID))
        record["v"] = 10
        try await db.save(record)
        #expect(try await db.recordZoneChanges(inZoneWith: zoneID, since: nil).modificationResultsByID.count == 5)
        let since = try await db.recordZoneChanges(inZoneWith: zoneID, since: token)
        #expect(since.modificationResultsByID.keys.map(\.recordName) == ["n1"])
        #expect(try admin.checkIntegrity().isSound)
    }

    @Test func aVersionFiveStoreGainsTheSubscriptionTables() async throws {
        let directory = try TemporaryDirectory()
        // The tables of version 5 (version 3's and `assets`) and its `meta`.
        do {
            let environment = try LMDBStore.open(
                directory: directory.url,
                configuration: .init(tables: Self.tables + ["assets"], tableLayouts: ["indexes": Self.indexLayout]))
            defer { environment.close() }
            try environment.writeAndWait { txn throws in
                let meta = environment.table(named: "meta")
                try txn.put([0, 0, 0, 0, 0, 0, 0, 5], forKey: Array("format".utf8), in: meta)
                try txn.put(Array(repeating: 7, count: 16), forKey: Array("incarnation".utf8), in: meta)
                try txn.put(Array("iCloud.test".utf8), forKey: Array("identifier".utf8), in: meta)
            }
        }
        let admin = try directory.openAdministrator()
        defer { admin.close() }
        #expect(try admin.storeInfo().formatVersion == Layout.formatVersion)
        let container = try admin.container(user: "alice")
        defer { container.close() }
        try await container.privateCloudDatabase.save(
            QuerySubscription(recordType: "Note", predicate: QueryPredicate(value: true), subscriptionID: "notes"))
        try await container.privateCloudDatabase.save(Record(recordType: "Note"))
        #expect(try await receivedNotifications(container).count == 1)
        #expect(try admin.checkIntegrity().isSound)
    }

    @Test func aVersionThreeStoreWithoutTheAssetsTableIsOpenedAndMigrated() async throws {
        let directory = try TemporaryDirectory()
        // The tables of version 3 and its `meta`, as version 3 created them.
        do {
            let environment = try LMDBStore.open(
                directory: directory.url, configuration: .init(tables: Self.tables, tableLayouts: ["indexes": Self.indexLayout]))
            defer { environment.close() }
            try environment.writeAndWait { txn throws in
                let meta = environment.table(named: "meta")
                try txn.put([0, 0, 0, 0, 0, 0, 0, 3], forKey: Array("format".utf8), in: meta)
                try txn.put(Array(repeating: 7, count: 16), forKey: Array("incarnation".utf8), in: meta)
                try txn.put(Array("iCloud.test".utf8), forKey: Array("identifier".utf8), in: meta)
            }
        }
        let admin = try directory.openAdministrator()
        defer { admin.close() }
        #expect(try admin.storeInfo().formatVersion == Layout.formatVersion)
        let container = try admin.container(user: "alice")
        defer { container.close() }
        let source = directory.appending("source")
        try Data([1, 2, 3]).write(to: source)
        let record = Record(recordType: "Note")
        record["file"] = Asset(fileURL: source)
        try await container.privateCloudDatabase.save(record)
        #expect(try admin.checkIntegrity().isSound)
        // A store of neither kind is still refused.
        let other = try TemporaryDirectory()
        try LMDBStore.open(directory: other.url, configuration: .init(tables: ["x"])).close()
        await expectFogError(.incompatibleVersion) { try other.openAdministrator() }
    }

    @Test func assetFilesStoredUnderUUIDNamesAreCountedAndKept() async throws {
        let directory = try TemporaryDirectory()
        let uuidName = UUID().uuidString.lowercased()
        let orphanName = UUID().uuidString.lowercased()
        let bytes = Data(repeating: 4, count: 2_000)
        do {
            let admin = try directory.openAdministrator()
            defer { admin.close() }
            let container = try admin.container(user: "alice")
            defer { container.close() }
            // A record as version 3 saved it: its asset stored under a UUID name.
            let assets = directory.url.appendingPathComponent("assets")
            try bytes.write(to: assets.appendingPathComponent(uuidName))
            let record = Record(recordType: "Note", recordID: Record.ID(recordName: "old"))
            record["file"] = Asset(storedName: uuidName, size: Int64(bytes.count), directory: assets)
            try await container.privateCloudDatabase.save(record)
        }
        // Version 3 kept no counts (its stores have no `assets` table; an empty one stands in
        // for it here), and left the files of deleted records.
        do {
            let environment = try LMDBStore.open(directory: directory.url, configuration: .init(tables: Self.tables + ["assets"]))
            defer { environment.close() }
            try environment.writeAndWait { txn throws in
                try txn.put([0, 0, 0, 0, 0, 0, 0, 3], forKey: Array("format".utf8), in: environment.table(named: "meta"))
                try txn.clear(environment.table(named: "assets"))
            }
        }
        let assets = directory.url.appendingPathComponent("assets")
        try Data([9]).write(to: assets.appendingPathComponent(orphanName))

        let admin = try directory.openAdministrator()
        defer { admin.close() }
        let container = try admin.container(user: "alice")
        defer { container.close() }
        let db = container.privateCloudDatabase
        #expect(try FileManager.default.contentsOfDirectory(atPath: assets.path) == [uuidName], "the orphan goes at open")
        let fetched = try await db.record(for: Record.ID(recordName: "old"))
        let asset: Asset? = fetched["file"]
        #expect(asset?.fileURL?.lastPathComponent == uuidName)
        #expect(try asset?.fileURL.map { try Data(contentsOf: $0) } == bytes)
        #expect(try admin.checkIntegrity().isSound)
        try await db.deleteRecord(withID: fetched.recordID)
        #expect(try FileManager.default.contentsOfDirectory(atPath: assets.path).isEmpty)
    }
}
