import FogKit
import FogKitTesting
import Foundation
import Testing

/// The development and production environments (Docs/Queries.md, "Indexes and environments")
/// and `explain` (QueryPlan: access path, missing indexes).
@Suite struct QueryEnvironmentTests {
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

    /// The store's production environment with the fixture's record types deployed without
    /// indexes, and `count` posts of its own (the same as development's); the caller closes
    /// the container and the administrator.
    static func production(
        _ store: borrowing TestStore, count: Int, seed: UInt64
    ) async throws -> (container: Container, admin: Container.Administrator, refs: [RefRecord]) {
        _ = try await QueryFixture.populate(store.privateDatabase, count: count, seed: seed)
        try await store.clearIndexes(ofRecordTypes: QueryFixture.postType, QueryFixture.authorType)
        try await store.admin.deploySchema()
        let container = try store.productionContainer(user: store.container.userIdentity)
        let admin = try store.productionAdministrator()
        let refs = try await QueryFixture.populate(container.privateCloudDatabase, count: count, seed: seed)
        return (container, admin, refs)
    }

    /// Expects `query` to fail in `db` with invalidArguments and a message holding each of `words`.
    static func expectRefused(
        _ query: Query, in db: Database, mentioning words: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let error = await expectFogError(.invalidArguments, "\(query)", sourceLocation: sourceLocation) {
            try await db.records(matching: query, inZoneWith: zone, resultsLimit: 5)
        }
        if let error {
            for word in words {
                #expect(
                    error.message.contains(word), "\(query): the message \"\(error.message)\" should mention \(word)",
                    sourceLocation: sourceLocation)
            }
        }
    }

    static func names(_ db: Database, _ query: Query) async throws -> Set<String> {
        Set(try await QueryRunner.all(db, query, in: zone, limit: 50).map(\.recordID.recordName))
    }

    // MARK: - Production

    @Test func productionRefusesQueriesWithoutTheirIndexes() async throws {
        let (production, admin, refs) = try await Self.production(store, count: 40, seed: 101)
        defer {
            production.close()
            admin.close()
        }
        let db = production.privateCloudDatabase
        let paris = QueryFixture.paris
        let author = Record.Reference(recordID: QueryFixture.authorIDs(in: Self.zone)[0], action: .none)

        // No index at all.
        await Self.expectRefused(try Self.query("score == 3"), in: db, mentioning: ["score", "not marked queryable"])
        await Self.expectRefused(try Self.query("score != 3"), in: db, mentioning: ["score", "queryable"])
        await Self.expectRefused(try Self.query("score IN {1, 2}"), in: db, mentioning: ["score", "queryable"])
        await Self.expectRefused(try Self.query("tags CONTAINS 'red'"), in: db, mentioning: ["tags", "queryable"])
        await Self.expectRefused(try Self.query("author == %@", author), in: db, mentioning: ["author", "queryable"])
        await Self.expectRefused(try Self.query("score > 3"), in: db, mentioning: ["score", "not marked sortable"])
        await Self.expectRefused(try Self.query("title BEGINSWITH 'a'"), in: db, mentioning: ["title", "sortable"])
        await Self.expectRefused(try Self.query("ANY tags BEGINSWITH 'r'"), in: db, mentioning: ["tags", "sortable"])
        await Self.expectRefused(try Self.query("self CONTAINS 'alpha'"), in: db, mentioning: ["searchable"])
        await Self.expectRefused(try Self.query("allTokens TOKENMATCHES[cdl] 'alpha'"), in: db, mentioning: ["searchable"])
        await Self.expectRefused(try Self.query("TRUEPREDICATE"), in: db, mentioning: ["recordName"])
        await Self.expectRefused(
            try Self.query("distanceToLocation:fromLocation:(location, %@) < 5", paris), in: db, mentioning: ["location"])
        await Self.expectRefused(
            try Self.query("creationDate > %@", Date(timeIntervalSinceReferenceDate: 0)), in: db, mentioning: ["sortable"])

        // Queryable but not sortable.
        try await admin.setIndexes(.queryable, forField: "score", ofRecordType: "Post")
        #expect(try await Self.names(db, try Self.query("score == 3")) == Set(refs.filter { $0.fields["score"] == .int64(3) }.map(\.name)))
        await Self.expectRefused(try Self.query("score > 3"), in: db, mentioning: ["score", "sortable"])
        await Self.expectRefused(try Self.query("score == 3", sorts: [.init(key: "score")]), in: db, mentioning: ["score", "sortable"])
        await Self.expectRefused(
            try Self.query("score == 3", sorts: [.init(key: "location", relativeLocation: paris)]), in: db, mentioning: ["location"])
        // Every condition needs its index, not just one of them.
        await Self.expectRefused(try Self.query("score == 3 AND ratio == 1"), in: db, mentioning: ["ratio", "queryable"])

        // A whole-type query needs recordName (recordID) queryable, a sort its sortable field.
        try await admin.setIndexes(.queryable, forField: Record.SystemFieldKey.recordID, ofRecordType: "Post")
        #expect(try await Self.names(db, try Self.query("TRUEPREDICATE")) == Set(refs.map(\.name)))
        await Self.expectRefused(
            try Self.query("TRUEPREDICATE", sorts: [.init(key: "createdAt", ascending: false)]), in: db,
            mentioning: ["createdAt", "sortable"])
        try await admin.setIndexes([.queryable, .sortable], forField: "createdAt", ofRecordType: "Post")
        let sorted = try await QueryRunner.all(
            db, try Self.query("TRUEPREDICATE", sorts: [.init(key: "createdAt", ascending: false)]), in: Self.zone, limit: 9)
        #expect(sorted.map(\.recordID.recordName) == RefEval.sorted(refs, by: [.init(key: "createdAt", ascending: false)]).map(\.name))

        // A searchable field makes token search work; a location index, distance.
        try await admin.setIndexes(.searchable, forField: "body", ofRecordType: "Post")
        #expect(
            try await Self.names(db, try Self.query("self CONTAINS 'alpha'"))
                == Set(refs.filter { RefEval.matches(.tokens("alpha", all: false), $0, searchFields: ["body"]) }.map(\.name)))
        try await admin.setIndexes(.queryable, forField: "location", ofRecordType: "Post")
        let near = RefCond.within("location", paris, km: 30, inclusive: false)
        #expect(
            try await Self.names(db, try Self.query("distanceToLocation:fromLocation:(location, %@) < 30", paris))
                == Set(refs.filter { RefEval.matches(near, $0) }.map(\.name)))
    }

    @Test func productionRefusesUnknownRecordTypes() async throws {
        let (production, admin, _) = try await Self.production(store, count: 5, seed: 102)
        defer {
            production.close()
            admin.close()
        }
        for format in ["TRUEPREDICATE", "score == 3"] {
            let ghost = Query(recordType: "Ghost", predicate: try QueryPredicate(format: format))
            let error = await expectFogError(.unknownItem, Comment(rawValue: format)) {
                try await production.privateCloudDatabase.records(matching: ghost, inZoneWith: Self.zone)
            }
            #expect(error?.message.contains("Did not find record type: Ghost") == true, "\(error?.message ?? "")")
        }
    }

    @Test func productionAlsoOpensAsTheOnlyContainer() async throws {
        // A store opened in production from the start: nothing is deployed, so saves fail;
        // once development's schema is deployed they work, and queries need indexes.
        let store = try TestStore(configuration: .init(durability: .none, environment: .production))
        #expect(store.container.configuration.environment == .production)
        let db = store.privateDatabase
        try await db.save(RecordZone(zoneID: Self.zone))
        await expectFogError(.unknownItem) { try await db.save(QueryFixture.makeAuthors(in: Self.zone)[0]) }

        let development = try store.admin.container(
            user: store.container.userIdentity, configuration: .init(durability: .none, environment: .development))
        defer { development.close() }
        _ = try await QueryFixture.populate(development.privateCloudDatabase, count: 15, seed: 103)
        try await store.admin.deploySchema()
        let refs = try await QueryFixture.populate(db, count: 15, seed: 103)
        // Deployed with development's default indexes; a whole-type query needs recordName.
        #expect(try await Self.names(db, try Self.query("score == 3")) == Set(refs.filter { $0.fields["score"] == .int64(3) }.map(\.name)))
        await Self.expectRefused(try Self.query("TRUEPREDICATE"), in: db, mentioning: ["recordName", "not marked queryable"])
        try await store.admin.setIndexes([.queryable], forField: "recordName", ofRecordType: "Post")
        #expect(try await Self.names(db, try Self.query("TRUEPREDICATE")) == Set(refs.map(\.name)))
        #expect(store.admin.indexAdvice().isEmpty, "production does not count queries for the advisor")
    }

    // MARK: - Development

    @Test func developmentRunsTheSameQueriesAndAdvises() async throws {
        let refs = try await QueryFixture.populate(db, count: 40, seed: 104)
        // Without the default indexes development gave the fields as they were saved.
        try await store.clearIndexes(ofRecordTypes: QueryFixture.postType, QueryFixture.authorType)
        #expect(store.admin.indexAdvice().isEmpty)

        let equal = try Self.query("score == 3")
        #expect(try await Self.names(db, equal) == Set(refs.filter { $0.fields["score"] == .int64(3) }.map(\.name)))
        _ = try await db.records(matching: equal, inZoneWith: Self.zone)
        let range = try Self.query("ratio > 0")
        #expect(try await Self.names(db, range) == Set(refs.filter { RefEval.matches(.compare("ratio", .gt, .int64(0)), $0) }.map(\.name)))
        _ = try await db.records(matching: try Self.query("self CONTAINS 'alpha'"), inZoneWith: Self.zone)
        _ = try await db.records(matching: try Self.query("TRUEPREDICATE"), inZoneWith: Self.zone)
        _ = try await db.records(matching: try Self.query("isCurrent == 1", sorts: [.init(key: "createdAt")]), inZoneWith: Self.zone)

        let advice = store.admin.indexAdvice()
        func find(_ field: String, _ option: IndexOptions) -> IndexAdvice? {
            advice.first { $0.recordType == "Post" && $0.field == field && $0.options.contains(option) }
        }
        #expect(find("score", .queryable) != nil, "advice: \(advice)")
        #expect((find("score", .queryable)?.queryCount ?? 0) >= 2, "score == 3 ran twice: \(advice)")
        #expect(find("ratio", .sortable) != nil, "advice: \(advice)")
        #expect(advice.contains { $0.recordType == "Post" && $0.options.contains(.searchable) }, "advice: \(advice)")
        #expect(find("recordName", .queryable) != nil, "a whole-type query lacks recordName: \(advice)")
        #expect(find("createdAt", .sortable) != nil, "advice: \(advice)")
        #expect(find("isCurrent", .queryable) != nil, "advice: \(advice)")
        // Most frequent first.
        #expect(zip(advice, advice.dropFirst()).allSatisfy { $0.queryCount >= $1.queryCount }, "advice: \(advice)")

        // With the index declared, the same query is no longer counted.
        let before = find("score", .queryable)?.queryCount ?? 0
        try await store.admin.setIndexes([.queryable], forField: "score", ofRecordType: "Post")
        #expect(try await Self.names(db, equal) == Set(refs.filter { $0.fields["score"] == .int64(3) }.map(\.name)))
        #expect((store.admin.indexAdvice().first { $0.field == "score" && $0.options.contains(.queryable) }?.queryCount ?? 0) == before)
    }

    // MARK: - explain

    @Test func explainShowsTheAccessPathAndTheMissingIndexes() async throws {
        _ = try await QueryFixture.populate(db, count: 20, seed: 105)
        try await store.clearIndexes(ofRecordTypes: QueryFixture.postType, QueryFixture.authorType)
        func plan(_ q: Query) throws -> QueryPlan { try db.explain(q, inZoneWith: Self.zone) }
        func missing(_ p: QueryPlan, _ field: String, _ option: IndexOptions) -> Bool {
            p.missingIndexes.contains { $0.recordType == "Post" && $0.field == field && $0.options.contains(option) }
        }

        // No index: everything scans and lists what it lacks.
        let eq = try plan(try Self.query("score == 3"))
        #expect(eq.scansRecordType, "\(eq)")
        #expect(missing(eq, "score", .queryable), "\(eq)")
        #expect(eq.description.contains("Post"))
        #expect(eq.description.contains("missing index"), "\(eq)")
        let range = try plan(try Self.query("score > 3"))
        #expect(range.scansRecordType && missing(range, "score", .sortable), "\(range)")
        let search = try plan(try Self.query("self CONTAINS 'alpha'"))
        #expect(search.scansRecordType && search.missingIndexes.contains { $0.options.contains(.searchable) }, "\(search)")
        let all = try plan(try Self.query("TRUEPREDICATE"))
        #expect(all.scansRecordType && missing(all, "recordName", .queryable), "\(all)")
        let sortedPlan = try plan(try Self.query("isCurrent == 1", sorts: [.init(key: "createdAt")]))
        #expect(missing(sortedPlan, "createdAt", .sortable) && missing(sortedPlan, "isCurrent", .queryable), "\(sortedPlan)")
        #expect(!sortedPlan.indexProvidesOrder, "\(sortedPlan)")

        try await store.admin.setIndexes([.queryable, .sortable], forField: "score", ofRecordType: "Post")
        try await store.admin.setIndexes(.searchable, forField: "body", ofRecordType: "Post")
        try await store.admin.setIndexes(.queryable, forField: "location", ofRecordType: "Post")
        try await store.admin.setIndexes(.queryable, forField: "tags", ofRecordType: "Post")
        try await store.admin.setIndexes(.queryable, forField: "author", ofRecordType: "Post")

        for format in [
            "score == 3", "score IN {1, 2}", "score > 3", "score BETWEEN {1, 5}", "self CONTAINS 'alpha'", "tags CONTAINS 'red'",
        ] {
            let p = try plan(try Self.query(format))
            #expect(!p.scansRecordType, "\(format): an index serves it\n\(p)")
            #expect(p.missingIndexes.isEmpty, "\(format)\n\(p)")
        }
        let author = Record.Reference(recordID: QueryFixture.authorIDs(in: Self.zone)[1], action: .none)
        let byAuthor = try plan(try Self.query("author == %@", author))
        #expect(!byAuthor.scansRecordType && byAuthor.missingIndexes.isEmpty, "\(byAuthor)")
        let near = try plan(try Self.query("distanceToLocation:fromLocation:(location, %@) < 10", QueryFixture.paris))
        #expect(!near.scansRecordType && near.missingIndexes.isEmpty, "\(near)")

        // One served condition is enough to avoid the scan; the other is still missing.
        let mixed = try plan(try Self.query("score == 3 AND ratio < 1"))
        #expect(!mixed.scansRecordType, "\(mixed)")
        #expect(missing(mixed, "ratio", .sortable), "\(mixed)")
        let unserved = try plan(try Self.query("ratio < 1"))
        #expect(unserved.scansRecordType && missing(unserved, "ratio", .sortable), "\(unserved)")
        let notEqual = try plan(try Self.query("score != 3"))
        #expect(notEqual.missingIndexes.isEmpty, "score is queryable\n\(notEqual)")

        // Order: a range on the single sort key streams in index order; another sort does not.
        let streamed = try plan(try Self.query("score BETWEEN {1, 5}", sorts: [.init(key: "score")]))
        #expect(streamed.indexProvidesOrder && !streamed.scansRecordType, "\(streamed)")
        let inMemory = try plan(try Self.query("score == 3", sorts: [.init(key: "createdAt")]))
        #expect(!inMemory.indexProvidesOrder && missing(inMemory, "createdAt", .sortable), "\(inMemory)")

        // Explaining never fails for a missing index, also in production.
        try await store.admin.deploySchema()
        let production = try store.productionContainer(user: store.container.userIdentity)
        defer { production.close() }
        try await production.privateCloudDatabase.save(RecordZone(zoneID: Self.zone))
        let prodPlan = try production.privateCloudDatabase.explain(try Self.query("ratio == 1"), inZoneWith: Self.zone)
        #expect(prodPlan.scansRecordType && missing(prodPlan, "ratio", .queryable), "\(prodPlan)")

        // But it does fail for type errors and missing zones.
        await expectFogError(.invalidArguments) { try db.explain(try Self.query("score == 'x'"), inZoneWith: Self.zone) }
        await expectFogError(.zoneNotFound) { try db.explain(try Self.query("score == 3"), inZoneWith: .init(zoneName: "Missing")) }
    }
}
