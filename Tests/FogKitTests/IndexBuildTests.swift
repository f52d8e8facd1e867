import FogKit
import FogKitTesting
import FogStorage
import Foundation
import Synchronization
import Testing

@testable import FogKit

/// Indexes declared on a record type that already has records are built in chunks, one
/// write transaction each; until the build is complete queries run as if the index did not
/// exist, and an interrupted build resumes.
@Suite struct IndexBuildTests {
    let store: TestStore

    init() throws { store = try TestStore() }

    static let type = "Item"

    struct Values: Equatable {
        var n: Int64
        var tag: String
        var body: String
    }

    static func record(_ name: String, _ v: Values) -> Record {
        let record = Record(recordType: type, recordID: Record.ID(recordName: name))
        record["n"] = v.n
        record["tag"] = v.tag
        record["body"] = v.body
        return record
    }

    static func values(_ i: Int) -> Values { Values(n: Int64(i), tag: "t\(i % 10)", body: "word\(i % 7) common") }

    static func name(_ i: Int) -> String { String(format: "item-%05d", i) }

    /// The record type, declared without indexes (so that development's saves do not give
    /// its fields default indexes): the tests add them.
    static let schema = "DEFINE SCHEMA RECORD TYPE Item (body STRING, n INT64, other STRING, tag STRING);"

    static func declare(_ store: TestStore) async throws {
        try await store.admin.importSchema(try Schema(parsing: schema))
    }

    /// Saves `count` records, 400 per request; returns the model of what is stored.
    func populate(_ count: Int) async throws -> [String: Values] {
        try await Self.declare(store)
        var model: [String: Values] = [:]
        var batch: [Record] = []
        for i in 0..<count {
            model[Self.name(i)] = Self.values(i)
            batch.append(Self.record(Self.name(i), Self.values(i)))
            if batch.count == 400 || i == count - 1 {
                _ = try await store.privateDatabase.modifyRecords(saving: batch, deleting: [], atomically: false)
                batch = []
            }
        }
        return model
    }

    /// The names of every record `query` returns, following cursors.
    static func names(_ db: Database, _ query: Query) async throws -> [String] {
        var names: [String] = []
        var page = try await db.records(matching: query, inZoneWith: nil, resultsLimit: 400)
        while true {
            names += page.matchResults.map(\.0.recordName)
            guard let cursor = page.queryCursor else { return names }
            page = try await db.records(continuingMatchFrom: cursor, resultsLimit: 400)
        }
    }

    static func query(_ format: String, _ args: [Any], sorts: [Query.SortDescriptor] = []) throws -> Query {
        let query = Query(recordType: type, predicate: try QueryPredicate(format: format, argumentArray: args))
        query.sortDescriptors = sorts
        return query
    }

    /// Checks the queries that need the new indexes against `model`, on `db`.
    static func checkResults(_ db: Database, _ model: [String: Values], _ label: String) async throws {
        for tag in ["t0", "t3", "t9", "new"] {
            let got = try await names(db, try query("tag == %@", [tag]))
            #expect(Set(got) == Set(model.filter { $0.value.tag == tag }.keys), "\(label): tag \(tag)")
        }
        let ordered = try await names(db, try query("n >= %@", [Int64(2_500)], sorts: [Query.SortDescriptor(key: "n")]))
        let expected = model.filter { $0.value.n >= 2_500 }.sorted { ($0.value.n, $0.key) < ($1.value.n, $1.key) }.map(\.key)
        #expect(ordered == expected, "\(label): n >= 2500 in order")
        let search = try await names(db, try query("self CONTAINS %@", ["word3"]))
        #expect(Set(search) == Set(model.filter { $0.value.body.contains("word3") }.keys), "\(label): search")
    }

    static let newIndexes: [Record.FieldKey: IndexOptions] = ["tag": .queryable, "n": [.queryable, .sortable], "body": .searchable]

