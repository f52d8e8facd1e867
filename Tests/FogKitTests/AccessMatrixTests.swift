import FogKitTesting
import Foundation
import Synchronization
import Testing

@testable import FogKit

/// Who may do what: caller × database × action, each cell with the expected outcome
/// (allowed, or the exact error code). See `Docs/Access.md`.
///
/// The fixture, in one store opened with `changeFeeds: .everyZone` (so that feeds exist
/// everywhere and only access decides):
/// - private: alice's zone `Z` with `target`, `child` (deleteSelf → `target`) and `modify`;
/// - public: alice's `target` with alice's `child` (deleteSelf), alice's `shared` with
///   bob's `foreign` (deleteSelf → `shared`), and alice's `modify`.
///
/// The owner is alice (the private database's owner; the public records' creator),
/// another user is bob, anonymous is a container opened for nobody. Bob reaches alice's
/// private zone only by naming it (owner name = alice's user record name): his private
/// database holds his zones only, so it answers `zoneNotFound`.
///
/// The administrator is not a database user: it has no databases, so its database
/// cells are asked of the policy directly (it refuses with `permissionFailure`); the
/// administrative calls exist only on ``Container/Administrator``, so a container
/// cannot even spell them — their non-administrator cells are asked of the policy.
@Suite struct AccessMatrixTests {
    enum Who: String, CaseIterable, Sendable { case owner, otherUser, anonymous, administrator }
    enum Where: String, CaseIterable, Sendable { case `private`, `public` }
    enum Act: String, CaseIterable, Sendable {
        case fetch, query, create, modify, delete, cascadeDeleteOwnChildren, cascadeDeleteOthersChildren
        case zoneFetch, zoneSave, zoneDelete, zoneChanges, databaseChanges, currentUser
    }

    /// `nil` for allowed; `.some(code)` for a refusal with that code.
    struct Cell: Sendable, CustomTestStringConvertible {
        let who: Who
        let database: Where
        let act: Act
        let expected: FogError.Code?
        /// Why a cell is as it is, when not obvious.
        var note: String = ""
        var testDescription: String {
            "\(who) × \(database) × \(act) → \(expected.map { "\($0)" } ?? "allowed")" + (note.isEmpty ? "" : " (\(note))")
        }
    }

    /// The expected outcome of every database cell.
    static let cells: [Cell] = {
        var cells: [Cell] = []
        for who in Who.allCases {
            for database in Where.allCases {
                for act in Act.allCases {
                    cells.append(expectation(who, database, act))
                }
            }
        }
        return cells
    }()

    static func expectation(_ who: Who, _ database: Where, _ act: Act) -> Cell {
        func cell(_ code: FogError.Code?, _ note: String = "") -> Cell {
            Cell(who: who, database: database, act: act, expected: code, note: note)
        }
        switch (who, database) {
        case (.administrator, _):
            return cell(.permissionFailure, "the administrator is not a database user; asked of the policy")
        case (.anonymous, .private):
            return cell(.notAuthenticated)
        case (.anonymous, .public):
            switch act {
            case .fetch, .query, .zoneFetch, .zoneChanges, .databaseChanges: return cell(nil)
            default: return cell(.notAuthenticated)
            }
        case (.owner, .private):
            switch act {
            case .cascadeDeleteOthersChildren:
                return cell(nil, "only the owner writes a private database: every child is the owner's")
            default: return cell(nil)
            }
        case (.otherUser, .private):
            switch act {
            case .databaseChanges: return cell(nil, "bob's own feed, without alice's zones")
            case .currentUser: return cell(nil, "bob's own identity")
            default: return cell(.zoneNotFound, "alice's zone is not in bob's private database")
            }
        case (.owner, .public):
            switch act {
            case .zoneSave, .zoneDelete: return cell(.badDatabase)
            case .cascadeDeleteOthersChildren: return cell(.permissionFailure, "the cascade would delete bob's record")
            default: return cell(nil)
            }
        case (.otherUser, .public):
            switch act {
            case .zoneSave, .zoneDelete: return cell(.badDatabase)
            case .modify, .delete, .cascadeDeleteOwnChildren, .cascadeDeleteOthersChildren:
                return cell(.permissionFailure, "only the creator modifies or deletes")
            default: return cell(nil)
            }
        }
    }

    /// The store, its callers and alice's user record name.
    final class Fixture {
        let store: TestStore
        let bob: Container
        let nobody: Container
        let alice: String

