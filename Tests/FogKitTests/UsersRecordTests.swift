import FogKit
import FogKitTesting
import Foundation
import Testing

/// The `Users` record type behaves as `Docs/CloudKitDifferences.md` ("Containers and users")
/// and `Docs/Access.md` say, following CloudKit (reference §1.4): the system creates one per
/// user in the public and the private database; clients fetch them by ID and save fields into
/// their own; nobody creates, queries or deletes them.
@Suite struct UsersRecordTests {
    let store: TestStore
    var alice: Container { store.container }

    init() throws { store = try TestStore() }

    @Test func theSystemCreatesAnEmptyUsersRecordInThePublicAndThePrivateDatabase() async throws {
        let id = try await alice.userRecordID()
        for db in [alice.publicCloudDatabase, alice.privateCloudDatabase] {
            let record = try await db.record(for: id)
            #expect(record.recordType == Record.SystemType.userRecord)
            #expect(record.allKeys().isEmpty)
            #expect(record.creatorUserRecordID?.recordName == id.recordName)
        }
        // Anyone may read the public one, nobody included.
        let nobody = try store.container(user: nil)
        #expect(try await nobody.publicCloudDatabase.record(for: id).recordType == "Users")
    }

    @Test func theUserSavesFieldsIntoItsOwnUsersRecordsAndNobodyElseCan() async throws {
        let id = try await alice.userRecordID()
        for db in [alice.publicCloudDatabase, alice.privateCloudDatabase] {
            let mine = try await db.record(for: id)
            mine["nickname"] = "al"
            let saved = try await db.save(mine)
            #expect(saved["nickname"] == "al")
            #expect(try await db.record(for: id)["nickname"] == "al")
        }
        // Another user may read alice's public Users record but not change it.
        let bob = try store.container(user: "bob")
        let theirs = try await bob.publicCloudDatabase.record(for: id)
        #expect(theirs["nickname"] == "al")
        theirs["nickname"] = "hijacked"
        await expectFogError(.permissionFailure) { try await bob.publicCloudDatabase.save(theirs) }
        #expect(try await alice.publicCloudDatabase.record(for: id)["nickname"] == "al")
    }

    @Test func clientsCannotCreateUsersRecords() async throws {
        for db in [alice.publicCloudDatabase, alice.privateCloudDatabase] {
            let fake = Record(recordType: Record.SystemType.userRecord, recordID: .init(recordName: "impostor"))
            await expectFogError(.invalidArguments) { try await db.save(fake) }
            await expectNotStored(fake.recordID, in: db)
        }
        // Not even under a user record name the store has not given out.
        let squatter = Record(recordType: "Users", recordID: .init(recordName: "_" + String(repeating: "0", count: 32)))
        await expectFogError(.invalidArguments) { try await alice.publicCloudDatabase.save(squatter) }
    }

    @Test func usersRecordsCannotBeQueriedOnlyFetchedByID() async throws {
        let query = Query(recordType: Record.SystemType.userRecord, predicate: QueryPredicate(value: true))
        let bob = try store.container(user: "bob")
        let nobody = try store.container(user: nil)
        for db in [alice.publicCloudDatabase, alice.privateCloudDatabase, bob.publicCloudDatabase, nobody.publicCloudDatabase] {
            let error = await expectFogError(.invalidArguments, "\(db.databaseScope)") { try await db.records(matching: query) }
            #expect(error?.message.contains("Users") == true, "\(error?.message ?? "")")
            let byID = Query(
                recordType: "Users", predicate: try QueryPredicate(format: "recordID == %@", try await alice.userRecordID()))
            await expectFogError(.invalidArguments, "by ID, \(db.databaseScope)") { try await db.records(matching: byID) }
        }
        let operation = QueryOperation(query: query)
        let result = Locked<Result<QueryOperation.Cursor?, any Error>?>(nil)
        operation.queryResultBlock = { r in result.mutate { $0 = r } }
        await alice.publicCloudDatabase.run(operation)
        #expect(fogCode(result.value?.failureError) == .invalidArguments)
    }

    @Test func usersRecordsCannotBeDeletedDirectlyOrByACascade() async throws {
        let id = try await alice.userRecordID()
        for db in [alice.publicCloudDatabase, alice.privateCloudDatabase] {
            await expectFogError(.permissionFailure) { try await db.deleteRecord(withID: id) }
            // A deleteSelf reference from the Users record to another record: deleting that
            // record would delete the Users record, so it is refused.
            let target = try await db.save(Record(recordType: "Note", recordID: .init(recordName: "target")))
            let mine = try await db.record(for: id)
            mine["owner"] = Record.Reference(recordID: target.recordID, action: .deleteSelf)
            try await db.save(mine)
            await expectFogError(.permissionFailure) { try await db.deleteRecord(withID: target.recordID) }
            #expect(try await db.record(for: id).recordType == "Users")
        }
        #expect(try store.admin.checkIntegrity().problems.isEmpty)
    }

    @Test func theCurrentUserRecordOperationFetchesItFromTheDatabaseItRunsOn() async throws {
        let id = try await alice.userRecordID()
        for db in [alice.publicCloudDatabase, alice.privateCloudDatabase] {
            let operation = FetchRecordsOperation.fetchCurrentUserRecordOperation()
            let fetched = Locked<[Record]>([])
            operation.perRecordResultBlock = { _, result in if let r = try? result.get() { fetched.append(r) } }
            await db.run(operation)
            #expect(fetched.value.map(\.recordID.recordName) == [id.recordName])
            #expect(fetched.value.first?.recordType == "Users")
        }
    }
}
