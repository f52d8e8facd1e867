import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// The security roles of the public database (`Docs/Access.md`, "Security roles"): the
/// permission matrix, which the doc prints as a table this suite checks, the seed's
/// feature-flag scenario, and changes of grants and members seen at once by open containers.
@Suite struct PublicRolesTests {
    /// The outcome of one cell.
    enum Outcome: String, Sendable {
        case allowed, listed
        case leftOut = "left out"
        case notAuthenticated, permissionFailure

        /// How the doc's table writes it.
        var text: String {
            switch self {
            case .notAuthenticated, .permissionFailure: "`\(rawValue)`"
            default: rawValue
            }
        }
    }

    enum Operation: String, CaseIterable, Sendable {
        case create, read, write, delete, query, feed
    }

    /// One row of the matrix: a record type whose only grant is `READ, CREATE, WRITE` to
    /// `role` (none for `Locked`), a caller, and the outcome of each operation on a record
    /// alice created.
    struct Row: Sendable, CustomTestStringConvertible {
        let role: String
        let recordType: String
        let caller: String
        let outcomes: [Operation: Outcome]

        var testDescription: String { "\(role) × \(caller)" }

        /// The row as `Docs/Access.md` prints it.
        var markdown: String {
            "| \(role) | \(caller) | " + Operation.allCases.map { outcomes[$0]!.text }.joined(separator: " | ") + " |"
        }
    }

    /// The matrix, printed in `Docs/Access.md` (``docPrintsTheMatrix()`` checks that it is).
    static let matrix: [Row] = [
        Row(
            role: "`_world`", recordType: "World", caller: "anonymous",
            outcomes: [
                .create: .notAuthenticated, .read: .allowed, .write: .notAuthenticated, .delete: .notAuthenticated, .query: .listed,
                .feed: .listed,
            ]),
        Row(
            role: "`_icloud`", recordType: "SignedIn", caller: "a signed-in user",
            outcomes: [.create: .allowed, .read: .allowed, .write: .allowed, .delete: .allowed, .query: .listed, .feed: .listed]),
        Row(
            role: "`_creator`", recordType: "Own", caller: "the record's creator",
            outcomes: [
                .create: .permissionFailure, .read: .allowed, .write: .allowed, .delete: .allowed, .query: .listed, .feed: .listed,
            ]),
        Row(
            role: "`_creator`", recordType: "Own", caller: "a signed-in user",
            outcomes: [
                .create: .permissionFailure, .read: .permissionFailure, .write: .permissionFailure, .delete: .permissionFailure,
                .query: .leftOut, .feed: .leftOut,
            ]),
        Row(
            role: "custom (`Staff`)", recordType: "Staffed", caller: "a member",
            outcomes: [.create: .allowed, .read: .allowed, .write: .allowed, .delete: .allowed, .query: .listed, .feed: .listed]),
        Row(
            role: "custom (`Staff`)", recordType: "Staffed", caller: "a signed-in user",
            outcomes: [
                .create: .permissionFailure, .read: .permissionFailure, .write: .permissionFailure, .delete: .permissionFailure,
                .query: .leftOut, .feed: .leftOut,
            ]),
        Row(
            role: "custom (`Staff`)", recordType: "Staffed", caller: "anonymous",
            outcomes: [
                .create: .notAuthenticated, .read: .permissionFailure, .write: .notAuthenticated, .delete: .notAuthenticated,
                .query: .leftOut, .feed: .leftOut,
            ]),
        Row(
            role: "none (no grants)", recordType: "Locked", caller: "the record's creator",
            outcomes: [
                .create: .permissionFailure, .read: .permissionFailure, .write: .permissionFailure, .delete: .permissionFailure,
                .query: .leftOut, .feed: .leftOut,
            ]),
    ]

    static let schema = """
        DEFINE SCHEMA
            CREATE ROLE Staff;
            RECORD TYPE World (v INT64 QUERYABLE, GRANT READ, CREATE, WRITE TO "_world");
            RECORD TYPE SignedIn (v INT64 QUERYABLE, GRANT READ, CREATE, WRITE TO "_icloud");
            RECORD TYPE Own (v INT64 QUERYABLE, GRANT READ, CREATE, WRITE TO "_creator");
            RECORD TYPE Staffed (v INT64 QUERYABLE, GRANT READ, CREATE, WRITE TO Staff);
            RECORD TYPE Locked (v INT64 QUERYABLE);
        """

