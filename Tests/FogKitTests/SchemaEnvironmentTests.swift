import FogKit
import FogKitTesting
import Foundation
import Testing

/// The schema catalog and CloudKit's two environments: just-in-time types in development,
/// refusals in production, import, deployment and the development reset
/// (`Docs/Schema.md`).
@Suite struct SchemaEnvironmentTests {
    let store: TestStore
    var admin: Container.Administrator { store.admin }

    init() throws { store = try TestStore() }

    static let notes = """
        DEFINE SCHEMA
            CREATE ROLE Editor;
            RECORD TYPE Note (
                "___recordID" REFERENCE QUERYABLE,
                body STRING SEARCHABLE,
                count NUMBER,
                pinned INT64 QUERYABLE,
                secret ENCRYPTED STRING,
                tags LIST<STRING> QUERYABLE,
                title STRING QUERYABLE SORTABLE,
                GRANT READ TO "_world",
                GRANT READ, CREATE, WRITE TO Editor
            );
        """

    static func note(_ name: String, title: String) -> Record {
        let record = Record(recordType: "Note", recordID: Record.ID(recordName: name))
        record["title"] = title
        return record
    }

    // MARK: - Development

    @Test func developmentCreatesTypesFieldsDefaultIndexesAndGrantsJustInTime() async throws {
        let record = Record(recordType: "Post", recordID: Record.ID(recordName: "p1"))
        record["title"] = "Hello"
        record["score"] = 3
        record["when"] = Date(timeIntervalSinceReferenceDate: 0)
        record["author"] = Record.Reference(recordID: Record.ID(recordName: "a1"), action: .none)
        record["tags"] = ["a", "b"]
        record["photo"] = Data([1, 2, 3])
        try await store.privateDatabase.save(record)

        let post = try #require(try admin.schema(for: .development).recordTypes["Post"])
        #expect(post.fields["title"] == Schema.Field(.string, indexes: [.queryable, .searchable, .sortable]))
        #expect(post.fields["score"] == Schema.Field(.int64, indexes: [.queryable, .sortable]))
        #expect(post.fields["when"] == Schema.Field(.timestamp, indexes: [.queryable, .sortable]))
        #expect(post.fields["author"] == Schema.Field(.reference, indexes: .queryable))
        #expect(post.fields["tags"] == Schema.Field(.list(.string), indexes: .queryable))
        #expect(post.fields["photo"] == Schema.Field(.bytes))
        #expect(post.grants == [.creator: .write, .authenticated: .create, .world: .read])
        // The Users type of the container's user is in the schema too.
        #expect(try admin.schema(for: .development).recordTypes["Users"]?.grants == [.creator: .write, .world: .read])

        // The just-in-time indexes serve queries at once.
        let plan = try store.privateDatabase.explain(
            Query(recordType: "Post", predicate: try QueryPredicate(format: "score > 1")), inZoneWith: nil)
        #expect(!plan.scansRecordType && plan.missingIndexes.isEmpty, "\(plan)")
    }

    @Test func aFieldAddedToATypeWithRecordsIsIndexedForTheOlderRecordsToo() async throws {
        let db = store.privateDatabase
        for i in 0..<30 { try await db.save(Self.note("n\(i)", title: "t\(i)")) }
        let later = Self.note("n30", title: "t30")
        later["rank"] = 5
        try await db.save(later)
        #expect(try admin.indexStates(ofRecordType: "Note")["rank"] == .ready)
        // Sorting on the new field finds the records without it too (first), through the index.
        let query = Query(recordType: "Note", predicate: QueryPredicate(value: true))
        query.sortDescriptors = [Query.SortDescriptor(key: "rank", ascending: false)]
        try await admin.setIndexes(.queryable, forField: "recordName", ofRecordType: "Note")
        let (results, _) = try await db.records(matching: query, inZoneWith: nil, resultsLimit: 50)
        #expect(results.count == 31)
        #expect(results.first?.0.recordName == "n30")
        #expect(try admin.checkIntegrity().isSound)
    }

    // MARK: - Import

