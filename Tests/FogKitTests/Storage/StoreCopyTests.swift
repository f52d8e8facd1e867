import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// `Container.Administrator.copyStore(to:progress:)`: a whole container into another store.
@Suite struct StoreCopyTests {
    @Test func aCopyHoldsEveryRecordAssetAndUserAndIsANewIncarnation() async throws {
        let source = try TestStore()
        let target = try TemporaryDirectory()
        try await StoreCopyCheck.roundTrip(source: source, into: .directory(target.url.appendingPathComponent("copy")))
    }

    @Test func aCopyIntoAStoreIsRefusedAndChangesNothing() async throws {
        let source = try TestStore()
        let other = try TestStore()
        try await other.privateDatabase.save(Record(recordType: "Note", recordID: Record.ID(recordName: "kept")))
        await expectFogError(.invalidArguments) { try source.admin.copyStore(to: other.admin.store) }
        #expect(try await other.privateDatabase.record(for: Record.ID(recordName: "kept")).recordType == "Note")
        await expectFogError(.invalidArguments) { try source.admin.copyStore(to: source.admin.store) }
    }

    @Test func storeDocumentsAreKeptReplacedAndRemoved() throws {
        let store = try TestStore()
        let admin = store.admin
        #expect(try admin.storeDocument(named: "tool.settings") == nil)
        let answer = try admin.updateStoreDocument(named: "tool.settings") { data -> Int in
            #expect(data == nil)
            data = Data("one".utf8)
            return 1
        }
        #expect(answer == 1)
        #expect(try admin.storeDocument(named: "tool.settings") == Data("one".utf8))
        // A change that throws, or a document too large, changes nothing.
        struct Planned: Error {}
        #expect(throws: Planned.self) {
            try admin.updateStoreDocument(named: "tool.settings") { data in
                data = Data("two".utf8)
                throw Planned()
            }
        }
        #expect(throws: FogError.self) {
            try admin.updateStoreDocument(named: "tool.settings") { data in
                data = Data(count: Container.Administrator.maximumStoreDocumentSize + 1)
            }
        }
        #expect(try admin.storeDocument(named: "tool.settings") == Data("one".utf8))
        for bad in ["", String(repeating: "x", count: 201), "a\u{0}b"] {
            #expect(throws: FogError.self) { try admin.storeDocument(named: bad) }
        }
        try admin.updateStoreDocument(named: "tool.settings") { $0 = nil }
        #expect(try admin.storeDocument(named: "tool.settings") == nil)
    }
}

/// The checks of a copy, for any pair of backends.
enum StoreCopyCheck {
    /// Fills `source` (records in a custom zone with an asset, a deletion, a user, a
    /// production environment), copies it to `destination` and checks the copy there.
    static func roundTrip(source: TestStore, into destination: StoreLocation) async throws {
        let db = source.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: "Notes")).zoneID
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("copy-asset-\(UUID().uuidString)")
        try bytes.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        for i in 0..<30 {
            let note = Record(recordType: "Note", recordID: Record.ID(recordName: "n\(i)", zoneID: zone))
            note["title"] = "note \(i)"
            note["rank"] = i
            if i == 0 { note["attachment"] = Asset(fileURL: file) }
            try await db.save(note)
        }
        try await db.deleteRecord(withID: Record.ID(recordName: "n29", zoneID: zone))
        let token = try await db.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        try await source.admin.importSchema(
            try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Note (title STRING QUERYABLE, rank INT64 SORTABLE);"))
        try await source.admin.deploySchema()

        var reports: [StoreCopyProgress] = []
        try source.admin.copyStore(to: destination) { reports.append($0) }
        #expect(reports.contains { $0.table == "records" && $0.copied == $0.total && $0.total > 0 })
        #expect(reports.contains { $0.environment == .production })

        let copy = try Container(identifier: "iCloud.test", store: destination, user: "alice", configuration: .init(durability: .none))
        defer { copy.close() }
        let copied = copy.privateCloudDatabase
        let first = try await copied.record(for: Record.ID(recordName: "n0", zoneID: zone))
        #expect(first["title"] as? String == "note 0")
        let asset = try #require(first["attachment"] as? Asset)
        #expect(try Data(contentsOf: try #require(asset.fileURL)) == bytes)
        await expectFogError(.unknownItem) { try await copied.record(for: Record.ID(recordName: "n29", zoneID: zone)) }
        let query = Query(recordType: "Note", predicate: try QueryPredicate(format: "rank >= 10"))
        query.sortDescriptors = [.init(key: "rank", ascending: false)]
        let (matches, _) = try await copied.records(matching: query, inZoneWith: zone, resultsLimit: 5)
        #expect(try matches.map { try $0.1.get()["rank"] as? Int } == [28, 27, 26, 25, 24])
        // A new incarnation: the source's tokens expire, a fresh feed has every record.
        await expectFogError(.changeTokenExpired) { try await copied.recordZoneChanges(inZoneWith: zone, since: token) }
        #expect(try await copied.recordZoneChanges(inZoneWith: zone, since: nil).modificationResultsByID.count == 29)
        // Writes go on in the copy, with the source's users.
        try await copied.save(Record(recordType: "Note", recordID: Record.ID(recordName: "after", zoneID: zone)))
        let sourceUser = try await source.container.userRecordID()
        #expect(try await copy.userRecordID() == sourceUser)
        var production = Container.Configuration(durability: .none)
        production.environment = .production
        let live = try Container(identifier: "iCloud.test", store: destination, user: "alice", configuration: production)
        defer { live.close() }
        // Production's deployed schema came along: its type and index are known there (an
        // unknown type fails a production query with unknownItem, an unindexed field with
        // invalidArguments).
        let all = Query(recordType: "Note", predicate: try QueryPredicate(format: "title == 'none'"))
        #expect(try await live.privateCloudDatabase.records(matching: all).0.isEmpty)
    }
}