    @Test func buildsInChunksAndMatchesAScan() async throws {
        let model = try await populate(5_000)
        let indexes = store.admin.engine.indexes
        indexes.buildTuning.withLock { $0 = IndexBuildTuning(chunkSize: 1_000) }
        try await store.admin.setIndexes(Self.newIndexes, ofRecordType: Self.type)
        // 5 chunks of 1,000 records, then one that finds none left.
        #expect(indexes.buildTuning.withLock { $0.chunksBuilt } == 6)
        #expect(try store.admin.indexes(ofRecordType: Self.type) == Self.newIndexes)
        #expect(try store.admin.indexStates(ofRecordType: Self.type) == ["tag": .ready, "n": .ready, "body": .ready])
        try await Self.checkResults(store.privateDatabase, model, "development, built")
        let plan = try store.privateDatabase.explain(try Self.query("tag == %@", ["t1"]), inZoneWith: nil)
        #expect(!plan.scansRecordType && plan.missingIndexes.isEmpty, "\(plan)")
        let report = try store.admin.checkIntegrity()
        #expect(report.isSound, "\(report)")
    }

    @Test func productionRefusesABuildingIndex() async throws {
        try await Self.declare(store)
        try await store.admin.deploySchema()
        let production = try store.productionContainer()
        let admin = try store.productionAdministrator()
        defer {
            production.close()
            admin.close()
        }
        var model: [String: Values] = [:]
        var batch: [Record] = []
        for i in 0..<1_200 {
            model[Self.name(i)] = Self.values(i)
            batch.append(Self.record(Self.name(i), Self.values(i)))
        }
        for chunk in stride(from: 0, to: batch.count, by: 400) {
            _ = try await production.privateCloudDatabase.modifyRecords(
                saving: Array(batch[chunk..<chunk + 400]), deleting: [], atomically: false)
        }
        admin.engine.indexes.buildTuning.withLock { $0 = IndexBuildTuning(chunkSize: 500, stopAfterChunks: 1) }
        try await admin.setIndexes(Self.newIndexes, ofRecordType: Self.type)
        for (format, args) in [("tag == %@", ["t3"]), ("n >= %@", [Int64(10)]), ("self CONTAINS %@", ["word3"])] as [(String, [Any])] {
            await expectFogError(.invalidArguments, "production while building: \(format)") {
                try await production.privateCloudDatabase.records(matching: try Self.query(format, args), inZoneWith: nil)
            }
        }
        admin.engine.indexes.buildTuning.withLock { $0.stopAfterChunks = nil }
        try await admin.resumeIndexBuilds()
        try await Self.checkResults(production.privateCloudDatabase, model, "production, built")
    }