    /// A store where alice created `<Type>-r` and `<Type>-d` of every type of ``schema``
    /// (saved in development before the schema was imported, with the default grants);
    /// carol is a member of `Staff`; bob is a signed-in user with no role.
    final class Fixture {
        let store: TestStore
        let bob: Container
        let carol: Container
        let nobody: Container

        init() async throws {
            store = try TestStore(user: "alice", configuration: .init(durability: .none, changeFeeds: .everyZone))
            bob = try store.container(user: "bob")
            carol = try store.container(user: "carol")
            nobody = try store.container(user: nil)
            let pub = store.container.publicCloudDatabase
            for type in ["World", "SignedIn", "Own", "Staffed", "Locked"] {
                for suffix in ["r", "d"] { try await pub.save(Self.record(type, "\(type)-\(suffix)")) }
            }
            try await store.admin.importSchema(try Schema(parsing: PublicRolesTests.schema))
            try await store.admin.addUser(try await carol.userRecordID(), toRole: "Staff")
        }

        static func record(_ type: String, _ name: String, v: Int = 1) -> Record {
            let record = Record(recordType: type, recordID: Record.ID(recordName: name))
            record["v"] = v
            return record
        }

        /// The container of a row's caller.
        func container(_ caller: String) -> Container {
            switch caller {
            case "anonymous": nobody
            case "a member": carol
            case "a signed-in user": bob
            default: store.container
            }
        }

        deinit {
            bob.close()
            carol.close()
            nobody.close()
        }
    }

    static let cells: [(Row, Operation)] = matrix.flatMap { row in Operation.allCases.map { (row, $0) } }

    @Test(arguments: cells) func publicDatabaseCell(_ row: Row, _ operation: Operation) async throws {
        let fixture = try await Fixture()
        let db = fixture.container(row.caller).publicCloudDatabase
        let type = row.recordType
        let readID = Record.ID(recordName: "\(type)-r")
        let expected = row.outcomes[operation]!
        var outcome: Outcome
        do {
            switch operation {
            case .create:
                try await db.save(Fixture.record(type, "\(type)-new"))
                outcome = .allowed
            case .read:
                #expect(try await db.record(for: readID)["v"] as? Int == 1)
                outcome = .allowed
            case .write:
                // Through a batch: the refusal is the item's error.
                let results = try await db.modifyRecords(
                    saving: [Fixture.record(type, "\(type)-r", v: 2)], deleting: [], savePolicy: .allKeys, atomically: false)
                _ = try results.saveResults[readID]!.get()
                outcome = .allowed
            case .delete:
                try await db.deleteRecord(withID: Record.ID(recordName: "\(type)-d"))
                outcome = .allowed
            case .query:
                let found = try await db.records(matching: Query(recordType: type, predicate: QueryPredicate(format: "v == 1")))
                outcome = found.matchResults.contains { $0.0 == readID } ? .listed : .leftOut
                if outcome == .leftOut { #expect(found.matchResults.isEmpty) }
            case .feed:
                let changes = try await db.recordZoneChanges(inZoneWith: .default, since: nil)
                let seen = changes.modificationResultsByID.keys.contains(readID)
                #expect(changes.modificationResultsByID.keys.contains(Record.ID(recordName: "\(type)-d")) == seen)
                outcome = seen ? .listed : .leftOut
            }
        } catch let error as FogError {
            switch error.code {
            case .notAuthenticated: outcome = .notAuthenticated
            case .permissionFailure:
                outcome = .permissionFailure
                #expect(error.message.contains(type), "\(error.message)")
            default: throw error
            }
        }
        #expect(outcome == expected, "\(row) × \(operation)")

        // A refused delete deletes nothing (the records and the users' `Users` records).
        if operation == .delete {
            #expect(
                try fixture.store.admin.storeInfo().recordCount == (expected == .allowed ? 15 : 16),
                "10 records and the Users records of alice, bob and carol")
        }
    }