    @Test func importedSchemaPrintsTheSameTextAndGovernsSaves() async throws {
        let schema = try Schema(parsing: Self.notes)
        try await admin.importSchema(schema)
        let exported = try admin.schema(for: .development)
        #expect(exported.recordTypes["Note"] == schema.recordTypes["Note"])
        #expect(exported.roles == schema.roles)
        // Import → export → import is byte-identical.
        try await admin.importSchema(try Schema(parsing: exported.description))
        #expect(try admin.schema(for: .development).description == exported.description)

        // A NUMBER takes the first number saved, and keeps it.
        let record = Self.note("n1", title: "a")
        record["count"] = 2.5
        try await store.privateDatabase.save(record)
        #expect(
            try admin.schema(for: .development).recordTypes["Note"]?.fields["count"]?.type == .primitive(.number(preferredAs: .double)))
        let wrong = Self.note("n2", title: "b")
        wrong["count"] = 3
        let error = await expectFogError(.invalidArguments) { try await store.privateDatabase.save(wrong) }
        #expect(error?.message.contains("count") == true, "\(error?.message ?? "")")
        // A declared field keeps its declared indexes: no default ones.
        #expect(try admin.indexes(ofRecordType: "Note")["pinned"] == .queryable)
    }

    @Test func importRefusesTypeChangesAndInvalidSchemas() async throws {
        try await store.privateDatabase.save(Self.note("n1", title: "a"))
        let before = try admin.schema(for: .development)
        let changed = try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Note (title INT64);")
        let error = await expectFogError(.invalidArguments) { try await admin.importSchema(changed) }
        #expect(error?.message.contains("Note.title") == true, "\(error?.message ?? "")")
        var bad = Schema()
        bad.recordTypes["Note"] = Schema.RecordType(fields: ["title": Schema.Field(.int64, indexes: .searchable)], grants: ["Ghost": .read])
        let invalid = await expectFogError(.invalidArguments) { try await admin.importSchema(bad) }
        #expect(invalid?.message.contains("Ghost") == true && invalid?.message.contains("SEARCHABLE") == true, "\(invalid?.message ?? "")")
        #expect(try admin.schema(for: .development) == before)
    }

    @Test func importRemovesWhatTheSchemaDoesNotName() async throws {
        try await admin.importSchema(try Schema(parsing: Self.notes))
        try await admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Note (title STRING QUERYABLE);"))
        let schema = try admin.schema(for: .development)
        #expect(schema.roles.isEmpty)
        #expect(schema.recordTypes["Note"]?.fields.keys.sorted() == ["title"])
        #expect(try admin.indexes(ofRecordType: "Note") == ["title": .queryable])
        // A removed field is retired: it comes back only with its type (records may hold values).
        let record = Self.note("n1", title: "a")
        record["pinned"] = "yes"
        await expectFogError(.invalidArguments) { try await store.privateDatabase.save(record) }
        record["pinned"] = 1
        try await store.privateDatabase.save(record)
        #expect(
            try admin.schema(for: .development).recordTypes["Note"]?.fields["pinned"]
                == Schema.Field(.int64, indexes: [.queryable, .sortable]))
    }

    @Test func aRemovedFieldCannotComeBackWithAnotherTypeThroughTwoImports() async throws {
        try await admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Note (title STRING, level INT64);"))
        let record = Self.note("n1", title: "a")
        record["level"] = 3
        try await store.privateDatabase.save(record)
        try await admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Note (title STRING);"))
        #expect(try admin.checkIntegrity().isSound, "the record's level is a retired field's value")
        let error = await expectFogError(.invalidArguments) {
            try await admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Note (title STRING, level STRING);"))
        }
        #expect(error?.message.contains("Note.level") == true, "\(error?.message ?? "")")
        try await admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Note (title STRING, level INT64 QUERYABLE);"))
        #expect(try admin.schema(for: .development).recordTypes["Note"]?.fields["level"] == Schema.Field(.int64, indexes: .queryable))
        #expect(try admin.checkIntegrity().isSound)
        // After a reset nothing is retired.
        try await admin.resetDevelopmentEnvironment()
        let again = Self.note("n2", title: "b")
        again["level"] = "high"
        try await store.privateDatabase.save(again)
        #expect(try admin.schema(for: .development).recordTypes["Note"]?.fields["level"]?.type == .string)
    }

    @Test func containersAlreadyOpenSeeAFieldRedeclaredWithAnotherType() async throws {
        let db = store.privateDatabase
        let record = Self.note("n1", title: "a")
        record["level"] = 1
        try await db.save(record)
        let byNumber = Query(recordType: "Note", predicate: try QueryPredicate(format: "level == 1"))
        #expect(try await db.records(matching: byNumber, inZoneWith: nil).matchResults.count == 1)
        try await admin.resetDevelopmentEnvironment()
        let again = Self.note("n2", title: "b")
        again["level"] = "high"
        try await db.save(again)
        let byText = Query(recordType: "Note", predicate: try QueryPredicate(format: "level == 'high'"))
        #expect(try await db.records(matching: byText, inZoneWith: nil).matchResults.map(\.0.recordName) == ["n2"])
        await expectFogError(.invalidArguments) { try await db.records(matching: byNumber, inZoneWith: nil) }
    }

    // MARK: - Production

    @Test func productionKeepsItsOwnDataAndRefusesUnknownTypesAndFields() async throws {
        try await store.privateDatabase.save(Self.note("dev-only", title: "development"))
        try await admin.deploySchema()
        let production = try store.productionContainer()
        defer { production.close() }
        let db = production.privateCloudDatabase
        await expectFogError(.unknownItem) { try await db.record(for: Record.ID(recordName: "dev-only")) }

        try await db.save(Self.note("p1", title: "production"))
        let ghost = Record(recordType: "Ghost", recordID: Record.ID(recordName: "g1"))
        let unknownType = await expectFogError(.unknownItem) { try await db.save(ghost) }
        #expect(unknownType?.message.contains("Ghost") == true)
        let extra = Self.note("p2", title: "x")
        extra["mood"] = "happy"
        let unknownField = await expectFogError(.invalidArguments) { try await db.save(extra) }
        #expect(unknownField?.message.contains("mood") == true, "\(unknownField?.message ?? "")")
        await expectFogError(.unknownItem) { try await db.record(for: Record.ID(recordName: "p2")) }
        // An atomic batch with one unknown field stores nothing of the zone.
        let zone = RecordZone(zoneName: "Atomic")
        try await db.save(zone)
        let good = Record(recordType: "Note", recordID: Record.ID(recordName: "a1", zoneID: zone.zoneID))
        good["title"] = "fine"
        let bad = Record(recordType: "Note", recordID: Record.ID(recordName: "a2", zoneID: zone.zoneID))
        bad["mood"] = "x"
        let partial = await expectFogError(.partialFailure) {
            try await db.modifyRecords(saving: [good, bad], deleting: [], atomically: true)
        }
        #expect((partial?.partialErrorsByItemID?[bad.recordID] as? FogError)?.code == .invalidArguments)
        #expect((partial?.partialErrorsByItemID?[good.recordID] as? FogError)?.code == .batchRequestFailed)
        await expectFogError(.unknownItem) { try await db.record(for: good.recordID) }
        // Development never sees production's records.
        await expectFogError(.unknownItem) { try await store.privateDatabase.record(for: Record.ID(recordName: "p1")) }
        #expect(try store.productionAdministrator().checkIntegrity().isSound)
    }

    @Test func deploymentIsAdditiveAndNamesEveryLoss() async throws {
        try await admin.importSchema(try Schema(parsing: Self.notes))
        try await admin.deploySchema()
        #expect(try admin.schema(for: .production) == (try admin.schema(for: .development)))

        // Additions deploy.
        let grown = Self.notes.replacingOccurrences(of: "tags LIST<STRING> QUERYABLE,", with: "tags LIST<STRING> QUERYABLE, extra DOUBLE,")
        try await admin.importSchema(try Schema(parsing: grown))
        try await admin.deploySchema()
        #expect(try admin.schema(for: .production).recordTypes["Note"]?.fields["extra"]?.type == .double)

        // Removals and type changes do not; production stays as it was. A NUMBER that each
        // environment pinned differently is a type change.
        let pinnedInDevelopment = Self.note("n1", title: "a")
        pinnedInDevelopment["count"] = 2.5
        try await store.privateDatabase.save(pinnedInDevelopment)
        let production = try store.productionContainer()
        defer { production.close() }
        let pinnedInProduction = Self.note("n1", title: "a")
        pinnedInProduction["count"] = 3
        try await production.privateCloudDatabase.save(pinnedInProduction)
        let deployed = try admin.schema(for: .production)
        try await admin.importSchema(
            try Schema(
                parsing:
                    "DEFINE SCHEMA CREATE ROLE Editor; RECORD TYPE Note (title STRING, extra DOUBLE, count NUMBER PREFERRED AS DOUBLE);"))
        let error = await expectFogError(.invalidArguments) { try await admin.deploySchema() }
        let message = error?.message ?? ""
        for name in ["Note.tags", "Note.pinned", "Note.secret", "Note.body", "Note.count changes"] {
            #expect(message.contains(name), "\(name) in \(message)")
        }
        #expect(!message.contains("Note.title") && !message.contains("Note.extra"), "\(message)")
        #expect(try admin.schema(for: .production) == deployed)
    }

    @Test func productionIndexesAreBuiltForItsRecordsOnDeployment() async throws {
        try await admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Note (title STRING);"))
        try await admin.deploySchema()
        let production = try store.productionContainer()
        defer { production.close() }
        let db = production.privateCloudDatabase
        for i in 0..<50 { try await db.save(Self.note("n\(i)", title: i % 2 == 0 ? "even" : "odd")) }
        let query = Query(recordType: "Note", predicate: try QueryPredicate(format: "title == 'even'"))
        await expectFogError(.invalidArguments) { try await db.records(matching: query, inZoneWith: nil) }
        try await admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Note (title STRING QUERYABLE);"))
        try await admin.deploySchema()
        let (results, _) = try await db.records(matching: query, inZoneWith: nil, resultsLimit: 100)
        #expect(results.count == 25)
    }

    // MARK: - Reset

    @Test func resetEmptiesDevelopmentAndRevertsItsSchemaToProduction() async throws {
        let db = store.privateDatabase
        let zone = RecordZone(zoneName: "Work")
        try await db.save(zone)
        try await db.save(Record(recordType: "Deployed", recordID: Record.ID(recordName: "d1", zoneID: zone.zoneID)))
        try await admin.deploySchema()
        let record = Record(recordType: "Later", recordID: Record.ID(recordName: "l1", zoneID: zone.zoneID))
        record["asset"] = Asset(fileURL: try Self.file(in: store.directory))
        try await db.save(record)
        let (_, _, token, _) = try await db.databaseChanges(since: nil)
        let (_, _, zoneToken, _) = try await db.recordZoneChanges(inZoneWith: zone.zoneID, since: nil)

        // A second container open on development sees the reset at once.
        let other = try store.container(user: "bob")
        try await admin.resetDevelopmentEnvironment()

        #expect(try admin.schema(for: .development) == (try admin.schema(for: .production)))
        #expect(try admin.schema(for: .development).recordTypes["Later"] == nil)
        await expectFogError(.zoneNotFound) { try await db.recordZone(for: zone.zoneID) }
        await expectFogError(.changeTokenExpired) { try await db.databaseChanges(since: token) }
        await expectFogError(.changeTokenExpired) { try await other.privateCloudDatabase.databaseChanges(since: token) }
        await expectFogError(.zoneNotFound) { try await db.recordZoneChanges(inZoneWith: zone.zoneID, since: zoneToken) }
        try await db.save(zone)
        await expectFogError(.changeTokenExpired) { try await db.recordZoneChanges(inZoneWith: zone.zoneID, since: zoneToken) }
        let assets = store.directory.appendingPathComponent("assets")
        #expect(try FileManager.default.contentsOfDirectory(atPath: assets.path).filter { !$0.hasPrefix(".") }.isEmpty)
        // Users stay, with their user records.
        let me = try await store.container.userRecordID()
        #expect(try await store.publicDatabase.record(for: me).recordType == "Users")
        // The field `Later.asset` is gone: it comes back just in time, with any type.
        let again = Record(recordType: "Later", recordID: Record.ID(recordName: "l2"))
        again["asset"] = "text now"
        try await other.privateCloudDatabase.save(again)
        #expect(try admin.checkIntegrity().isSound)
    }

    static func file(in directory: URL) throws -> URL {
        let url = directory.deletingLastPathComponent().appendingPathComponent("schema-asset-\(UUID().uuidString)")
        try Data("asset bytes".utf8).write(to: url)
        return url
    }

    // MARK: - Backup

    @Test func backupCopiesBothEnvironments() async throws {
        try await store.privateDatabase.save(Self.note("n1", title: "dev"))
        try await admin.deploySchema()
        let production = try store.productionContainer()
        try await production.privateCloudDatabase.save(Self.note("p1", title: "prod"))
        production.close()
        let copy = try TemporaryDirectory()
        try admin.backup(to: copy.url)
        let restored = try Container(
            identifier: "iCloud.test", directory: copy.url, user: "alice",
            configuration: .init(durability: .none, environment: .production))
        defer { restored.close() }
        #expect(try await restored.privateCloudDatabase.record(for: Record.ID(recordName: "p1"))["title"] as? String == "prod")
    }
}

