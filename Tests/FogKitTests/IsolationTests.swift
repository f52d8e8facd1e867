import FogKit
import FogKitTesting
import Foundation
import Testing

/// A user never reads another user's records through a token or a cursor taken by someone
/// else: those are refused with an error, never answered with data (issue 16, "Bad input and
/// isolation").
@Suite struct IsolationTests {
    let store: TestStore

    init() throws { store = try TestStore() }

    static let zone = RecordZone.ID(zoneName: "Notes")

    /// Saves `count` notes into `db`'s zone Notes.
    static func fill(_ db: Database, count: Int, prefix: String) async throws {
        try await db.save(RecordZone(zoneID: zone))
        let records = (0..<count).map { i -> Record in
            let record = Record(recordType: "Note", recordID: Record.ID(recordName: "\(prefix)\(i)", zoneID: zone))
            record["n"] = i
            return record
        }
        _ = try await db.modifyRecords(saving: records, deleting: [])
    }

    @Test func aQueryCursorContinuesOnlyForItsUserAndDatabase() async throws {
        let alice = store.privateDatabase
        let bob = try store.container(user: "bob").privateCloudDatabase
        try await Self.fill(alice, count: 10, prefix: "a")
        try await Self.fill(bob, count: 10, prefix: "b")
        let query = Query(recordType: "Note", predicate: try QueryPredicate(format: "n >= 0"))
        let (first, cursor) = try await alice.records(matching: query, inZoneWith: Self.zone, resultsLimit: 3)
        #expect(first.count == 3)
        let taken = try #require(cursor)
        // Archived and restored, as an app would hand it around.
        let data = try JSONEncoder().encode(taken)
        let copy = try JSONDecoder().decode(QueryOperation.Cursor.self, from: data)
        let error = await expectFogError(.invalidArguments) { try await bob.records(continuingMatchFrom: copy, resultsLimit: 3) }
        #expect(error?.message.contains("another user") == true, "\(error?.message ?? "")")
        await expectFogError(.invalidArguments) { try await store.publicDatabase.records(continuingMatchFrom: copy) }
        let (rest, _) = try await alice.records(continuingMatchFrom: copy, resultsLimit: 100)
        #expect(rest.map(\.0.recordName).allSatisfy { $0.hasPrefix("a") } && rest.count == 7)
    }

    @Test func changeTokensWorkOnlyForTheirZoneAndDatabase() async throws {
        let alice = store.privateDatabase
        let bob = try store.container(user: "bob").privateCloudDatabase
        try await Self.fill(alice, count: 3, prefix: "a")
        try await Self.fill(bob, count: 3, prefix: "b")
        let (_, _, zoneToken, _) = try await alice.recordZoneChanges(inZoneWith: Self.zone, since: nil)
        let (_, _, databaseToken, _) = try await alice.databaseChanges(since: nil)
        // Bob's zone has the same name, and is another zone.
        await expectFogError(.invalidArguments) { try await bob.recordZoneChanges(inZoneWith: Self.zone, since: zoneToken) }
        await expectFogError(.invalidArguments) { try await bob.databaseChanges(since: databaseToken) }
        let (changes, _, _, _) = try await alice.recordZoneChanges(inZoneWith: Self.zone, since: nil)
        #expect(changes.count == 3)
    }
}