    @Test func interruptedBuildIsUnusedAndResumes() async throws {
        var model = try await populate(3_000)
        let db = store.privateDatabase
        let indexes = store.admin.engine.indexes
        indexes.buildTuning.withLock { $0 = IndexBuildTuning(chunkSize: 500, stopAfterChunks: 1) }
        try await store.admin.setIndexes(Self.newIndexes, ofRecordType: Self.type)
        #expect(try store.admin.indexes(ofRecordType: Self.type) == Self.newIndexes)
        let states = try store.admin.indexStates(ofRecordType: Self.type)
        guard case .building(let done)? = states["tag"] else {
            Issue.record("tag is \(String(describing: states["tag"]))")
            return
        }
        #expect(done > 0)
        #expect(states["n"] == .building(lastRowDone: done) && states["body"] == .building(lastRowDone: done))

        // While building: development scans (production refuses, `productionRefusesABuildingIndex`).
        for (format, args) in [("tag == %@", ["t3"]), ("n >= %@", [Int64(10)]), ("self CONTAINS %@", ["word3"])] as [(String, [Any])] {
            let plan = try db.explain(try Self.query(format, args), inZoneWith: nil)
            #expect(plan.scansRecordType && !plan.missingIndexes.isEmpty, "\(format)\n\(plan)")
        }
        try await Self.checkResults(db, model, "development, building")
        #expect(try store.admin.checkIntegrity().isSound)

        // Saves between chunks: records the builder has passed (the first ones) and not yet
        // reached (the last ones), updated on the indexed fields or on others, deleted, and new.
        func change(_ round: Int) async throws {
            var saves: [Record] = []
            var deletes: [Record.ID] = []
            for i in [round, 2_990 - round, 2_000 + round] {  // tag changed
                let record = try await db.record(for: Record.ID(recordName: Self.name(i)))
                var v = model[Self.name(i)]!
                v.tag = "new"
                v.n += 10_000
                v.body = "word3 changed"
                record["tag"] = v.tag
                record["n"] = v.n
                record["body"] = v.body
                model[Self.name(i)] = v
                saves.append(record)
            }
            for i in [10 + round, 2_980 - round] {  // only an unindexed field changed
                let record = try await db.record(for: Record.ID(recordName: Self.name(i)))
                record["other"] = "x"
                saves.append(record)
            }
            for i in [20 + round, 2_970 - round] {  // deleted
                deletes.append(Record.ID(recordName: Self.name(i)))
                model[Self.name(i)] = nil
            }
            for i in 0..<3 {  // new
                let n = 5_000 + round * 10 + i
                model[Self.name(n)] = Self.values(n)
                saves.append(Self.record(Self.name(n), Self.values(n)))
            }
            _ = try await db.modifyRecords(saving: saves, deleting: deletes, atomically: true)
        }
        try await change(1)
        // One more chunk (the next setIndexes call resumes the build), then more changes.
        try await store.admin.setIndexes(Self.newIndexes, ofRecordType: Self.type)
        guard case .building(let later)? = try store.admin.indexStates(ofRecordType: Self.type)["tag"] else {
            Issue.record("the build should still be going")
            return
        }
        #expect(later > done)
        try await change(2)
        #expect(try store.admin.checkIntegrity().isSound)
        try await Self.checkResults(db, model, "development, building after changes")

        // Reopening: a new administrator on the store resumes and completes the build.
        store.admin.engine.indexes.buildTuning.withLock { $0.stopAfterChunks = nil }
        let reopened = try Container.Administrator(
            identifier: "iCloud.test", store: store.location, configuration: .init(durability: .none))
        defer { reopened.close() }
        reopened.engine.indexes.buildTuning.withLock { $0 = IndexBuildTuning(chunkSize: 500) }
        #expect(try reopened.indexStates(ofRecordType: Self.type)["tag"] == .building(lastRowDone: later))
        try await reopened.resumeIndexBuilds()
        #expect(try reopened.indexStates(ofRecordType: Self.type) == ["tag": .ready, "n": .ready, "body": .ready])
        try await Self.checkResults(db, model, "development, resumed")
        let report = try reopened.checkIntegrity()
        #expect(report.isSound, "\(report)")
    }

    @Test func removingAndChangingDuringABuild() async throws {
        let model = try await populate(1_200)
        let indexes = store.admin.engine.indexes
        indexes.buildTuning.withLock { $0 = IndexBuildTuning(chunkSize: 300, stopAfterChunks: 1) }
        try await store.admin.setIndexes(Self.newIndexes, ofRecordType: Self.type)
        // Changing a building index's options builds it again from the start; removing one
        // drops its entries. (No chunk runs in this call.)
        store.admin.engine.indexes.buildTuning.withLock { $0.stopAfterChunks = 0 }
        try await store.admin.setIndexes(["tag": [.queryable, .sortable], "body": []], ofRecordType: Self.type)
        let states = try store.admin.indexStates(ofRecordType: Self.type)
        #expect(states["tag"] == .building(lastRowDone: 0) && states["body"] == nil, "\(states)")
        guard case .building(let done)? = states["n"] else {
            Issue.record("n is \(String(describing: states["n"]))")
            return
        }
        #expect(done > 0)
        #expect(try store.admin.checkIntegrity().isSound)
        indexes.buildTuning.withLock { $0.stopAfterChunks = nil }
        try await store.admin.resumeIndexBuilds()
        #expect(try store.admin.indexStates(ofRecordType: Self.type) == ["tag": .ready, "n": .ready])
        #expect(try store.admin.indexes(ofRecordType: Self.type) == ["tag": [.queryable, .sortable], "n": [.queryable, .sortable]])
        let got = try await Self.names(store.privateDatabase, try Self.query("tag == %@", ["t4"]))
        #expect(Set(got) == Set(model.filter { $0.value.tag == "t4" }.keys))
        #expect(try store.admin.checkIntegrity().isSound)
    }