        init() async throws {
            store = try TestStore(user: "alice", configuration: .init(durability: .none, changeFeeds: .everyZone))
            bob = try store.container(user: "bob")
            nobody = try store.container(user: nil)
            alice = try await store.container.userRecordID().recordName
            let zone = RecordZone.ID(zoneName: "Z")
            let mine = store.container.privateCloudDatabase
            try await mine.save(RecordZone(zoneID: zone))
            try await mine.save(Self.item("target", zone))
            try await mine.save(Self.item("child", zone, deleteSelf: "target"))
            try await mine.save(Self.item("modify", zone))
            let pub = store.container.publicCloudDatabase
            for record in [Self.item("target"), Self.item("child", deleteSelf: "target"), Self.item("shared"), Self.item("modify")] {
                try await pub.save(record)
            }
            try await bob.publicCloudDatabase.save(Self.item("foreign", deleteSelf: "shared"))
        }

        static func item(_ name: String, _ zone: RecordZone.ID = .default, deleteSelf target: String? = nil) -> Record {
            let record = Record(recordType: "Item", recordID: Record.ID(recordName: name, zoneID: zone))
            record["v"] = 1
            if let target {
                record["up"] = Record.Reference(recordID: Record.ID(recordName: target, zoneID: zone), action: .deleteSelf)
            }
            return record
        }

        deinit {
            bob.close()
            nobody.close()
        }
    }

    @Test(arguments: cells) func databaseCell(_ cell: Cell) async throws {
        let fixture = try await Fixture()
        if cell.who == .administrator {
            // No database to call through: ask the policy as the engine would.
            let action: AccessAction =
                switch cell.act {
                case .fetch: .fetch
                case .query: .query
                case .create, .modify: .save
                case .delete: .delete
                case .cascadeDeleteOwnChildren, .cascadeDeleteOthersChildren: .cascadeDelete
                case .zoneFetch: .zoneRead
                case .zoneSave: .zoneModify
                case .zoneDelete: .zoneDelete
                case .zoneChanges: .zoneChanges
                case .databaseChanges: .databaseChanges
                case .currentUser: .currentUser
                }
            let scope: Database.Scope = cell.database == .private ? .private : .public
            let error = await expectFogError(cell.expected ?? .internalError, "\(cell)") {
                try AccessPolicy.standard.check(
                    action, AccessRequest(caller: .administrator, scope: scope, zoneName: "Z", recordType: "Item", creator: fixture.alice))
            }
            #expect(error?.message.contains("administrator") == true)
            return
        }
        let container: Container =
            switch cell.who {
            case .owner: fixture.store.container
            case .otherUser: fixture.bob
            default: fixture.nobody
            }
        let db = cell.database == .private ? container.privateCloudDatabase : container.publicCloudDatabase
        // The zone the cell works in, named as the caller must name alice's zone.
        let zone: RecordZone.ID =
            switch (cell.database, cell.who) {
            case (.public, _): .default
            case (.private, .otherUser): RecordZone.ID(zoneName: "Z", ownerName: fixture.alice)
            case (.private, _): RecordZone.ID(zoneName: "Z")
            }
        func id(_ name: String) -> Record.ID { Record.ID(recordName: name, zoneID: zone) }

        let outcome: FogError.Code?
        do {
            switch cell.act {
            case .fetch:
                #expect(try await db.record(for: id("target"))["v"] as? Int == 1)
            case .query:
                let found = try await db.records(
                    matching: Query(recordType: "Item", predicate: QueryPredicate(value: true)), inZoneWith: zone)
                #expect(found.matchResults.contains { $0.0.recordName == "target" })
            case .create:
                try await db.save(Fixture.item("new", zone))
            case .modify:
                let record = Fixture.item("modify", zone)
                _ = try await db.modifyRecords(saving: [record], deleting: [], savePolicy: .allKeys, atomically: false).saveResults[
                    record.recordID]!.get()
            case .delete:
                try await db.deleteRecord(withID: id("modify"))
            case .cascadeDeleteOwnChildren:
                try await db.deleteRecord(withID: id("target"))
            case .cascadeDeleteOthersChildren:
                if cell.database == .private {
                    // Only alice writes her private database; her cascade is her own.
                    try await db.deleteRecord(withID: id("target"))
                } else {
                    try await db.deleteRecord(withID: id("shared"))
                }
            case .zoneFetch:
                _ = try await db.recordZone(for: zone)
            case .zoneSave:
                try await db.save(RecordZone(zoneID: RecordZone.ID(zoneName: "New", ownerName: zone.ownerName)))
            case .zoneDelete:
                try await db.deleteRecordZone(withID: cell.database == .private ? zone : RecordZone.ID(zoneName: "Z"))
            case .zoneChanges:
                let changes = try await db.recordZoneChanges(inZoneWith: zone, since: nil)
                #expect(changes.modificationResultsByID.keys.contains(id("target")))
            case .databaseChanges:
                let changes = try await db.databaseChanges(since: nil)
                if cell.database == .private {
                    let names = changes.modifications.map(\.zoneID.zoneName)
                    #expect(names.contains("Z") == (cell.who == .owner), "\(names)")
                }
            case .currentUser:
                let fetched = try await container.userRecordID()
                // The operation's path asks the policy too.
                let operation = FetchRecordsOperation.fetchCurrentUserRecordOperation()
                let final = Mutex<Result<Void, any Error>?>(nil)
                operation.fetchRecordsResultBlock = { result in final.withLock { $0 = result } }
                await db.run(operation)
                try #require(final.withLock { $0 }).get()
                #expect(try await db.record(for: fetched).recordType == Record.SystemType.userRecord)
            }
            outcome = nil
        } catch let error as FogError {
            outcome = error.code
            if error.code == .permissionFailure {
                #expect(error.message.contains("creator"), "\(error.message)")
            }
        }
        #expect(outcome == cell.expected, "\(cell)")

        // What a refused delete must leave, and what an allowed cascade must remove.
        let owner = cell.database == .private ? fixture.store.container.privateCloudDatabase : fixture.store.container.publicCloudDatabase
        let ownerZone: RecordZone.ID = cell.database == .private ? RecordZone.ID(zoneName: "Z") : .default
        func stored(_ name: String) async -> Bool {
            (try? await owner.record(for: Record.ID(recordName: name, zoneID: ownerZone))) != nil
        }
        switch cell.act {
        case .cascadeDeleteOwnChildren where cell.expected == nil:
            let (target, child) = (await stored("target"), await stored("child"))
            #expect(!target && !child)
        case .cascadeDeleteOwnChildren:
            let (target, child) = (await stored("target"), await stored("child"))
            #expect(target && child)
        case .cascadeDeleteOthersChildren where cell.database == .public:
            let (shared, foreign) = (await stored("shared"), await stored("foreign"))
            #expect(shared && foreign, "a refused cascade deletes nothing")
        case .delete where cell.expected != nil, .modify where cell.expected != nil:
            let modify = await stored("modify")
            #expect(modify)
        default: break
        }
    }