/// Cases a review of the catalog found.
@Suite struct SchemaCatalogReviewTests {
    let store: TestStore
    var admin: Container.Administrator { store.admin }

    init() throws { store = try TestStore() }

    static func note(_ name: String, title: String) -> Record {
        let record = Record(recordType: "Note", recordID: Record.ID(recordName: name))
        record["title"] = title
        return record
    }

    @Test func aTypeAnImportRemovedComesBackWithItsOldRecordsIndexed() async throws {
        let db = store.privateDatabase
        for i in 0..<20 { try await db.save(Self.note("old\(i)", title: "same")) }
        try await admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Other (x STRING);"))
        #expect(try admin.schema(for: .development).recordTypes["Note"] == nil)
        let again = Self.note("new", title: "same")
        again["rank"] = 1
        try await db.save(again)
        // The type is back; its new field's index was built for the old records too, and the
        // index `title` gets again covers the old records (it is not taken as ready at once).
        #expect(try admin.schema(for: .development).recordTypes["Note"] != nil)
        let query = Query(recordType: "Note", predicate: try QueryPredicate(format: "title == 'same'"))
        let (results, _) = try await db.records(matching: query, inZoneWith: nil, resultsLimit: 100)
        #expect(results.count == 21)
        #expect(try admin.checkIntegrity().isSound)
    }

    @Test func redeployingAfterUsersSignedInToProductionWorks() async throws {
        // A development store with no Users type yet: a schema imported before any user.
        let empty = try TestStore(user: nil)
        try await empty.admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Note (title STRING);"))
        #expect(try empty.admin.schema(for: .development).recordTypes["Users"] == nil)
        try await empty.admin.deploySchema()
        let production = try empty.productionContainer(user: "alice")
        production.close()
        #expect(try empty.admin.schema(for: .production).recordTypes["Users"] != nil)
        try await empty.admin.deploySchema()
    }

    @Test func aRetiredUnpinnedNumberComesBackWithAnyNumber() async throws {
        try await admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Note (title STRING, n NUMBER);"))
        try await admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Note (title STRING);"))
        let record = Self.note("n1", title: "a")
        record["n"] = 5
        try await store.privateDatabase.save(record)
        #expect(try admin.schema(for: .development).recordTypes["Note"]?.fields["n"]?.type == .primitive(.number(preferredAs: .int64)))
    }
}