    /// The number of `indexes` entries (key, row) of the type's field `field` (-1: tokens).
    func entryCount(field: String?) throws -> Int { try Self.entryCount(store, field: field) }

    static func entryCount(_ store: TestStore, field: String?) throws -> Int {
        let engine = store.admin.engine
        return try engine.indexes.read { txn, names in
            guard let type = try names.id(Self.type) else { return 0 }
            let fieldID: Int64
            if let field {
                guard let id = try names.id(field) else { return 0 }
                fieldID = id
            } else {
                fieldID = Layout.tokensField
            }
            var count = 0
            var zones: [Int64] = []
            try txn.scan(engine.indexes.zoneIDTable) { key, _ in
                zones.append(try readBigEndianKey(key))
                return true
            }
            for zone in zones {
                try txn.scan(engine.indexes.indexTable, range: .prefix(Layout.indexFieldPrefix(zone: zone, type: type, field: fieldID))) {
                    _, _ in
                    count += 1
                    return true
                }
            }
            return count
        }
    }

    /// Saves the records of `model`, 400 per request.
    static func save(_ model: [String: Values], to store: TestStore) async throws {
        try await declare(store)
        var batch: [Record] = []
        for (name, v) in model.sorted(by: { $0.key < $1.key }) {
            batch.append(Self.record(name, v))
            if batch.count == 400 {
                _ = try await store.privateDatabase.modifyRecords(saving: batch, deleting: [], atomically: false)
                batch = []
            }
        }
        if !batch.isEmpty { _ = try await store.privateDatabase.modifyRecords(saving: batch, deleting: [], atomically: false) }
    }

    @Test func removalRunsInChunksAndLeavesNoEntry() async throws {
        let model = try await populate(5_000)
        let indexes = store.admin.engine.indexes
        try await store.admin.setIndexes(Self.newIndexes, ofRecordType: Self.type)
        #expect(try entryCount(field: "tag") == 5_000 && entryCount(field: nil) > 0)
        indexes.buildTuning.withLock { $0 = IndexBuildTuning(chunkSize: 1_000) }
        try await store.admin.setIndexes(["tag": [], "body": []], ofRecordType: Self.type)
        // tag: 5,000 entries; the tokens: more; 1,000 (key, row) pairs per transaction.
        #expect(indexes.buildTuning.withLock { $0.chunksBuilt } > 5)
        #expect(try entryCount(field: "tag") == 0 && entryCount(field: nil) == 0)
        #expect(try store.admin.indexes(ofRecordType: Self.type) == ["n": [.queryable, .sortable]])
        #expect(try store.admin.indexStates(ofRecordType: Self.type) == ["n": .ready])
        let ordered = try await Self.names(
            store.privateDatabase, try Self.query("n >= %@", [Int64(4_000)], sorts: [Query.SortDescriptor(key: "n")]))
        #expect(ordered == model.filter { $0.value.n >= 4_000 }.sorted { $0.value.n < $1.value.n }.map(\.key))
        let report = try store.admin.checkIntegrity()
        #expect(report.isSound, "\(report)")
    }