    /// `Docs/Access.md` prints the matrix this suite checks, row for row.
    @Test func docPrintsTheMatrix() throws {
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Docs/Access.md")
        let text = try String(contentsOf: doc, encoding: .utf8)
        let lines = Set(text.split(separator: "\n").map(String.init))
        for row in Self.matrix {
            #expect(lines.contains(row.markdown), "Docs/Access.md lacks the row:\n\(row.markdown)")
        }
        let printed = text.split(separator: "\n").filter {
            $0.hasPrefix("| ") && Self.matrix.map(\.role).contains(where: $0.dropFirst(2).hasPrefix)
        }
        #expect(printed.count == Self.matrix.count, "the doc's matrix has rows the test does not check: \(printed)")
    }
}

/// Seed 002's feature flags (ChibiStudio's `AppFeatures`): an `Admin` role writes; anonymous
/// and signed-in users read; anyone else's write is refused. Membership and grants change at
/// once for containers already open.
@Suite struct FeatureFlagRoleTests {
    static let schema = """
        DEFINE SCHEMA
            CREATE ROLE Admin;
            RECORD TYPE AppFeatures (
                tipJar INT64 QUERYABLE,
                GRANT READ TO "_world",
                GRANT READ, CREATE, WRITE TO Admin
            );
        """

    static func flags(_ name: String = "flags", tipJar: Int) -> Record {
        let record = Record(recordType: "AppFeatures", recordID: Record.ID(recordName: name))
        record["tipJar"] = tipJar
        return record
    }

    static func query(_ db: Database) async throws -> [Int] {
        let found = try await db.records(matching: Query(recordType: "AppFeatures", predicate: QueryPredicate(format: "tipJar > 0")))
        return try found.matchResults.map { try $0.1.get()["tipJar"] as? Int ?? -1 }
    }

    @Test func anAdminWritesEveryoneReadsOthersAreRefused() async throws {
        let store = try TestStore(user: "admin")
        try await store.admin.importSchema(try Schema(parsing: Self.schema))
        let bob = try store.container(user: "bob")
        let nobody = try store.container(user: nil)
        // Bob's container is open before the admin joins the role: it sees the change too.
        try await store.admin.addUser(try await store.container.userRecordID(), toRole: "Admin")
        #expect(try store.admin.users(inRole: "Admin") == [try await store.container.userRecordID()])

        let adminDB = store.container.publicCloudDatabase
        try await adminDB.save(Self.flags(tipJar: 1))
        let fetched = try await adminDB.record(for: Record.ID(recordName: "flags"))
        fetched["tipJar"] = 2
        try await adminDB.save(fetched)

        for reader in [bob, nobody] {
            #expect(try await reader.publicCloudDatabase.record(for: Record.ID(recordName: "flags"))["tipJar"] as? Int == 2)
            #expect(try await Self.query(reader.publicCloudDatabase) == [2])
        }

        // Bob's writes: a new record, a change, a delete; each refused, nothing changed.
        await expectFogError(.permissionFailure) { try await bob.publicCloudDatabase.save(Self.flags("bobs", tipJar: 9)) }
        let bobsCopy = try await bob.publicCloudDatabase.record(for: Record.ID(recordName: "flags"))
        bobsCopy["tipJar"] = 100
        await expectFogError(.permissionFailure) { try await bob.publicCloudDatabase.save(bobsCopy) }
        await expectFogError(.permissionFailure) { try await bob.publicCloudDatabase.deleteRecord(withID: Record.ID(recordName: "flags")) }
        // Anonymous writes need a user first.
        await expectFogError(.notAuthenticated) { try await nobody.publicCloudDatabase.save(Self.flags("anon", tipJar: 9)) }
        #expect(try await Self.query(nobody.publicCloudDatabase) == [2])

        // A batch reports each item: bob's allowed save applies beside his refused one.
        let note = Record(recordType: "Note", recordID: Record.ID(recordName: "bobs-note"))
        note["text"] = "hello"
        let mixed = try await bob.publicCloudDatabase.modifyRecords(
            saving: [note, Self.flags("bobs", tipJar: 9)], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: false)
        #expect((try? mixed.saveResults[note.recordID]!.get()) != nil, "Note has CloudKit's default grants: _icloud creates")
        #expect(throws: FogError.self) { try mixed.saveResults[Record.ID(recordName: "bobs")]!.get() }
        if case .failure(let error as FogError) = mixed.saveResults[Record.ID(recordName: "bobs")]! {
            #expect(error.code == .permissionFailure)
        }

        // Bob joins Admin: his open container writes at once; he leaves: refused again.
        let bobID = try await bob.userRecordID()
        try await store.admin.addUser(bobID, toRole: "Admin")
        bobsCopy["tipJar"] = 3
        try await bob.publicCloudDatabase.save(bobsCopy)
        #expect(try await Self.query(nobody.publicCloudDatabase) == [3])
        try await store.admin.removeUser(bobID, fromRole: "Admin")
        let again = try await bob.publicCloudDatabase.record(for: Record.ID(recordName: "flags"))
        again["tipJar"] = 4
        await expectFogError(.permissionFailure) { try await bob.publicCloudDatabase.save(again) }
        #expect(try await Self.query(nobody.publicCloudDatabase) == [3])
    }

