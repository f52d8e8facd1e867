import FogKit
import FogKitTesting
import Foundation
import Testing

/// Cursors (Docs/Queries.md, "Cursors"): paging returns the whole result in order, writes
/// between batches neither repeat nor skip unaffected records, cursors survive Codable and
/// refuse corrupt content.
@Suite struct QueryCursorTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    static let zone = QueryFixture.zoneID

    static func query(_ format: String = "TRUEPREDICATE", _ args: Any..., sorts: [Query.SortDescriptor]? = nil) throws -> Query {
        let q = Query(recordType: QueryFixture.postType, predicate: try QueryPredicate(format: format, argumentArray: args))
        q.sortDescriptors = sorts
        return q
    }

    // MARK: - Paging

    @Test(arguments: [1, 2, 7, 50, QueryOperation.maximumResults])
    func pagingASortedQueryGivesTheWholeResultInOrder(limit: Int) async throws {
        let refs = try await QueryFixture.populate(db, count: 130, seed: 11)
        let sorts = [Query.SortDescriptor(key: "score", ascending: false), Query.SortDescriptor(key: "title", ascending: true)]
        let q = try Self.query("score >= %@", 0, sorts: sorts)
        let expected = RefEval.sorted(refs.filter { RefEval.matches(.compare("score", .ge, .int64(0)), $0) }, by: sorts).map(\.name)
        try #require(expected.count > 50)

        for indexed in [false, true] {
            if indexed { try await store.admin.setIndexes([.queryable, .sortable], forField: "score", ofRecordType: "Post") }
            if indexed { try await store.admin.setIndexes([.sortable], forField: "title", ofRecordType: "Post") }
            let records = try await QueryRunner.all(db, q, in: Self.zone, limit: limit, context: "limit \(limit), indexed \(indexed)")
            #expect(records.map(\.recordID.recordName) == expected, "limit \(limit), indexed \(indexed)")
        }
    }

    @Test func aCursorOnlyWhenMoreRecordsMatch() async throws {
        let refs = try await QueryFixture.populate(db, count: 60, seed: 12)
        let matching = refs.filter { RefEval.matches(.compare("isCurrent", .eq, .int64(1)), $0) }
        try #require(matching.count > 3)
        let q = try Self.query("isCurrent == 1", sorts: [.init(key: "createdAt", ascending: true)])

        // Exactly as many matches as the limit: no cursor.
        let exact = try await db.records(matching: q, inZoneWith: Self.zone, resultsLimit: matching.count)
        #expect(exact.matchResults.count == matching.count)
        #expect(exact.queryCursor == nil, "a batch that holds every match returns no cursor")

        // One fewer: a cursor, then a batch of one and no cursor.
        let first = try await db.records(matching: q, inZoneWith: Self.zone, resultsLimit: matching.count - 1)
        let cursor = try #require(first.queryCursor)
        let last = try await db.records(continuingMatchFrom: cursor, resultsLimit: matching.count - 1)
        #expect(last.matchResults.count == 1)
        #expect(last.queryCursor == nil)

        // The remaining matches are deleted before continuing: an empty batch, no cursor, no error.
        let head = try await db.records(matching: q, inZoneWith: Self.zone, resultsLimit: 2)
        let headCursor = try #require(head.queryCursor)
        let returned = Set(head.matchResults.map { $0.0.recordName })
        let rest = matching.map(\.name).filter { !returned.contains($0) }
        _ = try await db.modifyRecords(saving: [], deleting: rest.map { Record.ID(recordName: $0, zoneID: Self.zone) })
        let empty = try await db.records(continuingMatchFrom: headCursor, resultsLimit: 2)
        #expect(empty.matchResults.isEmpty)
        #expect(empty.queryCursor == nil)
    }

    // MARK: - Writes between batches

    /// Sorted by score, either way: every batch continues after the order key (score, row)
    /// of the last record returned, whatever was saved or deleted in between. Indexed, the
    /// batches read the score index forwards or backwards from that position.
    @Test(arguments: [false, true], [true, false])
    func writesBetweenBatchesOfASortedQuery(indexed: Bool, ascending: Bool) async throws {
        if indexed { try await QueryFixture.declareIndexes(store.admin) }
        let refs = try await QueryFixture.populate(db, count: 90, seed: 21)
        var rows = Dictionary(uniqueKeysWithValues: refs.map { ($0.name, $0.row) })
        var alive = refs.map(\.name)
        let authors = QueryFixture.authorIDs(in: Self.zone)
        let sorts = [Query.SortDescriptor(key: "score", ascending: ascending)]
        let q = try Self.query(sorts: sorts)
        var rng = SplitMix64(seed: (indexed ? 1 : 2) + (ascending ? 0 : 10))

        var stream: [(batch: Int, record: RefRecord)] = []
        var deletedAt: [String: Int] = [:]
        var moved: Set<String> = []
        var inserted: [String: Bool] = [:]  // name → expected to appear
        var nextIndex = refs.count

        var (page, cursor) = try await db.records(matching: q, inZoneWith: Self.zone, resultsLimit: 8)
        var batch = 0
        stream += try page.map { (batch: 0, record: RefRecord(try $0.1.get(), row: rows[$0.0.recordName] ?? -1)) }
        while let current = cursor, batch < 100 {
            batch += 1
            // Delete two records, rename two (the sort value stays), move one, insert two.
            for _ in 0..<2 where alive.count > 10 {
                let name = alive.remove(at: rng.int(0...(alive.count - 1)))
                try await db.deleteRecord(withID: Record.ID(recordName: name, zoneID: Self.zone))
                deletedAt[name] = batch
            }
            for _ in 0..<2 {
                let record = try await db.record(for: Record.ID(recordName: rng.pick(alive), zoneID: Self.zone))
                record.setFieldValue(.string("renamed \(batch)"), forKey: "title")
                try await db.save(record)
            }
            let mover = try await db.record(for: Record.ID(recordName: rng.pick(alive), zoneID: Self.zone))
            mover.setFieldValue(.int64(Int64(rng.int(-3...12))), forKey: "score")
            try await db.save(mover)
            moved.insert(mover.recordID.recordName)
            let position = try #require(stream.last?.record)
            for _ in 0..<2 {
                let name = QueryFixture.postName(nextIndex)
                let record = Record(recordType: QueryFixture.postType, recordID: Record.ID(recordName: name, zoneID: Self.zone))
                QueryFixture.fill(record, index: nextIndex, rng: &rng, authors: authors)
                let saved = try await db.save(record)
                rows[name] = nextIndex
                inserted[name] = RefEval.precedes(position, RefRecord(saved, row: nextIndex), sorts)
                nextIndex += 1
            }

            (page, cursor) = try await db.records(continuingMatchFrom: current, resultsLimit: 8)
            if cursor != nil { #expect(!page.isEmpty, "batch \(batch) is empty although it follows a cursor") }
            stream += try page.map { (batch: batch, record: RefRecord(try $0.1.get(), row: rows[$0.0.recordName] ?? -1)) }
        }
        #expect(cursor == nil, "the query did not end")

        // The stream is strictly increasing in (score, row) as returned.
        for (x, y) in zip(stream, stream.dropFirst()) where !RefEval.precedes(x.record, y.record, sorts) {
            Issue.record(
                "\(y.record.name) (score \(RefEval.sortValues(y.record, sorts)), row \(y.record.row)) in batch \(y.batch) does not come after \(x.record.name) (score \(RefEval.sortValues(x.record, sorts)), row \(x.record.row)) in batch \(x.batch)"
            )
        }
        var counts: [String: Int] = [:]
        for item in stream { counts[item.record.name, default: 0] += 1 }
        for name in refs.map(\.name) where deletedAt[name] == nil && !moved.contains(name) {
            #expect(counts[name] == 1, "unaffected record \(name) came back \(counts[name] ?? 0) times")
        }
        for (name, batchDeleted) in deletedAt {
            let late = stream.filter { $0.record.name == name && $0.batch >= batchDeleted }
            #expect(late.isEmpty, "\(name), deleted before batch \(batchDeleted), came back in batch \(late.first?.batch ?? -1)")
        }
        for (name, appears) in inserted where !moved.contains(name) {
            #expect(
                counts[name, default: 0] == (appears ? 1 : 0),
                "record \(name), saved between batches, came back \(counts[name] ?? 0) times; expected \(appears ? 1 : 0)")
        }
        for name in moved { #expect(counts[name, default: 0] <= 2, "moved record \(name) came back \(counts[name] ?? 0) times") }
    }

    /// Without sort descriptors (the plan's order, kept by the cursor): unaffected records come
    /// back exactly once, deleted ones never after their deletion.
    @Test(arguments: ["TRUEPREDICATE", "score BETWEEN {0, 10}"])
    func writesBetweenBatchesOfAnUnsortedQuery(format: String) async throws {
        try await QueryFixture.declareIndexes(store.admin)
        let refs = try await QueryFixture.populate(db, count: 80, seed: 31)
        let cond: RefCond = format == "TRUEPREDICATE" ? .value(true) : .between("score", .int64(0), .int64(10))
        let matching = Set(refs.filter { RefEval.matches(cond, $0) }.map(\.name))
        var alive = refs.map(\.name)
        var rng = SplitMix64(seed: 5)
        let q = try Self.query(format)
        var deletedAt: [String: Int] = [:]
        var seen: [(Int, String)] = []
        var (page, cursor) = try await db.records(matching: q, inZoneWith: Self.zone, resultsLimit: 6)
        seen += page.map { (0, $0.0.recordName) }
        var batch = 0
        while let current = cursor, batch < 100 {
            batch += 1
            for _ in 0..<2 where alive.count > 10 {
                let name = alive.remove(at: rng.int(0...(alive.count - 1)))
                try await db.deleteRecord(withID: Record.ID(recordName: name, zoneID: Self.zone))
                deletedAt[name] = batch
            }
            let record = try await db.record(for: Record.ID(recordName: rng.pick(alive), zoneID: Self.zone))
            record.setFieldValue(.string("renamed"), forKey: "title")
            try await db.save(record)
            let fresh = Record(recordType: QueryFixture.postType, recordID: Record.ID(recordName: "new-\(batch)", zoneID: Self.zone))
            fresh.setFieldValue(.int64(5), forKey: "score")
            try await db.save(fresh)
            (page, cursor) = try await db.records(continuingMatchFrom: current, resultsLimit: 6)
            seen += page.map { (batch, $0.0.recordName) }
        }
        #expect(cursor == nil)
        var counts: [String: Int] = [:]
        for (_, name) in seen { counts[name, default: 0] += 1 }
        #expect(counts.values.allSatisfy { $0 == 1 }, "repeated: \(QueryRunner.sample(counts.filter { $0.value > 1 }.keys))")
        for name in matching where deletedAt[name] == nil {
            #expect(counts[name] == 1, "\(name) came back \(counts[name] ?? 0) times")
        }
        for (batchIndex, name) in seen {
            if let d = deletedAt[name] { #expect(batchIndex < d, "\(name) deleted before batch \(d) came back in batch \(batchIndex)") }
            if !name.hasPrefix("new-") { #expect(matching.contains(name), "\(name) does not match \(format)") }
        }
    }

    // MARK: - Codable

    @Test func aCursorSurvivesACodableRoundTrip() async throws {
        _ = try await QueryFixture.populate(db, count: 40, seed: 41)
        let q = try Self.query(
            "score > %@ AND NOT (tags CONTAINS %@)", -2, "blue", sorts: [.init(key: "createdAt", ascending: false), .init(key: "title")])
        let q2 = try Self.query("TRUEPREDICATE", sorts: [Query.SortDescriptor(key: "location", relativeLocation: QueryFixture.paris)])
        for query in [q, q2] {
            let first = try await db.records(matching: query, inZoneWith: Self.zone, resultsLimit: 3)
            let cursor = try #require(first.queryCursor, "\(query)")
            let data = try JSONEncoder().encode(cursor)
            let decoded = try JSONDecoder().decode(QueryOperation.Cursor.self, from: data)
            #expect(decoded == cursor)
            #expect(decoded.hashValue == cursor.hashValue)
            #expect(decoded.zoneID == Self.zone)
            let viaOriginal = try await QueryRunner.all(db, query, in: Self.zone, limit: 3)
            let rest = try await db.records(continuingMatchFrom: decoded, resultsLimit: 1000)
            #expect(
                first.matchResults.map { $0.0.recordName } + rest.matchResults.map { $0.0.recordName }
                    == viaOriginal.map(\.recordID.recordName),
                "\(query)")
        }
    }

    @Test func corruptCursorJSONFailsToDecode() async throws {
        _ = try await QueryFixture.populate(db, count: 30, seed: 51)
        let q = try Self.query("score >= 0", sorts: [.init(key: "score")])
        let cursor = try #require(try await db.records(matching: q, inZoneWith: Self.zone, resultsLimit: 2).queryCursor)
        let data = try JSONEncoder().encode(cursor)
        let decoder = JSONDecoder()

        #expect(throws: (any Error).self) { try decoder.decode(QueryOperation.Cursor.self, from: Data("not json".utf8)) }
        #expect(throws: (any Error).self) { try decoder.decode(QueryOperation.Cursor.self, from: data.prefix(data.count / 2)) }
        #expect(throws: (any Error).self) { try decoder.decode(QueryOperation.Cursor.self, from: Data("{}".utf8)) }
        #expect(throws: (any Error).self) { try decoder.decode(QueryOperation.Cursor.self, from: Data("[1, 2, 3]".utf8)) }

        // Tamper with the predicate text and the record type, wherever the encoding keeps them.
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let predicateKey = object.first { ($0.value as? String) == q.predicate.description }?.key
        let typeKey = object.first { ($0.value as? String) == "Post" }?.key
        #expect(
            predicateKey != nil, "the cursor's JSON should hold the predicate's canonical text: \(String(decoding: data, as: UTF8.self))")
        #expect(typeKey != nil, "the cursor's JSON should hold the record type")
        let tampered: [(String, Any)] = [
            (predicateKey ?? "predicate", "score >= OR 1"),
            (predicateKey ?? "predicate", "author.name == 'x'"),
            (predicateKey ?? "predicate", 42),
            (typeKey ?? "recordType", ""),
            (typeKey ?? "recordType", "not a type!"),
        ]
        for (key, value) in tampered {
            var copy = object
            copy[key] = value
            let bad = try JSONSerialization.data(withJSONObject: copy)
            #expect(throws: (any Error).self, "\(key) = \(value)") { try decoder.decode(QueryOperation.Cursor.self, from: bad) }
        }
        var missing = object
        if let predicateKey { missing.removeValue(forKey: predicateKey) }
        #expect(throws: (any Error).self) {
            try decoder.decode(QueryOperation.Cursor.self, from: try JSONSerialization.data(withJSONObject: missing))
        }

        // A position of random bytes may decode, but continuing from it must not crash: it
        // either runs or fails with invalidArguments.
        if let position = object["position"] as? String, Data(base64Encoded: position) != nil {
            var rng = SplitMix64(seed: 3)
            for length in [0, 1, 5, 40] {
                var copy = object
                copy["position"] = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }).base64EncodedString()
                guard let odd = try? decoder.decode(QueryOperation.Cursor.self, from: JSONSerialization.data(withJSONObject: copy)) else {
                    continue
                }
                do {
                    _ = try await db.records(continuingMatchFrom: odd, resultsLimit: 5)
                } catch let error as FogError {
                    #expect(error.code == .invalidArguments, "position of \(length) random bytes: \(error)")
                }
            }
        }
    }

    // MARK: - Zones

    @Test func aCursorFailsOnceItsZoneIsGoneOrInAnotherDatabase() async throws {
        _ = try await QueryFixture.populate(db, count: 20, seed: 61)
        let q = try Self.query()
        let cursor = try #require(try await db.records(matching: q, inZoneWith: Self.zone, resultsLimit: 3).queryCursor)
        // A cursor belongs to the database that ran its query.
        await expectFogError(.invalidArguments) { try await store.publicDatabase.records(continuingMatchFrom: cursor) }
        try await db.deleteRecordZone(withID: Self.zone)
        await expectFogError(.zoneNotFound) { try await db.records(continuingMatchFrom: cursor) }
    }
}