    /// Administrative calls: only the administrator. A container has no such methods
    /// (the API moved to ``Container/Administrator``); the policy refuses them for users
    /// and nobody, which is what a future path to them would meet.
    @Test(arguments: [Who.owner, .otherUser, .anonymous], AdministrativeCall.allCases)
    func administrativeCallRefusedTo(_ who: Who, _ call: AdministrativeCall) async throws {
        let caller: Caller =
            switch who {
            case .owner: .user("_00000000000000000000000000000001")
            case .otherUser: .user("_00000000000000000000000000000002")
            default: .anonymous
            }
        let error = await expectFogError(.permissionFailure) {
            try AccessPolicy.standard.check(.administer(call), AccessRequest(caller: caller))
        }
        #expect(error?.message.contains("Container.Administrator") == true)
    }

    @Test(arguments: AdministrativeCall.allCases) func administrativeCallAllowedToTheAdministrator(_ call: AdministrativeCall) async throws
    {
        let fixture = try await Fixture()
        let admin = fixture.store.admin
        switch call {
        case .setIndexes:
            try await admin.setIndexes(.queryable, forField: "v", ofRecordType: "Item")
            #expect(try admin.indexes(ofRecordType: "Item")["v"] == .queryable)
        case .readIndexes:
            // Development gave the field its default indexes when it was first saved.
            #expect(try admin.indexes(ofRecordType: "Item")["v"] == [.queryable, .sortable])
        case .indexAdvice:
            try await admin.setIndexes([], forField: "v", ofRecordType: "Item")
            _ = try await fixture.store.container.publicCloudDatabase.records(
                matching: Query(recordType: "Item", predicate: QueryPredicate(format: "v == 1")), inZoneWith: nil)
            #expect(admin.indexAdvice().contains { $0.field == "v" })
        case .readSchema:
            #expect(try admin.schema(for: .development).recordTypes["Item"]?.fields["v"]?.type == .int64)
        case .importSchema:
            try await admin.importSchema(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Item (v INT64 QUERYABLE);"))
            #expect(try admin.indexes(ofRecordType: "Item")["v"] == .queryable)
        case .deploySchema:
            try await admin.deploySchema()
            #expect(try admin.schema(for: .production) == (try admin.schema(for: .development)))
        case .resetDevelopment:
            try await admin.resetDevelopmentEnvironment()
            #expect(try admin.storeInfo().recordCount == 4, "the Users records of alice and bob, public and private")
        case .backup:
            // The backup holds every user's private records: the hole a container for nobody had.
            let copy = try TemporaryDirectory()
            try admin.backup(to: copy.url)
            let restored = try copy.openAdministrator()
            defer { restored.close() }
            #expect(try restored.storeInfo().recordCount == (try admin.storeInfo().recordCount))
        case .storeInfo:
            #expect(try admin.storeInfo().userCount == 2, "alice and bob; nobody registers no user")
        case .checkIntegrity:
            #expect(try admin.checkIntegrity().isSound)
        case .migrate:
            try AccessPolicy.standard.check(.administer(.migrate), AccessRequest(caller: .administrator))
        case .changeUsers:
            let carol = try await admin.addUser("carol", emailAddress: "carol@example.com")
            #expect(try await fixture.store.container.userIdentity(forEmailAddress: "carol@example.com") == carol)
        case .readUsers:
            #expect(Set(try admin.users().keys) == ["alice", "bob"])
        case .lookUpUser:
            #expect(try admin.userRecordID(forUser: "alice").recordName == fixture.alice)
        case .changeRoleMembers, .readRoleMembers:
            try await admin.importSchema(try Schema(parsing: "DEFINE SCHEMA CREATE ROLE Editor; RECORD TYPE Item (v INT64);"))
            let alice = Record.ID(recordName: fixture.alice)
            try await admin.addUser(alice, toRole: "Editor")
            #expect(try admin.users(inRole: "Editor") == [alice])
            try await admin.removeUser(alice, fromRole: "Editor")
            #expect(try admin.users(inRole: "Editor").isEmpty)
        case .readStoreDocument, .changeStoreDocument:
            try admin.updateStoreDocument(named: "matrix") { $0 = Data("x".utf8) }
            #expect(try admin.storeDocument(named: "matrix") == Data("x".utf8))
        case .copyStore:
            let copy = try TemporaryDirectory()
            try admin.copyStore(to: .directory(copy.url.appendingPathComponent("copy")))
            let copied = try Container.Administrator(
                identifier: admin.containerIdentifier, store: .directory(copy.url.appendingPathComponent("copy")))
            defer { copied.close() }
            #expect(try copied.storeInfo().recordCount == (try admin.storeInfo().recordCount))
        }
    }

    /// The cascade hole, through a request of several items: the refused delete fails on
    /// its own (the public default zone is not atomic), the others apply.
    @Test func aPublicCascadeReachingAnotherUsersRecordFailsOnlyThatDelete() async throws {
        let fixture = try await Fixture()
        let pub = fixture.store.container.publicCloudDatabase
        let result = try await pub.modifyRecords(
            saving: [], deleting: [Record.ID(recordName: "shared"), Record.ID(recordName: "modify")], atomically: false)
        let refused = try #require(result.deleteResults[Record.ID(recordName: "shared")])
        #expect(refused.fogCode == .permissionFailure)
        if case .failure(let error as FogError) = refused {
            #expect(error.message.contains("foreign") && error.message.contains("deleteSelf"), "\(error.message)")
        }
        #expect(result.deleteResults[Record.ID(recordName: "modify")]?.succeeded == true)
        #expect(try await pub.record(for: Record.ID(recordName: "foreign"))["v"] as? Int == 1)
        // Bob, the creator of the child, may delete it; then alice's delete goes through.
        try await fixture.bob.publicCloudDatabase.deleteRecord(withID: Record.ID(recordName: "foreign"))
        try await pub.deleteRecord(withID: Record.ID(recordName: "shared"))
        #expect(try fixture.store.admin.checkIntegrity().isSound)
    }

    /// A cascade never deletes a user record, in any database.
    @Test func aCascadeNeverDeletesAUserRecord() async throws {
        let fixture = try await Fixture()
        let db = fixture.store.container.privateCloudDatabase
        let me = try await db.record(for: Record.ID(recordName: fixture.alice))
        me["up"] = Record.Reference(recordID: Record.ID(recordName: "anchor"), action: .deleteSelf)
        try await db.save(Fixture.item("anchor"))
        try await db.save(me)
        await expectFogError(.permissionFailure) { try await db.deleteRecord(withID: Record.ID(recordName: "anchor")) }
        #expect(try await db.record(for: Record.ID(recordName: fixture.alice)).recordType == Record.SystemType.userRecord)
    }

    /// A container opened for nobody cannot reach administration at all; its reads of the
    /// private and shared databases are refused (the first hole was administration).
    @Test func nobodyReadsOnlyThePublicDatabase() async throws {
        let fixture = try await Fixture()
        await expectFogError(.notAuthenticated) { try await fixture.nobody.userRecordID() }
        await expectFogError(.notAuthenticated) { try await fixture.nobody.sharedCloudDatabase.allRecordZones() }
        await expectFogError(.notAuthenticated) { try await fixture.nobody.privateCloudDatabase.allRecordZones() }
        #expect(try await fixture.nobody.publicCloudDatabase.allRecordZones().count == 1)
    }
}