    /// Revoking a grant (an import that drops it) hides the records from open containers at
    /// once: fetches fail, queries and the public feed leave them out.
    @Test func revokingAGrantTakesEffectAtOnce() async throws {
        let store = try TestStore(user: "admin", configuration: .init(durability: .none, changeFeeds: .everyZone))
        try await store.admin.importSchema(try Schema(parsing: Self.schema))
        try await store.admin.addUser(try await store.container.userRecordID(), toRole: "Admin")
        try await store.container.publicCloudDatabase.save(Self.flags(tipJar: 1))
        let nobody = try store.container(user: nil)
        let id = Record.ID(recordName: "flags")
        #expect(try await nobody.publicCloudDatabase.record(for: id)["tipJar"] as? Int == 1)

        try await store.admin.importSchema(
            try Schema(
                parsing: """
                    DEFINE SCHEMA CREATE ROLE Admin;
                    RECORD TYPE AppFeatures (tipJar INT64 QUERYABLE, GRANT READ, CREATE, WRITE TO Admin);
                    """))
        await expectFogError(.permissionFailure) { _ = try await nobody.publicCloudDatabase.record(for: id) }
        #expect(try await Self.query(nobody.publicCloudDatabase).isEmpty)
        let feed = try await nobody.publicCloudDatabase.recordZoneChanges(inZoneWith: .default, since: nil)
        #expect(!feed.modificationResultsByID.keys.contains(id))
        // The admin still reads and writes.
        #expect(try await Self.query(store.container.publicCloudDatabase) == [1])

        // Removing the role removes its members.
        try await store.admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE AppFeatures (tipJar INT64 QUERYABLE);"))
        try await store.admin.importSchema(try Schema(parsing: Self.schema))
        #expect(try store.admin.users(inRole: "Admin").isEmpty)
        #expect(try await Self.query(store.container.publicCloudDatabase) == [1], "_world still reads")
    }

    /// `_creator` alone reads: each user's query and feed see their own records only.
    @Test func creatorOnlyReadsSeeTheirOwnRecords() async throws {
        let store = try TestStore(user: "alice", configuration: .init(durability: .none, changeFeeds: .everyZone))
        try await store.admin.importSchema(
            try Schema(
                parsing: """
                    DEFINE SCHEMA RECORD TYPE Diary (day INT64 QUERYABLE, GRANT CREATE TO "_icloud", GRANT READ, WRITE TO "_creator");
                    """))
        let bob = try store.container(user: "bob")
        for (container, name) in [(store.container, "a"), (bob, "b")] {
            let record = Record(recordType: "Diary", recordID: Record.ID(recordName: name))
            record["day"] = 1
            try await container.publicCloudDatabase.save(record)
        }
        for (container, name) in [(store.container, "a"), (bob, "b")] {
            let found = try await container.publicCloudDatabase.records(
                matching: Query(recordType: "Diary", predicate: QueryPredicate(format: "day == 1")))
            #expect(found.matchResults.map(\.0.recordName) == [name])
            let feed = try await container.publicCloudDatabase.recordZoneChanges(inZoneWith: .default, since: nil)
            #expect(feed.modificationResultsByID.keys.filter { $0.recordName.count == 1 }.map(\.recordName) == [name])
        }
        await expectFogError(.permissionFailure) { _ = try await bob.publicCloudDatabase.record(for: Record.ID(recordName: "a")) }
        let nobody = try store.container(user: nil)
        let found = try await nobody.publicCloudDatabase.records(
            matching: Query(recordType: "Diary", predicate: QueryPredicate(format: "day == 1")))
        #expect(found.matchResults.isEmpty)
    }

