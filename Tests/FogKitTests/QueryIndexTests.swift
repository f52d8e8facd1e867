import FogKit
import FogKitTesting
import Foundation
import Testing

/// Index maintenance: indexes follow saves, updates, deletes, cascades, zone deletion and
/// index removal, in the same transaction as the records; query results stay those of brute
/// force and the integrity check stays sound.
@Suite struct QueryIndexTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore

    init() throws { store = try TestStore() }

    static let zone = QueryFixture.zoneID

    /// Runs every shape of the conformance table against the records named `names`, fetched by ID.
    static func checkAllShapes(
        _ db: Database, container: Container, admin: Container.Administrator, names: [String], zone: RecordZone.ID = zone, limit: Int = 25,
        label: String
    ) async throws {
        let refs = try await QueryRunner.fetch(db, names: names, in: zone)
        let ctx = ShapeContext(
            zone: zone, authors: QueryFixture.authorIDs(in: zone), authorRecords: QueryFixture.makeAuthors(in: zone), posts: refs,
            me: try await container.userRecordID())
        for var shape in QueryTable.shapes(ctx) {
            shape = QueryShape(
                name: "\(label): \(shape.name)", format: shape.format, args: shape.args, cond: shape.cond, sorts: shape.sorts,
                served: shape.served, scansWithoutIndexes: shape.scansWithoutIndexes, firstBatch: shape.firstBatch)
            await QueryConformanceTests.check(shape, in: db, .indexed, refs: refs, zone: zone, limit: limit)
        }
        let report = try admin.checkIntegrity()
        #expect(report.isSound, "\(label): \(report)")
    }

    @Test func indexesFollowSavesUpdatesDeletesAndCascades() async throws {
        let container = store.container
        let db = container.privateCloudDatabase
        // Indexes first: every entry is written by a save, none by a rebuild.
        try await QueryFixture.declareIndexes(store.admin)
        try await db.save(RecordZone(zoneID: Self.zone))
        let authors = QueryFixture.makeAuthors(in: Self.zone)
        for author in authors { try await db.save(author) }
        let authorIDs = authors.map(\.recordID)
        // Author references cascade (deleteSelf); parents are only authors 2 and 3, so that
        // author 0 can be deleted.
        let posts = QueryFixture.makePosts(
            count: 100, seed: 301, in: Self.zone, authors: authorIDs, deleteSelf: true, parents: Array(authorIDs[2...]))
        for post in posts { try await db.save(post) }
        var names = posts.map(\.recordID.recordName)
        var alive = names
        var rng = SplitMix64(seed: 302)
        try await Self.checkAllShapes(db, container: container, admin: store.admin, names: names, label: "after saves")

        for round in 1...2 {
            // Update: new random values, some fields removed, lists and locations changed.
            var updates: [Record] = []
            for _ in 0..<25 {
                let record = try await db.record(for: Record.ID(recordName: rng.pick(alive), zoneID: Self.zone))
                if updates.contains(where: { $0.recordID == record.recordID }) { continue }
                QueryFixture.fill(record, index: 0, rng: &rng, authors: authorIDs, deleteSelf: true, parents: Array(authorIDs[2...]))
                updates.append(record)
            }
            // Half saved one by one, half in one batch.
            for record in updates.prefix(updates.count / 2) { try await db.save(record) }
            _ = try await db.modifyRecords(saving: Array(updates.dropFirst(updates.count / 2)), deleting: [])
            // Delete ten, in one batch with new saves.
            var doomed: [Record.ID] = []
            for _ in 0..<10 {
                let name = alive.remove(at: rng.int(0...(alive.count - 1)))
                doomed.append(Record.ID(recordName: name, zoneID: Self.zone))
            }
            var fresh: [Record] = []
            for _ in 0..<10 {
                let name = QueryFixture.postName(names.count)
                let r = Record(recordType: QueryFixture.postType, recordID: Record.ID(recordName: name, zoneID: Self.zone))
                QueryFixture.fill(r, index: names.count, rng: &rng, authors: authorIDs, deleteSelf: true, parents: Array(authorIDs[2...]))
                fresh.append(r)
                names.append(name)
                alive.append(name)
            }
            // Saved one by one so that rows follow names.
            _ = try await db.modifyRecords(saving: [], deleting: doomed)
            for r in fresh { try await db.save(r) }
            try await Self.checkAllShapes(db, container: container, admin: store.admin, names: names, label: "round \(round)")
        }

        // A failed atomic batch leaves no index entries behind.
        let good = Record(recordType: QueryFixture.postType, recordID: Record.ID(recordName: "atomic-good", zoneID: Self.zone))
        good.setFieldValue(.int64(3), forKey: "score")
        good.setFieldValue(.stringList(["red"]), forKey: "tags")
        good.setFieldValue(.string("swift zebra"), forKey: "body")
        let bad = Record(recordType: QueryFixture.postType, recordID: Record.ID(recordName: "atomic-bad", zoneID: Self.zone))
        bad.setFieldValue(.string("not a number"), forKey: "score")
        await expectFogError(.partialFailure) { try await db.modifyRecords(saving: [good, bad], deleting: []) }
        for format in ["score == 3", "tags CONTAINS 'red'", "self CONTAINS 'zebra'", "TRUEPREDICATE"] {
            let q = Query(recordType: QueryFixture.postType, predicate: try QueryPredicate(format: format))
            let found = try await QueryRunner.all(db, q, in: Self.zone, limit: 50).map(\.recordID.recordName)
            #expect(!found.contains("atomic-good"), "\(format): a record of a failed atomic batch is found")
        }

        // Cascade: deleting author 0 deletes the posts that reference it with deleteSelf.
        try await db.deleteRecord(withID: authorIDs[0])
        let remaining = try await QueryRunner.fetch(db, names: names, in: Self.zone)
        #expect(!remaining.contains { $0.fields["author"] == RefEval.ref(authorIDs[0].recordName) })
        let byAuthor = Query(recordType: QueryFixture.postType, predicate: try QueryPredicate(format: "author == %@", authorIDs[0]))
        #expect(try await QueryRunner.all(db, byAuthor, in: Self.zone, limit: 10).isEmpty)
        try await Self.checkAllShapes(db, container: container, admin: store.admin, names: names, label: "after the cascade")
    }

    @Test func deletingAZoneDeletesItsIndexEntries() async throws {
        let container = store.container
        let db = container.privateCloudDatabase
        try await QueryFixture.declareIndexes(store.admin)
        let other = RecordZone.ID(zoneName: "Other")
        let blog = try await QueryFixture.populate(db, count: 50, seed: 311)
        let inOther = try await QueryFixture.populate(db, count: 50, seed: 312, zone: other)
        try await Self.checkAllShapes(
            db, container: container, admin: store.admin, names: inOther.map(\.name), zone: other, label: "zone Other")

        try await db.deleteRecordZone(withID: other)
        let all = Query(recordType: QueryFixture.postType, predicate: QueryPredicate(value: true))
        await expectFogError(.zoneNotFound) { try await db.records(matching: all, inZoneWith: other) }
        #expect(try store.admin.checkIntegrity().isSound)
        try await Self.checkAllShapes(
            db, container: container, admin: store.admin, names: blog.map(\.name), label: "zone Blog after deleting Other")

        // The zone comes back empty: no stale entry answers any query.
        try await db.save(RecordZone(zoneID: other))
        let ctx = ShapeContext(
            zone: other, authors: QueryFixture.authorIDs(in: other), authorRecords: QueryFixture.makeAuthors(in: other), posts: inOther,
            me: try await container.userRecordID())
        for shape in QueryTable.shapes(ctx) {
            let records = try await db.records(matching: try shape.query(), inZoneWith: other, resultsLimit: 5)
            #expect(records.matchResults.isEmpty, "recreated zone: \(shape.name) found \(records.matchResults.map { $0.0.recordName })")
            #expect(records.queryCursor == nil)
        }
        // New records under the old names are found as themselves.
        let again = try await QueryFixture.populate(db, count: 20, seed: 313, zone: other)
        try await Self.checkAllShapes(
            db, container: container, admin: store.admin, names: again.map(\.name), zone: other, label: "zone Other recreated")
    }

    @Test func removingAndReAddingIndexes() async throws {
        let container = store.container
        let db = container.privateCloudDatabase
        try await QueryFixture.declareIndexes(store.admin)
        let refs = try await QueryFixture.populate(db, count: 60, seed: 321)
        let names = refs.map(\.name)
        // Production gets the schema, and the same records of its own.
        try await store.admin.deploySchema()
        let production = try store.productionContainer(user: container.userIdentity)
        let productionAdmin = try store.productionAdministrator()
        defer {
            production.close()
            productionAdmin.close()
        }
        let prod = production.privateCloudDatabase
        _ = try await QueryFixture.populate(prod, count: 60, seed: 321)
        /// Sets indexes in both environments.
        func setIndexes(_ options: IndexOptions, forField field: String) async throws {
            for admin in [store.admin, productionAdmin] {
                try await admin.setIndexes(options, forField: field, ofRecordType: QueryFixture.postType)
            }
        }
        let paris = QueryFixture.paris
        let distance = try QueryPredicate(format: "distanceToLocation:fromLocation:(location, %@) < 40", paris)
        let cases: [(String, QueryPredicate, RefCond)] = [
            ("score == 3", try QueryPredicate(format: "score == 3"), .compare("score", .eq, .int64(3))),
            ("score > 5", try QueryPredicate(format: "score > 5"), .compare("score", .gt, .int64(5))),
            ("self CONTAINS 'swift zebra'", try QueryPredicate(format: "self CONTAINS 'swift zebra'"), .tokens("swift zebra", all: false)),
            ("distance < 40", distance, .within("location", paris, km: 40, inclusive: false)),
        ]
        var searchable: Set<String> = ["title", "body", "authorName", "tags"]

        func verify(_ db: Database, _ label: String) async throws {
            let current = try await QueryRunner.fetch(db, names: names, in: Self.zone)
            for (format, predicate, cond) in cases {
                let q = Query(recordType: QueryFixture.postType, predicate: predicate)
                q.sortDescriptors = format == "score > 5" ? [.init(key: "score", ascending: false)] : nil
                let got = try await QueryRunner.all(db, q, in: Self.zone, limit: 7, context: "\(label) \(format)").map(
                    \.recordID.recordName)
                let want = current.filter { RefEval.matches(cond, $0, searchFields: searchable) }
                #expect(Set(got) == Set(want.map(\.name)), "\(label): \(format)")
                if let sorts = q.sortDescriptors {
                    #expect(got == RefEval.sorted(want, by: sorts).map(\.name), "\(label): \(format) order")
                }
            }
            #expect(try store.admin.checkIntegrity().isSound, "\(label)")
            #expect(try productionAdmin.checkIntegrity().isSound, "\(label)")
        }

        func scramble(_ db: Database, _ seed: UInt64) async throws {
            var rng = SplitMix64(seed: seed)
            for _ in 0..<20 {
                let record = try await db.record(for: Record.ID(recordName: rng.pick(names), zoneID: Self.zone))
                record.setFieldValue(rng.chance(0.8) ? .int64(Int64(rng.int(-3...12))) : nil, forKey: "score")
                record.setFieldValue(
                    rng.chance(0.8) ? .string(rng.pick(QueryFixture.words) + " " + rng.pick(QueryFixture.words)) : nil, forKey: "title")
                record.setFieldValue(rng.chance(0.8) ? .location(QueryFixture.randomLocation(&rng)) : nil, forKey: "location")
                try await db.save(record)
            }
        }

        try await verify(db, "all indexes")
        try await verify(prod, "all indexes, production")

        // Remove score's indexes, title's SEARCHABLE and the location index.
        try await setIndexes([], forField: "score")
        try await setIndexes([.queryable, .sortable], forField: "title")
        try await setIndexes([], forField: "location")
        searchable.remove("title")
        #expect(try store.admin.indexes(ofRecordType: QueryFixture.postType)["score"] ?? [] == [])
        #expect(try store.admin.indexes(ofRecordType: QueryFixture.postType)["title"] == [.queryable, .sortable])
        try await verify(db, "indexes removed, development")
        for (format, predicate, _) in cases where !format.hasPrefix("self") {
            let q = Query(recordType: QueryFixture.postType, predicate: predicate)
            await expectFogError(.invalidArguments, "production without the index: \(format)") {
                try await prod.records(matching: q, inZoneWith: Self.zone)
            }
            let plan = try db.explain(q, inZoneWith: Self.zone)
            #expect(plan.scansRecordType && !plan.missingIndexes.isEmpty, "\(format)\n\(plan)")
        }
        // Token search still works in production: body, authorName and tags are searchable.
        let search = Query(recordType: QueryFixture.postType, predicate: cases[2].1)
        #expect(try await prod.records(matching: search, inZoneWith: Self.zone, resultsLimit: 1).matchResults.count <= 1)

        // Change the data while the indexes are gone, then add them back: they are rebuilt.
        try await scramble(db, 322)
        try await scramble(prod, 322)
        try await verify(db, "indexes removed, after writes")
        for admin in [store.admin, productionAdmin] {
            try await admin.setIndexes(QueryFixture.indexes, ofRecordType: QueryFixture.postType)
        }
        searchable.insert("title")
        try await verify(db, "indexes re-added, development")
        try await verify(prod, "indexes re-added, production")
        try await scramble(prod, 323)
        try await verify(prod, "indexes re-added, after writes, production")
        try await Self.checkAllShapes(db, container: container, admin: store.admin, names: names, label: "indexes re-added")
    }
}
