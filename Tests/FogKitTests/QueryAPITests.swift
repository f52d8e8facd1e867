import FogKit
import FogKitTesting
import Foundation
import Synchronization
import Testing

/// Type errors against the schema, QueryOperation's callbacks, limits, desired keys and zone
/// scoping (Docs/Queries.md, "The API", "Zones", "What matches").
@Suite struct QueryAPITests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    static let zone = QueryFixture.zoneID

    static func query(_ format: String, _ args: Any..., sorts: [Query.SortDescriptor]? = nil) throws -> Query {
        let q = Query(recordType: QueryFixture.postType, predicate: try QueryPredicate(format: format, argumentArray: args))
        q.sortDescriptors = sorts
        return q
    }

    // MARK: - Type errors

    @Test func predicatesThatDoNotFitTheFieldTypesAreRefused() async throws {
        let refs = try await QueryFixture.populate(db, count: 30, seed: 201)
        let paris = QueryFixture.paris
        let bad: [(String, [Any])] = [
            ("score == 'x'", []),
            ("score > %@", ["10"]),
            ("score IN {'a', 'b'}", []),
            ("score BEGINSWITH '1'", []),
            ("ratio BETWEEN {'a', 'b'}", []),
            ("isCurrent == 'yes'", []),
            ("title > 3", []),
            ("title == %@", [Date()]),
            ("createdAt == 'yesterday'", []),
            ("createdAt < 5", []),
            ("code BEGINSWITH 'a'", []),
            ("code == 'a'", []),
            ("author == 'author-1'", []),
            ("author == 3", []),
            ("tags == 'red'", []),
            ("tags != 'red'", []),
            ("tags < 'red'", []),
            ("tags BEGINSWITH 're'", []),
            ("tags IN {'red', 'blue'}", []),
            ("tags CONTAINS 3", []),
            ("nums CONTAINS 'x'", []),
            ("title CONTAINS 'Hello'", []),
            ("ANY title = 'b'", []),
            ("'b' IN title", []),
            ("ANY score IN {1, 2}", []),
            ("ANY title BEGINSWITH 'a'", []),
            ("distanceToLocation:fromLocation:(title, %@) < 5", [paris]),
            ("distanceToLocation:fromLocation:(score, %@) < 5", [paris]),
            ("location == 1", []),
            ("score == 3 AND title > 3", []),
        ]
        for (format, args) in bad {
            let q = Query(recordType: "Post", predicate: try QueryPredicate(format: format, argumentArray: args))
            await expectFogError(.invalidArguments, Comment(rawValue: format)) { try await db.records(matching: q, inZoneWith: Self.zone) }
            await expectFogError(.invalidArguments, "explain \(format)") { try db.explain(q, inZoneWith: Self.zone) }
        }

        // The message names the operator to use.
        let listEquals = await expectFogError(.invalidArguments) {
            try await db.records(matching: try Self.query("tags == 'red'"), inZoneWith: Self.zone)
        }
        #expect(listEquals.map { $0.message.contains("CONTAINS") || $0.message.contains("ANY") } == true, "\(listEquals?.message ?? "")")
        let scalarContains = await expectFogError(.invalidArguments) {
            try await db.records(matching: try Self.query("title CONTAINS 'Hello'"), inZoneWith: Self.zone)
        }
        #expect(
            scalarContains.map { m in ["==", "BEGINSWITH", "self CONTAINS", "TOKENMATCHES"].contains { m.message.contains($0) } } == true,
            "\(scalarContains?.message ?? "")")

        // Sort keys that cannot sort.
        for sort in [
            Query.SortDescriptor(key: "tags"), Query.SortDescriptor(key: "nums", ascending: false), Query.SortDescriptor(key: "author"),
            Query.SortDescriptor(key: "location"), Query.SortDescriptor(key: "title", relativeLocation: paris),
            Query.SortDescriptor(key: "score", relativeLocation: paris),
        ] {
            let q = try Self.query("TRUEPREDICATE", sorts: [sort])
            await expectFogError(.invalidArguments, "sort by \(sort)") { try await db.records(matching: q, inZoneWith: Self.zone) }
        }

        // The same errors in production, with every index declared.
        try await QueryFixture.declareIndexes(store.admin)
        try await store.admin.deploySchema()
        let production = try store.productionContainer(user: store.container.userIdentity)
        try await production.privateCloudDatabase.save(RecordZone(zoneID: Self.zone))
        for (format, args) in bad.prefix(8) {
            let q = Query(recordType: "Post", predicate: try QueryPredicate(format: format, argumentArray: args))
            await expectFogError(.invalidArguments, "production: \(format)") {
                try await production.privateCloudDatabase.records(matching: q, inZoneWith: Self.zone)
            }
        }
        production.close()

        // Nothing changed.
        let after = try await QueryRunner.fetch(db, names: refs.map(\.name), in: Self.zone)
        #expect(after.map(\.name) == refs.map(\.name))
        for (a, b) in zip(refs, after) {
            #expect(a.fields == b.fields, "\(a.name)")
            #expect(a.modificationDate == b.modificationDate, "\(a.name)")
        }
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func fieldTypesBelongToTheRecordType() async throws {
        let refs = try await QueryFixture.populate(db, count: 20, seed: 202)
        // "name" is a STRING field of Author, unknown in Post: no type error, and no Post has it.
        #expect(try await QueryRunner.all(db, try Self.query("name == 3"), in: Self.zone, limit: 10).isEmpty)
        // A record without the field matches != (Docs/Queries.md: `nil != 5`).
        let notEqual = try await QueryRunner.all(db, try Self.query("nosuch != 1"), in: Self.zone, limit: 10)
        #expect(Set(notEqual.map(\.recordID.recordName)) == Set(refs.map(\.name)))
        let notIn = try await QueryRunner.all(db, try Self.query("NOT (nosuch IN {1, 2})"), in: Self.zone, limit: 10)
        #expect(Set(notIn.map(\.recordID.recordName)) == Set(refs.map(\.name)))
        #expect(try await QueryRunner.all(db, try Self.query("nosuch BEGINSWITH 'a'"), in: Self.zone, limit: 10).isEmpty)
        // Author queries see Author's fields.
        let authors = try await QueryRunner.all(
            db, Query(recordType: "Author", predicate: try QueryPredicate(format: "name BEGINSWITH 'b'")), in: Self.zone, limit: 10)
        #expect(authors.map(\.recordID.recordName) == ["author-1"])
    }

    // MARK: - The builder

    @Test func builderPredicatesRunLikeTheirFormatStrings() async throws {
        let refs = try await QueryFixture.populate(db, count: 60, seed: 210)
        let paris = QueryFixture.paris
        let author = QueryFixture.authorIDs(in: Self.zone)[1]
        let ids = refs.prefix(20).map { Record.ID(recordName: $0.name, zoneID: Self.zone) }
        let pairs: [(QueryPredicate, QueryPredicate, RefCond)] = [
            (
                try QueryPredicate.field("isCurrent") == 1, try QueryPredicate(format: "isCurrent == 1"),
                .compare("isCurrent", .eq, .int64(1))
            ),
            (
                try QueryPredicate.field("score").between(2, 6) && .field("tags").contains("red"),
                try QueryPredicate(format: "score BETWEEN {2, 6} AND tags CONTAINS 'red'"),
                .and([.between("score", .int64(2), .int64(6)), .listHas("tags", .string("red"))])
            ),
            (
                try QueryPredicate.recordID.notIn(ids) && .field("author") == author,
                try QueryPredicate(format: "NOT (recordID IN %@) AND author == %@", ids, author),
                .and([
                    .not(.oneOf("recordID", ids.map { RefEval.ref($0.recordName) })),
                    .compare("author", .eq, RefEval.ref(author.recordName)),
                ])
            ),
            (
                try QueryPredicate.field("location").distance(from: paris) < 30,
                try QueryPredicate(format: "distanceToLocation:fromLocation:(location, %@) < 30", paris),
                .within("location", paris, km: 30, inclusive: false)
            ),
            (
                QueryPredicate.tokens("swift zebra"), try QueryPredicate(format: "self CONTAINS 'swift zebra'"),
                .tokens("swift zebra", all: false)
            ),
            (
                try QueryPredicate.field("title").notBeginsWith("a") && .field("tags").anyBeginsWith("re"),
                try QueryPredicate(format: "NOT (title BEGINSWITH 'a') AND ANY tags BEGINSWITH 're'"),
                .and([.not(.beginsWith("title", "a")), .listAnyBeginsWith("tags", "re")])
            ),
        ]
        for (built, parsed, cond) in pairs {
            #expect(built == parsed, "\(built) vs \(parsed)")
            let got = try await QueryRunner.all(db, Query(recordType: "Post", predicate: built), in: Self.zone, limit: 9)
            #expect(Set(got.map(\.recordID.recordName)) == Set(refs.filter { RefEval.matches(cond, $0) }.map(\.name)), "\(built)")
        }
    }

    // MARK: - QueryOperation

    @Test func queryOperationCallsBackInOrderAndContinuesFromItsCursor() async throws {
        let refs = try await QueryFixture.populate(db, count: 40, seed: 203)
        let sorts = [Query.SortDescriptor(key: "score", ascending: false), Query.SortDescriptor(key: "title")]
        let cond = RefCond.compare("score", .ge, .int64(0))
        let expected = RefEval.sorted(refs.filter { RefEval.matches(cond, $0) }, by: sorts).map(\.name)
        try #require(expected.count > 6)

        let op = QueryOperation(query: try Self.query("score >= 0", sorts: sorts))
        op.zoneID = Self.zone
        op.resultsLimit = 6
        let log = EventLog()
        let cursor = Mutex<QueryOperation.Cursor?>(nil)
        op.recordMatchedBlock = { id, result in
            let ok = (try? result.get()).map { $0.recordID == id } ?? false
            log.append("record \(id.recordName) \(ok)")
        }
        op.queryResultBlock = { result in
            switch result {
            case .success(let c):
                cursor.withLock { $0 = c }
                log.append("done cursor=\(c != nil)")
            case .failure(let error):
                log.append("failed \(error)")
            }
        }
        await db.run(op)
        #expect(log.all == expected.prefix(6).map { "record \($0) true" } + ["done cursor=true"])

        let next = QueryOperation(cursor: try #require(cursor.withLock { $0 }))
        next.resultsLimit = 1000
        let log2 = EventLog()
        next.recordMatchedBlock = { id, _ in log2.append("record \(id.recordName)") }
        next.queryResultBlock = { result in
            switch result {
            case .success(let c): log2.append("done cursor=\(c != nil)")
            case .failure(let error): log2.append("failed \(error)")
            }
        }
        await db.run(next)
        #expect(log2.all == expected.dropFirst(6).map { "record \($0)" } + ["done cursor=false"])
    }

    @available(*, deprecated, message: "exercises the deprecated callbacks on purpose")
    @Test func theOlderCallbacksRunToo() async throws {
        let refs = try await QueryFixture.populate(db, count: 12, seed: 204)
        let sorts = [Query.SortDescriptor(key: "createdAt")]
        let op = QueryOperation(query: try Self.query("TRUEPREDICATE", sorts: sorts))
        op.zoneID = Self.zone
        op.resultsLimit = 5
        let log = EventLog()
        Self.setLegacyBlocks(op, log)
        await db.run(op)
        #expect(log.all == RefEval.sorted(refs, by: sorts).prefix(5).map { "fetched \($0.name)" } + ["completed cursor=true error=false"])
    }

    @available(*, deprecated)
    static func setLegacyBlocks(_ op: QueryOperation, _ log: EventLog) {
        op.recordFetchedBlock = { record in log.append("fetched \(record.recordID.recordName)") }
        op.queryCompletionBlock = { cursor, error in log.append("completed cursor=\(cursor != nil) error=\(error != nil)") }
    }

    @Test func resultsLimitAndMaximumResults() async throws {
        _ = try await QueryFixture.populate(db, count: 130, seed: 205)
        let q = try Self.query("TRUEPREDICATE")
        #expect(QueryOperation.maximumResults == 0 && QueryOperation.defaultBatchSize == 100)

        let chosen = try await db.records(matching: q, inZoneWith: Self.zone, resultsLimit: QueryOperation.maximumResults)
        #expect(chosen.matchResults.count == 100)
        #expect(chosen.queryCursor != nil)
        let small = try await db.records(matching: q, inZoneWith: Self.zone, resultsLimit: 5)
        #expect(small.matchResults.count == 5 && small.queryCursor != nil)
        let large = try await db.records(matching: q, inZoneWith: Self.zone, resultsLimit: 1000)
        #expect(large.matchResults.count == 130 && large.queryCursor == nil)
        #expect(Set(large.matchResults.map { $0.0 }).count == 130)

        let op = QueryOperation(query: q)
        op.zoneID = Self.zone
        let count = Mutex(0)
        op.recordMatchedBlock = { _, _ in count.withLock { $0 += 1 } }
        await db.run(op)
        #expect(count.withLock { $0 } == 100, "a QueryOperation's default resultsLimit is maximumResults: a batch of 100")
    }

    @Test func desiredKeysProjectTheRecords() async throws {
        let refs = try await QueryFixture.populate(db, count: 40, seed: 206)
        let byName = Dictionary(uniqueKeysWithValues: refs.map { ($0.name, $0) })
        let sorts = [Query.SortDescriptor(key: "score")]
        let cond = RefCond.listHas("tags", .string("red"))
        let expected = RefEval.sorted(refs.filter { RefEval.matches(cond, $0) }, by: sorts).map(\.name)
        let q = try Self.query("tags CONTAINS 'red'", sorts: sorts)

        for keys in [["title"], ["title", "score", "nosuch"], [], ["location", "author"]] {
            // records(matching:) and QueryOperation both project; the predicate and sort keys
            // do not leak into the results.
            let viaAPI = try await QueryRunner.all(db, q, in: Self.zone, limit: 4, desiredKeys: keys)
            let op = QueryOperation(query: q)
            op.zoneID = Self.zone
            op.desiredKeys = keys
            op.resultsLimit = 1000
            let collected = Mutex<[Record]>([])
            op.recordMatchedBlock = { _, result in if let r = try? result.get() { collected.withLock { $0.append(r) } } }
            await db.run(op)
            for (label, records) in [("records(matching:)", viaAPI), ("QueryOperation", collected.withLock { $0 })] {
                #expect(records.map(\.recordID.recordName) == expected, "\(label) \(keys)")
                for record in records {
                    let stored = try #require(byName[record.recordID.recordName])
                    let want = stored.fields.keys.filter { keys.contains($0) }.sorted()
                    #expect(record.allKeys() == want, "\(label) \(keys): \(record.recordID.recordName) has \(record.allKeys())")
                    for key in want { #expect(record.fieldValue(forKey: key) == stored.fields[key]) }
                    #expect(record.creationDate == stored.creationDate && record.modificationDate == stored.modificationDate)
                    #expect(record.recordChangeTag != nil)
                }
            }
        }
        // nil: every field.
        let full = try await QueryRunner.all(db, q, in: Self.zone, limit: 4, desiredKeys: nil)
        for record in full { #expect(record.allKeys() == byName[record.recordID.recordName]?.fields.keys.sorted()) }
    }

    /// A zone searches that zone; no zone searches every zone (CrossZoneQueryTests covers
    /// the merge, cursors and paging).
    @Test func queriesSearchTheirZoneOrEveryZone() async throws {
        let inBlog = try await QueryFixture.populate(db, count: 7, seed: 207)
        let inDefault = try await QueryFixture.populate(db, count: 5, seed: 208, zone: .default)
        let q = try Self.query("TRUEPREDICATE")
        func names(_ db: Database, _ zone: RecordZone.ID?) async throws -> Set<String> {
            Set(try await db.records(matching: q, inZoneWith: zone, resultsLimit: 100).matchResults.map { $0.0.recordName })
        }
        let everywhere = Set(inDefault.map(\.name) + inBlog.map(\.name))
        #expect(try await names(db, nil) == everywhere)
        #expect(try await names(db, .default) == Set(inDefault.map(\.name)))
        #expect(try await names(db, Self.zone) == Set(inBlog.map(\.name)))
        let defaultZoneRecords = try await db.records(matching: q, inZoneWith: .default, resultsLimit: 100).matchResults
        #expect(defaultZoneRecords.allSatisfy { $0.0.zoneID.isDefaultZone })

        // QueryOperation: zoneID nil is every zone.
        let op = QueryOperation(query: q)
        let seen = EventLog()
        op.recordMatchedBlock = { id, _ in seen.append(id.recordName) }
        await db.run(op)
        #expect(Set(seen.all) == everywhere)

        // A zone that does not exist.
        await expectFogError(.zoneNotFound) { try await db.records(matching: q, inZoneWith: .init(zoneName: "Missing")) }
        let missing = QueryOperation(query: q)
        missing.zoneID = .init(zoneName: "Missing")
        let failure = Mutex<FogError.Code?>(nil)
        missing.queryResultBlock = { result in failure.withLock { $0 = result.fogCode } }
        await db.run(missing)
        #expect(failure.withLock { $0 } == .zoneNotFound)

        // The public database has only its default zone.
        let publicDB = store.publicDatabase
        let publicPosts = try await QueryFixture.populate(publicDB, count: 4, seed: 209, zone: .default)
        #expect(try await names(publicDB, nil) == Set(publicPosts.map(\.name)))
        await expectFogError(.zoneNotFound) { try await publicDB.records(matching: q, inZoneWith: Self.zone) }
        let publicOp = QueryOperation(query: q)
        publicOp.zoneID = Self.zone
        let publicFailure = Mutex<FogError.Code?>(nil)
        publicOp.queryResultBlock = { result in publicFailure.withLock { $0 = result.fogCode } }
        await publicDB.run(publicOp)
        #expect(publicFailure.withLock { $0 } == .zoneNotFound)

        // The shared database needs a zone, and has none yet.
        await expectFogError(.invalidArguments) { try await store.container.sharedCloudDatabase.records(matching: q) }
        await expectFogError(.zoneNotFound) { try await store.container.sharedCloudDatabase.records(matching: q, inZoneWith: Self.zone) }

        // A deleted zone.
        try await db.deleteRecordZone(withID: Self.zone)
        await expectFogError(.zoneNotFound) { try await db.records(matching: q, inZoneWith: Self.zone) }
        #expect(try await names(db, nil) == Set(inDefault.map(\.name)))
    }

    @Test func anOperationWithoutAQueryOrThatIsCancelledFails() async throws {
        let empty = QueryOperation()
        let code = Mutex<FogError.Code?>(nil)
        empty.queryResultBlock = { result in code.withLock { $0 = result.fogCode } }
        await db.run(empty)
        #expect(code.withLock { $0 } == .invalidArguments)

        let cancelled = QueryOperation(query: try Self.query("TRUEPREDICATE"))
        let cancelCode = Mutex<FogError.Code?>(nil)
        let matched = Mutex(0)
        cancelled.recordMatchedBlock = { _, _ in matched.withLock { $0 += 1 } }
        cancelled.queryResultBlock = { result in cancelCode.withLock { $0 = result.fogCode } }
        cancelled.cancel()
        await db.run(cancelled)
        #expect(cancelCode.withLock { $0 } == .operationCancelled)
        #expect(matched.withLock { $0 } == 0)
    }
}