    /// Membership needs a custom role of the schema and a user the environment knows.
    @Test func membershipIsCheckedAndPerEnvironment() async throws {
        let store = try TestStore(user: "alice")
        let alice = try await store.container.userRecordID()
        await expectFogError(.invalidArguments) { try await store.admin.addUser(alice, toRole: "Admin") }
        await expectFogError(.invalidArguments) { try await store.admin.addUser(alice, toRole: .world) }
        await expectFogError(.invalidArguments) { _ = try store.admin.users(inRole: .creator) }
        try await store.admin.importSchema(try Schema(parsing: Self.schema))
        await expectFogError(.unknownItem) {
            try await store.admin.addUser(Record.ID(recordName: "_0123456789abcdef0123456789abcdef"), toRole: "Admin")
        }
        #expect(try store.admin.userRecordID(forUser: "alice") == alice)
        try await store.admin.addUser(alice, toRole: "Admin")
        try await store.admin.addUser(alice, toRole: "Admin")
        #expect(try store.admin.users(inRole: "Admin") == [alice])
        // Production has its own schema and members.
        try await store.admin.deploySchema()
        let production = try Container.Administrator(
            identifier: store.admin.containerIdentifier, store: store.location,
            configuration: .init(durability: .none, environment: .production))
        defer { production.close() }
        #expect(try production.users(inRole: "Admin").isEmpty)
        // A development reset forgets the members, as CloudKit's deletes the user records.
        try await store.admin.resetDevelopmentEnvironment()
        #expect(try store.admin.users(inRole: "Admin").isEmpty)
    }
}

/// Record types created just in time get CloudKit's default grants, seen at once by caches
/// filled before.
@Suite struct JustInTimeGrantTests {
    @Test func aTypeCreatedJustInTimeWithoutFieldsIsReadableAtOnce() async throws {
        let store = try TestStore(user: "alice")
        let bob = try store.container(user: "bob")
        let nobody = try store.container(user: nil)
        // Fill the grants' cache before the type exists.
        _ = try await nobody.publicCloudDatabase.record(for: try await store.container.userRecordID())
        let empty = Record(recordType: "Empty", recordID: Record.ID(recordName: "e"))
        try await store.container.publicCloudDatabase.save(empty)
        #expect(try await nobody.publicCloudDatabase.record(for: empty.recordID).recordType == "Empty")
        // A user registered after the cache was filled: their `Users` record is readable too.
        let carol = try store.container(user: "carol")
        #expect(try await nobody.publicCloudDatabase.record(for: try await carol.userRecordID()).recordType == "Users")
        // Defaults: bob creates, but only alice changes hers.
        try await bob.publicCloudDatabase.save(Record(recordType: "Empty", recordID: Record.ID(recordName: "b")))
        let copy = try await bob.publicCloudDatabase.record(for: empty.recordID)
        copy["x"] = 1
        await expectFogError(.permissionFailure) { try await bob.publicCloudDatabase.save(copy) }
    }

    /// A record type an import removed has no grants: its records cannot be read until a save
    /// in development creates the type again, with the default grants.
    @Test func aTypeTheCatalogLacksHasNoGrantsUntilASaveCreatesItAgain() async throws {
        let store = try TestStore(user: "alice")
        let nobody = try store.container(user: nil)
        let post = Record(recordType: "Post", recordID: Record.ID(recordName: "p"))
        post["n"] = 1
        try await store.container.publicCloudDatabase.save(post)
        try await store.admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Other (n INT64);"))
        await expectFogError(.permissionFailure) { _ = try await nobody.publicCloudDatabase.record(for: post.recordID) }
        await expectFogError(.permissionFailure) { _ = try await store.container.publicCloudDatabase.record(for: post.recordID) }
        let again = Record(recordType: "Post", recordID: Record.ID(recordName: "p2"))
        again["n"] = 2
        try await store.container.publicCloudDatabase.save(again)
        #expect(try await nobody.publicCloudDatabase.record(for: post.recordID)["n"] as? Int == 1)
    }

    /// In production a type the schema lacks is `unknownItem`, before any role is asked.
    @Test func productionRefusesAnUnknownTypeAsUnknown() async throws {
        let store = try TestStore(user: "alice", configuration: .init(durability: .none, environment: .production))
        await expectFogError(.unknownItem) {
            try await store.container.publicCloudDatabase.save(Record(recordType: "Nowhere", recordID: Record.ID(recordName: "n")))
        }
    }
}