    @Test func changingOptionsOfAReadyIndexMatchesAFreshBuild() async throws {
        // Long tags: queryable alone keys them by hash, sortable by value.
        let long = String(repeating: "x", count: 600)
        var model: [String: Values] = [:]
        for i in 0..<2_000 {
            var v = Self.values(i)
            if i % 50 == 0 { v.tag = long + "\(i % 3)" }
            model[Self.name(i)] = v
        }
        try await Self.save(model, to: store)
        try await store.admin.setIndexes(["tag": .queryable, "n": [.queryable, .sortable], "body": .searchable], ofRecordType: Self.type)
        let indexes = store.admin.engine.indexes
        indexes.buildTuning.withLock { $0 = IndexBuildTuning(chunkSize: 300) }
        // Added and removed options on ready indexes.
        try await store.admin.setIndexes(
            ["tag": [.queryable, .sortable, .searchable], "n": .queryable, "body": []], ofRecordType: Self.type)
        #expect(indexes.buildTuning.withLock { $0.chunksBuilt } > 2)
        let changed = try store.admin.indexes(ofRecordType: Self.type)
        #expect(try store.admin.indexStates(ofRecordType: Self.type) == ["tag": .ready, "n": .ready])
        let report = try store.admin.checkIntegrity()
        #expect(report.isSound, "\(report)")

        // A fresh build of the same options, on a second store with the same records.
        let fresh = try TestStore()
        try await Self.save(model, to: fresh)
        try await fresh.admin.setIndexes(changed, ofRecordType: Self.type)
        let queries: [Query] = [
            try Self.query("tag == %@", ["t3"]), try Self.query("tag == %@", [long + "1"]),
            try Self.query("tag >= %@", [long], sorts: [Query.SortDescriptor(key: "tag")]),
            try Self.query("n == %@", [Int64(77)]), try Self.query("self CONTAINS %@", ["t4"]),
            try Self.query("self CONTAINS %@", ["word3"]),
        ]
        for query in queries {
            let got = try await Self.names(store.privateDatabase, query)
            let want = try await Self.names(fresh.privateDatabase, query)
            #expect(got == want, "\(query.predicate)")
            let plan = try store.privateDatabase.explain(query, inZoneWith: nil)
            let freshPlan = try fresh.privateDatabase.explain(query, inZoneWith: nil)
            #expect(plan.scansRecordType == freshPlan.scansRecordType, "\(query.predicate)")
        }
        #expect(try await Self.names(store.privateDatabase, try Self.query("tag == %@", [long + "1"])).count > 0)
        // No stale entry: as many as the fresh build wrote.
        #expect(try Self.entryCount(store, field: "tag") == Self.entryCount(fresh, field: "tag"))
        #expect(try Self.entryCount(store, field: "n") == Self.entryCount(fresh, field: "n"))
        #expect(try Self.entryCount(store, field: "body") == 0)
        #expect(try Self.entryCount(store, field: nil) == Self.entryCount(fresh, field: nil))
    }

    @Test func interruptedRemovalResumes() async throws {
        _ = try await populate(3_000)
        let indexes = store.admin.engine.indexes
        try await store.admin.setIndexes(Self.newIndexes, ofRecordType: Self.type)
        indexes.buildTuning.withLock { $0 = IndexBuildTuning(chunkSize: 500, stopAfterChunks: 2) }
        try await store.admin.setIndexes(["tag": []], ofRecordType: Self.type)
        // The definition is gone at once; some entries are left, and the store is sound.
        #expect(try store.admin.indexes(ofRecordType: Self.type) == ["n": [.queryable, .sortable], "body": .searchable])
        let left = try entryCount(field: "tag")
        #expect(left > 0 && left < 3_000, "\(left)")
        let plan = try store.privateDatabase.explain(try Self.query("tag == %@", ["t1"]), inZoneWith: nil)
        #expect(plan.scansRecordType, "\(plan)")
        var report = try store.admin.checkIntegrity()
        #expect(report.isSound, "\(report)")
        // Saves during the removal.
        let record = try await store.privateDatabase.record(for: Record.ID(recordName: Self.name(2_999)))
        record["tag"] = "new"
        _ = try await store.privateDatabase.modifyRecords(
            saving: [record, Self.record("extra", Self.values(7))], deleting: [], atomically: true)
        report = try store.admin.checkIntegrity()
        #expect(report.isSound, "\(report)")
        // The next setIndexes call (options unchanged) resumes, one more chunk.
        try await store.admin.setIndexes(["n": [.queryable, .sortable]], ofRecordType: Self.type)
        #expect(try entryCount(field: "tag") < left)
        indexes.buildTuning.withLock { $0.stopAfterChunks = nil }
        try await store.admin.resumeIndexBuilds()
        #expect(try entryCount(field: "tag") == 0)
        report = try store.admin.checkIntegrity()
        #expect(report.isSound, "\(report)")
    }
}
