import FogKit
import FogKitTesting
import Foundation
import Testing

/// Queryable-only indexes keep long strings and bytes as hashes; equality, IN and list
/// membership still find exactly the matching records, through updates and deletes.
@Suite struct QueryHashedIndexTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    @Test func longValuesInQueryableOnlyFieldsAreFoundExactly() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        try await store.admin.setIndexes(["author": .queryable, "labels": .queryable, "blob": .queryable], ofRecordType: "Doc")
        let authors = [
            "an author with a long name", "an author with a long name!", "short", "e\u{301}tienne the long-named author",
            "\u{e9}tienne the long-named author",
        ]
        var saved: [Record] = []
        for i in 0..<40 {
            let record = Record(recordType: "Doc", recordID: Record.ID(recordName: "d\(i)", zoneID: zone))
            record["author"] = authors[i % authors.count]
            record["labels"] = [authors[(i + 1) % authors.count], "x"]
            record["blob"] = Data(repeating: UInt8(i % 3), count: 40)
            saved.append(record)
        }
        _ = try await db.modifyRecords(saving: saved, deleting: [])

        func names(_ format: String, _ args: Any...) async throws -> Set<String> {
            let query = Query(recordType: "Doc", predicate: try QueryPredicate(format: format, argumentArray: args))
            let plan = try db.explain(query, inZoneWith: zone)
            #expect(!plan.scansRecordType, "\(format) should read an index")
            let (matches, _) = try await db.records(matching: query, inZoneWith: zone, resultsLimit: 100)
            return Set(matches.map(\.0.recordName))
        }
        func expected(_ test: (Int) -> Bool) -> Set<String> { Set((0..<40).filter(test).map { "d\($0)" }) }

        for (a, author) in authors.enumerated() {
            #expect(try await names("author == %@", author) == expected { $0 % authors.count == a })
            #expect(try await names("labels CONTAINS %@", author) == expected { ($0 + 1) % authors.count == a })
        }
        #expect(try await names("author IN %@", [authors[0], authors[3]]) == expected { [0, 3].contains($0 % authors.count) })
        #expect(try await names("blob == %@", Data(repeating: 1, count: 40)) == expected { $0 % 3 == 1 })

        // Change one author, delete another record: the old hashes go away.
        let changed = try await db.record(for: Record.ID(recordName: "d0", zoneID: zone))
        changed["author"] = authors[1]
        try await db.save(changed)
        try await db.deleteRecord(withID: Record.ID(recordName: "d5", zoneID: zone))
        #expect(try await names("author == %@", authors[0]) == expected { $0 % authors.count == 0 && $0 != 0 && $0 != 5 })
        #expect(try await names("author == %@", authors[1]) == expected { $0 % authors.count == 1 || $0 == 0 })
        #expect(try store.admin.checkIntegrity().isSound)

        // Made sortable, the field keeps its values again and BEGINSWITH reads them.
        try await store.admin.setIndexes([.queryable, .sortable], forField: "author", ofRecordType: "Doc")
        #expect(try await names("author BEGINSWITH %@", "an author") == expected { [0, 1].contains($0 % authors.count) && $0 != 5 })
        #expect(try store.admin.checkIntegrity().isSound)
    }
}
