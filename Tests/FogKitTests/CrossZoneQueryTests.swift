import FogKit
import FogKitTesting
import Foundation
import Synchronization
import Testing

/// Queries with no zone (Docs/CloudKitDifferences.md, "Queries"): in a private database they
/// search every zone of the user as one result sequence — the sort holds across zones,
/// `resultsLimit` counts across zones, cursors resume after the last record returned, zones
/// deleted or created between batches do not break paging — and the shared database refuses
/// them with `invalidArguments`.
@Suite struct CrossZoneQueryTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    static let type = "Item"

    /// A record as the brute force sees it: where it is, its sort values, and the order in
    /// which it was first saved.
    struct Ref {
        let name: String
        let zone: String
        let score: Int64
        let n: Int64
        let saved: Int
    }

    /// Creates `zoneNames` (the default zone needs no creating).
    func makeZones(_ zoneNames: [String], in database: Database? = nil) async throws {
        for name in zoneNames where name != RecordZone.ID.defaultZoneName {
            _ = try await (database ?? db).save(RecordZone(zoneName: name))
        }
    }

    /// Saves the records one at a time, in the order given (so first-save order is the
    /// array's order), and returns them as refs.
    func save(_ specs: [(name: String, zone: String, score: Int64, n: Int64)], in database: Database? = nil) async throws -> [Ref] {
        var refs: [Ref] = []
        for (index, spec) in specs.enumerated() {
            let record = Record(
                recordType: Self.type, recordID: Record.ID(recordName: spec.name, zoneID: RecordZone.ID(zoneName: spec.zone)))
            record["score"] = spec.score
            record["n"] = spec.n
            record["label"] = "label-\(spec.name)"
            _ = try await (database ?? db).save(record)
            refs.append(Ref(name: spec.name, zone: spec.zone, score: spec.score, n: spec.n, saved: index))
        }
        return refs
    }

    static func query(_ format: String = "TRUEPREDICATE", sorts: [Query.SortDescriptor]? = nil) throws -> Query {
        let q = Query(recordType: type, predicate: try QueryPredicate(format: format))
        q.sortDescriptors = sorts
        return q
    }

    /// The brute-force order: the sort keys, then first-save order (reversed when the last
    /// key is descending), as Docs/Queries.md defines it.
    static func bruteForce(_ refs: [Ref], sorts: [Query.SortDescriptor]) -> [Ref] {
        let lastDescending = !(sorts.last?.ascending ?? true)
        return refs.sorted { a, b in
            for sort in sorts {
                let (x, y) = sort.key == "score" ? (a.score, b.score) : (a.n, b.n)
                if x != y { return sort.ascending ? x < y : x > y }
            }
            return lastDescending ? a.saved > b.saved : a.saved < b.saved
        }
    }

    /// Every batch of a query with no zone, following cursors; checks each batch's size.
    static func page(
        _ db: Database, _ query: Query, limit: Int, desiredKeys: [Record.FieldKey]? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (records: [Record], batches: Int) {
        var (page, cursor) = try await db.records(matching: query, inZoneWith: nil, desiredKeys: desiredKeys, resultsLimit: limit)
        var records = try page.map { try $0.1.get() }
        var batches = 1
        #expect(page.count <= limit, "a batch exceeds resultsLimit", sourceLocation: sourceLocation)
        while let next = cursor {
            #expect(page.count == limit, "a batch with a cursor after it holds resultsLimit records", sourceLocation: sourceLocation)
            (page, cursor) = try await db.records(continuingMatchFrom: next, desiredKeys: desiredKeys, resultsLimit: limit)
            #expect(!page.isEmpty && page.count <= limit, "batch \(batches + 1) holds \(page.count)", sourceLocation: sourceLocation)
            records += try page.map { try $0.1.get() }
            batches += 1
            if batches > 1000 {
                Issue.record("the cursor does not advance", sourceLocation: sourceLocation)
                break
            }
        }
        return (records, batches)
    }

    /// Names with their zone, as results are compared.
    static func names(_ records: [Record]) -> [String] { records.map { "\($0.recordID.zoneID.zoneName)/\($0.recordID.recordName)" } }
    static func names(_ refs: [Ref]) -> [String] { refs.map { "\($0.zone)/\($0.name)" } }

    /// Four zones, scores interleaved between them (every zone holds some of the lowest and
    /// some of the highest), saved in an order unrelated to the scores.
    func interleaved() async throws -> [Ref] {
        let zones = [RecordZone.ID.defaultZoneName, "A", "B", "C"]
        try await makeZones(zones)
        var specs: [(name: String, zone: String, score: Int64, n: Int64)] = []
        for i in 0..<24 {
            let score = Int64((i * 7) % 24)
            specs.append(("r\(i)", zones[i % 4], score, Int64(i)))
        }
        return try await save(specs)
    }

    // MARK: - Order across zones

    @Test(arguments: [true, false])
    func sortedResultsAreTheMergeOfEveryZone(ascending: Bool) async throws {
        let refs = try await interleaved()
        let sorts = [Query.SortDescriptor(key: "score", ascending: ascending)]
        let (records, _) = try await Self.page(db, try Self.query(sorts: sorts), limit: 100)
        #expect(Self.names(records) == Self.names(Self.bruteForce(refs, sorts: sorts)))
        #expect(Set(records.map(\.recordID.zoneID.zoneName)).count == 4, "every zone contributes")
    }

    @Test func aConditionAndTwoSortKeysHoldAcrossZones() async throws {
        let refs = try await interleaved()
        let sorts = [Query.SortDescriptor(key: "score", ascending: false), Query.SortDescriptor(key: "n", ascending: true)]
        let (records, _) = try await Self.page(db, try Self.query("score >= 5", sorts: sorts), limit: 4)
        #expect(Self.names(records) == Self.names(Self.bruteForce(refs.filter { $0.score >= 5 }, sorts: sorts)))
    }

    /// Without sort descriptors the order is first-save order across zones (documented).
    @Test func anUnsortedQueryReturnsFirstSaveOrderAcrossZones() async throws {
        let refs = try await interleaved()
        for limit in [100, 5] {
            let (records, _) = try await Self.page(db, try Self.query("score >= 3"), limit: limit)
            #expect(Self.names(records) == Self.names(refs.filter { $0.score >= 3 }), "limit \(limit)")
        }
    }

    // MARK: - Paging

    @Test(arguments: [1, 2, 3, 7, 23, 24, 25])
    func pagingGivesEachRecordOnceInOrder(limit: Int) async throws {
        let refs = try await interleaved()
        let sorts = [Query.SortDescriptor(key: "score", ascending: true)]
        let (records, batches) = try await Self.page(db, try Self.query(sorts: sorts), limit: limit)
        #expect(Self.names(records) == Self.names(Self.bruteForce(refs, sorts: sorts)))
        #expect(batches == (refs.count + limit - 1) / limit, "resultsLimit counts across zones")
    }

    /// The cursor names the query's zones as every zone, and survives archiving.
    @Test func anArchivedCursorContinuesAcrossZones() async throws {
        let refs = try await interleaved()
        let sorts = [Query.SortDescriptor(key: "score", ascending: true)]
        let first = try await db.records(matching: try Self.query(sorts: sorts), inZoneWith: nil, resultsLimit: 10)
        let cursor = try #require(first.queryCursor)
        #expect(cursor.description.contains("every zone"))
        let data = try NSKeyedArchiver.archivedData(withRootObject: cursor, requiringSecureCoding: true)
        let restored = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: QueryCursor.self, from: data))
        let rest = try await db.records(continuingMatchFrom: restored, resultsLimit: 100)
        #expect(rest.queryCursor == nil)
        let all = try (first.matchResults + rest.matchResults).map { try $0.1.get() }
        #expect(Self.names(all) == Self.names(Self.bruteForce(refs, sorts: sorts)))
    }

    // MARK: - Desired keys

    @Test func desiredKeysApplyInEveryZone() async throws {
        _ = try await interleaved()
        let sorts = [Query.SortDescriptor(key: "score", ascending: true)]
        let (records, _) = try await Self.page(db, try Self.query(sorts: sorts), limit: 5, desiredKeys: ["label"])
        #expect(records.count == 24)
        for record in records {
            #expect(record.allKeys() == ["label"], "\(record.recordID)")
            #expect(record["label"] as? String == "label-\(record.recordID.recordName)")
        }
        let (none, _) = try await Self.page(db, try Self.query(sorts: sorts), limit: 100, desiredKeys: [])
        #expect(none.count == 24 && none.allSatisfy { $0.allKeys().isEmpty })
    }

    // MARK: - Zones that change between batches

    /// A zone deleted between batches stops contributing: no error, no repeats, the other
    /// zones continue in order.
    @Test func aZoneDeletedBetweenBatches() async throws {
        let refs = try await interleaved()
        let sorts = [Query.SortDescriptor(key: "score", ascending: true)]
        let q = try Self.query(sorts: sorts)
        let first = try await db.records(matching: q, inZoneWith: nil, resultsLimit: 6)
        let firstRecords = try first.matchResults.map { try $0.1.get() }
        _ = try await db.deleteRecordZone(withID: RecordZone.ID(zoneName: "B"))
        var records = firstRecords
        var cursor = first.queryCursor
        while let next = cursor {
            let page = try await db.records(continuingMatchFrom: next, resultsLimit: 6)
            records += try page.matchResults.map { try $0.1.get() }
            cursor = page.queryCursor
        }
        let expected = Self.bruteForce(refs, sorts: sorts)
        let returned = Set(Self.names(firstRecords))
        let rest = expected.filter { !returned.contains("\($0.zone)/\($0.name)") && $0.zone != "B" }
        #expect(Self.names(records) == Self.names(firstRecords) + Self.names(rest))
        #expect(firstRecords.contains { $0.recordID.zoneID.zoneName == "B" }, "the first batch had records of B")
    }

    /// A zone created between batches contributes its records after the cursor's position.
    @Test func aZoneCreatedBetweenBatches() async throws {
        let refs = try await interleaved()
        let sorts = [Query.SortDescriptor(key: "score", ascending: true)]
        let first = try await db.records(matching: try Self.query(sorts: sorts), inZoneWith: nil, resultsLimit: 6)
        let firstRecords = try first.matchResults.map { try $0.1.get() }
        try await makeZones(["D"])
        let added = try await save([("d-low", "D", -1, 100), ("d-high", "D", 50, 101)])
        var records = firstRecords
        var cursor = first.queryCursor
        while let next = cursor {
            let page = try await db.records(continuingMatchFrom: next, resultsLimit: 6)
            records += try page.matchResults.map { try $0.1.get() }
            cursor = page.queryCursor
        }
        // `d-low` sorts before the position and is not returned; `d-high` comes last.
        let expected = Self.bruteForce(refs, sorts: sorts)
        #expect(Self.names(records) == Self.names(expected) + Self.names([added[1]]))
    }

    // MARK: - Databases

    @Test func theSharedDatabaseNeedsAZone() async throws {
        let shared = store.container.sharedCloudDatabase
        await #expect {
            _ = try await shared.records(matching: try Self.query(), inZoneWith: nil)
        } throws: { error in
            guard let error = error as? FogError else { return false }
            return error.code == .invalidArguments && error.message.contains("zone")
        }
        // The operation reports the same error.
        let op = QueryOperation(query: try Self.query())
        let outcome = Mutex<(any Error)?>(nil)
        op.queryResultBlock = { result in
            if case .failure(let error) = result { outcome.withLock { $0 = error } }
        }
        await shared.run(op)
        #expect((outcome.withLock { $0 } as? FogError)?.code == .invalidArguments)
    }

    /// A user's query with no zone never returns another user's records, even in zones of
    /// the same names.
    @Test func onlyTheUsersOwnZones() async throws {
        let bobDB = try store.container(user: "bob").privateCloudDatabase
        try await makeZones(["A", "B"])
        try await makeZones(["A", "C"], in: bobDB)
        let alice = try await save([("a1", "A", 1, 1), ("a2", "B", 2, 2), ("a3", RecordZone.ID.defaultZoneName, 3, 3)])
        _ = try await save([("b1", "A", 0, 4), ("b2", "C", 5, 5), ("b3", RecordZone.ID.defaultZoneName, 6, 6)], in: bobDB)
        let sorts = [Query.SortDescriptor(key: "score", ascending: true)]
        let (aliceRecords, _) = try await Self.page(db, try Self.query(sorts: sorts), limit: 2)
        #expect(Self.names(aliceRecords) == Self.names(alice))
        let (bobRecords, _) = try await Self.page(bobDB, try Self.query(sorts: sorts), limit: 100)
        #expect(bobRecords.map(\.recordID.recordName) == ["b1", "b2", "b3"])
        // Bob cannot continue Alice's cursor.
        let first = try await db.records(matching: try Self.query(sorts: sorts), inZoneWith: nil, resultsLimit: 1)
        await #expect(throws: FogError.self) {
            _ = try await bobDB.records(continuingMatchFrom: try #require(first.queryCursor))
        }
    }

    /// The public database has one zone: a query with no zone is its default zone's query.
    @Test func thePublicDatabaseSearchesItsZone() async throws {
        let record = Record(recordType: Self.type)
        record["score"] = Int64(4)
        _ = try await store.publicDatabase.save(record)
        let (matches, cursor) = try await store.publicDatabase.records(matching: try Self.query(), inZoneWith: nil)
        #expect(matches.map(\.0) == [record.recordID])
        #expect(cursor == nil)
    }

    /// The operation and the completion-handler form search every zone too.
    @Test func theOperationAndTheCompletionHandlerSearchEveryZone() async throws {
        let refs = try await interleaved()
        let sorts = [Query.SortDescriptor(key: "score", ascending: false)]
        let expected = Self.names(Self.bruteForce(refs, sorts: sorts))

        let op = QueryOperation(query: try Self.query(sorts: sorts))
        op.resultsLimit = 10
        let seen = Mutex<[String]>([])
        let cursor = Mutex<QueryOperation.Cursor?>(nil)
        op.recordMatchedBlock = { _, result in
            if let record = try? result.get() { seen.withLock { $0 += Self.names([record]) } }
        }
        op.queryResultBlock = { result in cursor.withLock { $0 = try? result.get() } }
        await db.run(op)
        #expect(seen.withLock { $0 } == Array(expected.prefix(10)))
        #expect(cursor.withLock { $0 } != nil)

        let page = try await withCheckedThrowingContinuation { continuation in
            db.fetch(withQuery: try! Self.query(sorts: sorts), inZoneWith: nil, resultsLimit: 100) { continuation.resume(with: $0) }
        }
        #expect(Self.names(try page.matchResults.map { try $0.1.get() }) == expected)
    }

    // MARK: - Random data

    /// Random zones, records with few distinct scores (ties across zones), a random
    /// condition, sort and limit, indexed or not: paging equals the brute-force sort.
    @Test(arguments: [false, true])
    func randomDataMatchesTheBruteForce(indexed: Bool) async throws {
        if indexed {
            try await store.admin.setIndexes([.queryable, .sortable], forField: "score", ofRecordType: Self.type)
            try await store.admin.setIndexes([.queryable, .sortable], forField: "n", ofRecordType: Self.type)
        } else {
            try await store.clearIndexes(ofRecordTypes: Self.type)
        }
        var random = SplitMix64(seed: indexed ? 0xC0FFEE : 0xFEED)
        let zones = [RecordZone.ID.defaultZoneName] + (0..<random.int(2...5)).map { "Z\($0)" }
        try await makeZones(zones)
        let specs = (0..<random.int(40...80)).map { i in
            (name: "r\(i)", zone: random.pick(zones), score: Int64(random.int(0...4)), n: Int64(random.int(0...1000)))
        }
        let refs = try await save(specs)
        let sortChoices: [[Query.SortDescriptor]] = [
            [], [.init(key: "score", ascending: true)], [.init(key: "score", ascending: false)],
            [.init(key: "n", ascending: true)],
            [.init(key: "score", ascending: true), .init(key: "n", ascending: false)],
            [.init(key: "score", ascending: false), .init(key: "n", ascending: true)],
        ]
        for round in 0..<12 {
            let sorts = random.pick(sortChoices)
            let bound = Int64(random.int(0...4))
            let limit = random.pick([1, 2, 3, 5, 8, 13, 100])
            let (format, keep): (String, (Ref) -> Bool) = random.pick([
                ("TRUEPREDICATE", { _ in true }), ("score >= \(bound)", { $0.score >= bound }),
                ("score == \(bound)", { $0.score == bound }), ("n < 500", { $0.n < 500 }),
            ])
            let q = try Self.query(format, sorts: sorts.isEmpty ? nil : sorts)
            let (records, _) = try await Self.page(db, q, limit: limit)
            let expected = Self.bruteForce(refs.filter(keep), sorts: sorts)
            #expect(
                Self.names(records) == Self.names(expected),
                "round \(round): \(format), sorts \(sorts), limit \(limit), indexed \(indexed)")
        }
    }
}
