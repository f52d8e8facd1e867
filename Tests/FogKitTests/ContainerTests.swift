import FogKit
import FogKitTesting
import Foundation
import Testing

/// CKContainer behaviour: databases, account status, user record IDs, identity
/// and isolation between users (reference §1, §2.1, §4.1).
@Suite struct ContainerTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore

    init() throws { store = try TestStore() }

    // MARK: - Databases

    @Test func databaseWithScopeReturnsTheSameInstancesAsTheProperties() throws {
        let c = store.container
        #expect(c.database(with: .public) === c.publicCloudDatabase)
        #expect(c.database(with: .private) === c.privateCloudDatabase)
        #expect(c.database(with: .shared) === c.sharedCloudDatabase)
        #expect(c.publicCloudDatabase.databaseScope == .public)
        #expect(c.privateCloudDatabase.databaseScope == .private)
        #expect(c.sharedCloudDatabase.databaseScope == .shared)
        // Repeated calls keep returning the same instances.
        for scope in Database.Scope.allCases {
            #expect(c.database(with: scope) === c.database(with: scope))
        }
    }

    @Test func databaseScopesHaveCloudKitRawValues() {
        #expect(Database.Scope.public.rawValue == 1)
        #expect(Database.Scope.private.rawValue == 2)
        #expect(Database.Scope.shared.rawValue == 3)
    }

    @Test func containerKeepsItsIdentifier() throws {
        #expect(store.container.containerIdentifier == "iCloud.test")
        #expect(store.container.userIdentity == "alice")
    }

    // MARK: - Account status

    @Test func accountStatusIsAvailableForAUser() async throws {
        let store = try TestStore(user: "alice")
        #expect(try await store.container.accountStatus() == .available)
    }

    @Test func accountStatusIsNoAccountForNobody() async throws {
        let store = try TestStore(user: nil)
        #expect(try await store.container.accountStatus() == .noAccount)
    }

    @Test func accountStatusHasCloudKitRawValues() {
        #expect(AccountStatus.couldNotDetermine.rawValue == 0)
        #expect(AccountStatus.available.rawValue == 1)
        #expect(AccountStatus.restricted.rawValue == 2)
        #expect(AccountStatus.noAccount.rawValue == 3)
        #expect(AccountStatus.temporarilyUnavailable.rawValue == 4)
    }

    // MARK: - User record ID

    @Test func userRecordIDIsAnUnderscoreAnd32LowercaseHexDigitsInTheDefaultZone() async throws {
        let id = try await store.container.userRecordID()
        let name = id.recordName
        #expect(name.count == 33)
        #expect(name.hasPrefix("_"))
        #expect(name.dropFirst().allSatisfy { "0123456789abcdef".contains($0) }, "\(name)")
        #expect(id.zoneID == .default)
    }

    @Test func userRecordIDIsStableAcrossCallsAndReopen() async throws {
        let dir = try TemporaryDirectory()
        let first = try dir.open(user: "alice")
        let id1 = try await first.userRecordID()
        #expect(try await first.userRecordID() == id1)
        // A second container on the same open store, same user.
        let second = try dir.open(user: "alice")
        #expect(try await second.userRecordID() == id1)
        second.close()
        first.close()
        // A fresh open of the closed store.
        let reopened = try dir.open(user: "alice")
        defer { reopened.close() }
        #expect(try await reopened.userRecordID() == id1)
    }

    @Test func differentUsersGetDifferentUserRecordIDs() async throws {
        let store = try TestStore(user: "alice")
        let bob = try store.container(user: "bob")
        let a = try await store.container.userRecordID()
        let b = try await bob.userRecordID()
        #expect(a != b)
        #expect(b.recordName.count == 33 && b.recordName.hasPrefix("_"))
    }

    @Test func theUserRecordExistsInPublicAndPrivateDatabasesAsUsersType() async throws {
        let id = try await store.container.userRecordID()
        for db in [store.privateDatabase, store.publicDatabase] {
            let record = try await db.record(for: id)
            #expect(record.recordType == Record.SystemType.userRecord)
            #expect(record.recordType == "Users")
            #expect(record.allKeys().isEmpty)
        }
    }

    // MARK: - Nobody

    @Test func nobodyGetsNotAuthenticatedFromUserRecordID() async throws {
        let store = try TestStore(user: nil)
        await expectFogError(.notAuthenticated) { try await store.container.userRecordID() }
    }

    @Test(arguments: [Database.Scope.private, .shared])
    func nobodyCannotReadPrivateOrSharedDatabases(scope: Database.Scope) async throws {
        let store = try TestStore(user: "alice")
        if scope == .private {
            try await store.privateDatabase.save(Record(recordType: "Note", recordID: .init(recordName: "n1")))
        }
        let nobody = try store.container(user: nil)
        let db = nobody.database(with: scope)
        await expectFogError(.notAuthenticated) { try await db.record(for: .init(recordName: "n1")) }
        await expectFogError(.notAuthenticated) { try await db.records(for: [.init(recordName: "n1")]) }
        await expectFogError(.notAuthenticated) { try await db.allRecordZones() }
        await expectFogError(.notAuthenticated) { try await db.recordZone(for: .default) }
    }

    @Test(arguments: Database.Scope.allCases)
    func nobodyCannotWriteToAnyDatabase(scope: Database.Scope) async throws {
        let store = try TestStore(user: "alice")
        let existing = Record(recordType: "Note", recordID: .init(recordName: "kept"))
        existing["title"] = "original"
        if scope != .shared { try await store.container.database(with: scope).save(existing) }

        let nobody = try store.container(user: nil)
        let db = nobody.database(with: scope)
        let record = Record(recordType: "Note", recordID: .init(recordName: "new"))
        record["title"] = "by nobody"
        await expectFogError(.notAuthenticated) { try await db.save(record) }
        await expectFogError(.notAuthenticated) {
            try await db.modifyRecords(saving: [record], deleting: [], atomically: false)
        }
        await expectFogError(.notAuthenticated) { try await db.deleteRecord(withID: existing.recordID) }
        await expectFogError(.notAuthenticated) { try await db.save(RecordZone(zoneName: "Z")) }

        // Nothing changed.
        if scope != .shared {
            let aliceDB = store.container.database(with: scope)
            await expectNotStored(record.recordID, in: aliceDB)
            #expect(try await aliceDB.record(for: existing.recordID)["title"] as? String == "original")
        }
        #expect(try await store.privateDatabase.allRecordZones().count == 1)
    }

    @Test func nobodyCanReadThePublicDatabase() async throws {
        let store = try TestStore(user: "alice")
        let note = Record(recordType: "Note", recordID: .init(recordName: "public-note"))
        note["title"] = "hello world"
        try await store.publicDatabase.save(note)

        let nobody = try store.container(user: nil)
        let db = nobody.publicCloudDatabase
        let fetched = try await db.record(for: note.recordID)
        #expect(fetched["title"] as? String == "hello world")
        #expect(fetched.creatorUserRecordID == (try await store.container.userRecordID()))
        let results = try await db.records(for: [note.recordID, .init(recordName: "missing")])
        #expect(results[note.recordID]?.succeeded == true)
        #expect(results[.init(recordName: "missing")]?.fogCode == .unknownItem)
        let zones = try await db.allRecordZones()
        #expect(zones.map(\.zoneID) == [.default])
    }

    // MARK: - Identity of the store

    @Test func openingAnOpenStoreWithAnotherIdentifierFailsWithBadContainer() async throws {
        let error = await expectFogError(.badContainer) {
            try Container(identifier: "iCloud.other", store: store.location, user: "alice", configuration: .init(durability: .none))
        }
        #expect(error != nil)
        // The failed open did not disturb the container that holds the store.
        let note = Record(recordType: "Note")
        try await store.privateDatabase.save(note)
        #expect(try await store.privateDatabase.record(for: note.recordID).recordType == "Note")
    }

    @Test func openingAClosedStoreWithAnotherIdentifierFailsWithBadContainer() async throws {
        let dir = try TemporaryDirectory()
        let c = try dir.open(identifier: "iCloud.first")
        c.close()
        await expectFogError(.badContainer) { try dir.open(identifier: "iCloud.second") }
        // The right identifier still opens it.
        let again = try dir.open(identifier: "iCloud.first")
        again.close()
    }

    @Test func anEmptyContainerIdentifierIsRejected() async throws {
        let dir = try TemporaryDirectory()
        await expectFogError(.badContainer) { try dir.open(identifier: "") }
    }

    // MARK: - Closing

    @Test func callsAfterClosingFailWithInternalError() async throws {
        let dir = try TemporaryDirectory()
        let c = try dir.open()
        c.close()
        await expectFogError(.internalError) { try await c.privateCloudDatabase.record(for: .init(recordName: "x")) }
        await expectFogError(.internalError) { try await c.privateCloudDatabase.save(Record(recordType: "Note")) }
    }

    @Test func closingOneContainerTwiceDoesNotCloseAnotherContainersStore() async throws {
        let store = try TestStore(user: "alice")
        let bob = try store.container(user: "bob")
        bob.close()
        bob.close()  // a second close must not balance alice's open
        let note = Record(recordType: "Note")
        let saved = try await store.privateDatabase.save(note)
        #expect(saved.recordChangeTag != nil)
    }

    // MARK: - Isolation between users

    @Test func privateDatabasesOfTwoUsersAreIsolated() async throws {
        let store = try TestStore(user: "alice")
        let bob = try store.container(user: "bob")
        let aliceDB = store.privateDatabase
        let bobDB = bob.privateCloudDatabase

        // The same record name in each user's private database.
        let id = Record.ID(recordName: "same-name")
        let a = Record(recordType: "Note", recordID: id)
        a["owner"] = "alice"
        let b = Record(recordType: "Note", recordID: id)
        b["owner"] = "bob"
        try await aliceDB.save(a)
        try await bobDB.save(b)  // not a conflict: another database
        #expect(try await aliceDB.record(for: id)["owner"] as? String == "alice")
        #expect(try await bobDB.record(for: id)["owner"] as? String == "bob")

        // A record only alice has.
        let secret = Record(recordType: "Note", recordID: .init(recordName: "alice-only"))
        secret["owner"] = "alice"
        try await aliceDB.save(secret)
        await expectFogError(.unknownItem) { try await bobDB.record(for: secret.recordID) }

        // Addressing alice's zone explicitly by her user record name is an error too.
        let aliceName = try await store.container.userRecordID().recordName
        let aliceZone = RecordZone.ID(zoneName: RecordZone.ID.defaultZoneName, ownerName: aliceName)
        do {
            _ = try await bobDB.record(for: Record.ID(recordName: "alice-only", zoneID: aliceZone))
            Issue.record("bob read alice's private record")
        } catch {}

        // Custom zones are per user too.
        try await aliceDB.save(RecordZone(zoneName: "AliceZone"))
        #expect(try await bobDB.allRecordZones().map(\.zoneID.zoneName) == [RecordZone.ID.defaultZoneName])
        await expectFogError(.zoneNotFound) { try await bobDB.recordZone(for: .init(zoneName: "AliceZone")) }
        let intoAliceZone = Record(recordType: "Note", zoneID: .init(zoneName: "AliceZone"))
        await expectFogError(.zoneNotFound) { try await bobDB.save(intoAliceZone) }

        await expectFogError(.zoneNotFound) { try await bobDB.deleteRecordZone(withID: .init(zoneName: "AliceZone")) }
        #expect(try await aliceDB.recordZone(for: .init(zoneName: "AliceZone")).zoneID.zoneName == "AliceZone")

        // Bob deleting "same-name" deletes only his.
        try await bobDB.deleteRecord(withID: id)
        #expect(try await aliceDB.record(for: id)["owner"] as? String == "alice")
    }

    @Test func thePublicDatabaseIsSharedBetweenUsers() async throws {
        let store = try TestStore(user: "alice")
        let bob = try store.container(user: "bob")
        let aliceID = try await store.container.userRecordID()
        let bobID = try await bob.userRecordID()

        let byAlice = Record(recordType: "Post", recordID: .init(recordName: "post-a"))
        byAlice["text"] = "from alice"
        try await store.publicDatabase.save(byAlice)
        let byBob = Record(recordType: "Post", recordID: .init(recordName: "post-b"))
        byBob["text"] = "from bob"
        try await bob.publicCloudDatabase.save(byBob)

        let seenByBob = try await bob.publicCloudDatabase.record(for: byAlice.recordID)
        #expect(seenByBob["text"] as? String == "from alice")
        #expect(seenByBob.creatorUserRecordID == aliceID)
        let seenByAlice = try await store.publicDatabase.record(for: byBob.recordID)
        #expect(seenByAlice["text"] as? String == "from bob")
        #expect(seenByAlice.creatorUserRecordID == bobID)

        // Only one record may own an ID in the public database.
        let clash = Record(recordType: "Post", recordID: byAlice.recordID)
        await expectFogError(.serverRecordChanged) { try await bob.publicCloudDatabase.save(clash) }
    }

    @Test func anotherUserCannotModifyOrDeleteTheCreatorsPublicRecord() async throws {
        // CloudKit's default public-database grants: WRITE to "_creator" only.
        let store = try TestStore(user: "alice")
        let bob = try store.container(user: "bob")
        let post = Record(recordType: "Post", recordID: .init(recordName: "post"))
        post["text"] = "alice's"
        try await store.publicDatabase.save(post)

        let fetched = try await bob.publicCloudDatabase.record(for: post.recordID)
        fetched["text"] = "bob was here"
        await expectFogError(.permissionFailure) { try await bob.publicCloudDatabase.save(fetched) }
        await expectFogError(.permissionFailure) { try await bob.publicCloudDatabase.deleteRecord(withID: post.recordID) }
        #expect(try await store.publicDatabase.record(for: post.recordID)["text"] as? String == "alice's")
    }
}
