import FogKit
import FogKitTesting
import Foundation
import Testing

/// Change tokens and query cursors keep the way CloudKit code stores them: `NSKeyedArchiver`
/// with secure coding (and `Codable`).
@Suite struct TokenArchivingTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    @Test func aChangeTokenArchivesWithNSKeyedArchiverAndStillWorks() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        try await db.save(Record(recordType: "Note", recordID: Record.ID(recordName: "a", zoneID: zone)))
        let token = try await db.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        let archived = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
        let restored = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: ServerChangeToken.self, from: archived))
        #expect(restored == token)
        #expect(Set([token, restored]).count == 1)
        try await db.save(Record(recordType: "Note", recordID: Record.ID(recordName: "b", zoneID: zone)))
        let page = try await db.recordZoneChanges(inZoneWith: zone, since: restored)
        #expect(page.modificationResultsByID.keys.map(\.recordName) == ["b"])
    }

    @Test func aQueryCursorArchivesWithNSKeyedArchiverAndContinues() async throws {
        _ = try await db.modifyRecords(saving: SampleRecords.items(5), deleting: [])
        let query = Query(recordType: "Item", predicate: QueryPredicate(value: true))
        query.sortDescriptors = [Query.SortDescriptor(key: "n", ascending: false)]
        let (first, cursor) = try await db.records(matching: query, resultsLimit: 2)
        let archived = try NSKeyedArchiver.archivedData(withRootObject: try #require(cursor), requiringSecureCoding: true)
        let restored = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: QueryOperation.Cursor.self, from: archived))
        #expect(restored == cursor)
        let (rest, end) = try await db.records(continuingMatchFrom: restored, resultsLimit: 10)
        #expect((first + rest).map(\.0.recordName) == ["i4", "i3", "i2", "i1", "i0"])
        #expect(end == nil)
    }
}
