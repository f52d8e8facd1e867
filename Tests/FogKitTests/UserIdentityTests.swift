import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// The user directory and `UserIdentity` (issue 16, "Identities"; `Docs/Users.md`): the
/// administrator ties an email address and a name to a user; users look each other up by
/// email address or user record ID and get `nil` for someone the container does not know.
@Suite struct UserIdentityTests {
    let store: TestStore
    var admin: Container.Administrator { store.admin }
    var alice: Container { store.container }

    init() throws { store = try TestStore() }

    static func name(_ given: String?, _ family: String?) -> PersonNameComponents {
        var name = PersonNameComponents()
        name.givenName = given
        name.familyName = family
        return name
    }

    @Test func aUserLooksUpAnotherByEmailAddressAndByUserRecordID() async throws {
        let bobName = Self.name("Bob", "Smith")
        let added = try await admin.addUser("bob", emailAddress: "Bob@Example.com", nameComponents: bobName)
        // The user record ID is the one bob's own container gets.
        let bob = try store.container(user: "bob")
        let bobID = try await bob.userRecordID()
        #expect(added.userRecordID == bobID)
        #expect(added.nameComponents == bobName)
        #expect(added.lookupInfo?.emailAddress == "Bob@Example.com")
        #expect(added.lookupInfo?.userRecordID == bobID)
        #expect(added.lookupInfo?.phoneNumber == nil)
        #expect(added.hasiCloudAccount)

        // Email addresses compare without regard to case.
        for email in ["Bob@Example.com", "bob@example.com", "BOB@EXAMPLE.COM"] {
            #expect(try await alice.userIdentity(forEmailAddress: email) == added, "\(email)")
        }
        #expect(try await alice.userIdentity(forUserRecordID: bobID) == added)
        // A user finds themself too.
        #expect(try await bob.userIdentity(forUserRecordID: bobID) == added)
    }

    @Test func unknownUsersAreNil() async throws {
        _ = try await admin.addUser("bob", emailAddress: "bob@example.com")
        #expect(try await alice.userIdentity(forEmailAddress: "carol@example.com") == nil)
        #expect(try await alice.userIdentity(forUserRecordID: Record.ID(recordName: "_" + String(repeating: "0", count: 32))) == nil)
        #expect(try await alice.userIdentity(forUserRecordID: Record.ID(recordName: "bob")) == nil, "the identity is not the record name")
        // A user record name in another zone names no user.
        let bobID = try await store.container(user: "bob").userRecordID()
        let elsewhere = Record.ID(recordName: bobID.recordName, zoneID: RecordZone.ID(zoneName: "Z"))
        #expect(try await alice.userIdentity(forUserRecordID: elsewhere) == nil)
    }

    @Test func aUserWithoutAnEntryHasAnIdentityWithoutNameOrEmail() async throws {
        let aliceID = try await alice.userRecordID()
        let identity = try #require(try await alice.userIdentity(forUserRecordID: aliceID))
        #expect(identity.userRecordID == aliceID)
        #expect(identity.nameComponents == nil)
        #expect(identity.lookupInfo == UserIdentity.LookupInfo(userRecordID: aliceID))
        #expect(identity.hasiCloudAccount)
    }

    @Test func addingAnUnknownUserRegistersItAsOpeningAContainerWould() async throws {
        let added = try await admin.addUser("dave", emailAddress: "dave@example.com")
        let id = try #require(added.userRecordID)
        #expect(id.recordName.count == 33 && id.recordName.hasPrefix("_"))
        // Its Users record exists in the public database, and its container gets the same ID.
        #expect(try await alice.publicCloudDatabase.record(for: id).recordType == Record.SystemType.userRecord)
        #expect(try await store.container(user: "dave").userRecordID() == id)
        #expect(try admin.storeInfo().userCount == 2)
        #expect(try admin.checkIntegrity().isSound)
    }

    @Test func changingAnEntryReplacesTheEmailAddressAndName() async throws {
        _ = try await admin.addUser("bob", emailAddress: "bob@old.example", nameComponents: Self.name("Bob", nil))
        let changed = try await admin.addUser("bob", emailAddress: "bob@new.example", nameComponents: Self.name("Robert", "Smith"))
        #expect(try await alice.userIdentity(forEmailAddress: "bob@old.example") == nil)
        #expect(try await alice.userIdentity(forEmailAddress: "bob@new.example") == changed)
        #expect(changed.nameComponents?.givenName == "Robert")
        // nil removes both; the old address is free for someone else.
        let bare = try await admin.addUser("bob")
        #expect(bare.nameComponents == nil && bare.lookupInfo?.emailAddress == nil)
        #expect(try await alice.userIdentity(forEmailAddress: "bob@new.example") == nil)
        #expect(try await alice.userIdentity(forUserRecordID: try #require(bare.userRecordID)) == bare)
        _ = try await admin.addUser("carol", emailAddress: "bob@new.example")
        #expect(try await alice.userIdentity(forEmailAddress: "bob@new.example")?.userRecordID != bare.userRecordID)
    }

    @Test func anEmailAddressBelongsToOneUser() async throws {
        let bob = try await admin.addUser("bob", emailAddress: "bob@example.com")
        let error = await expectFogError(.constraintViolation) {
            try await admin.addUser("carol", emailAddress: "BOB@example.com", nameComponents: Self.name("Carol", nil))
        }
        #expect(error?.message.contains("bob") == true, "\(error?.message ?? "")")
        // Nothing of carol was stored, not even her registration.
        #expect(try await alice.userIdentity(forEmailAddress: "bob@example.com") == bob)
        #expect(try admin.users()["carol"] == nil)
        #expect(try admin.storeInfo().userCount == 2)
        // Setting the same address again on its owner is fine.
        #expect(try await admin.addUser("bob", emailAddress: "bob@example.com") == bob)
    }

    static let malformedEmails: [(String, String)] = [
        ("", "empty"), ("bob", "no @"), ("bob@", "nothing after"), ("@example.com", "nothing before"),
        ("bob@example", "no dot"), ("bob@@example.com", "more than one"), ("bob@exa mple.com", "space"),
        (" bob@example.com", "space"), ("bob@example..com", "empty label"), ("bob@-example.com", "hyphen"),
        ("bo..b@example.com", "two in a row"), (".bob@example.com", "dot"), ("bob<@example.com", "contains <"),
        ("bob@exa_mple.com", "contains _"), ("bob\u{7}@example.com", "control"),
        (String(repeating: "b", count: 65) + "@example.com", "longer than 64"),
        ("bob@" + String(repeating: "a", count: 64) + ".com", "longer than 63"),
        (
            String(repeating: "b", count: 60) + "@" + Array(repeating: String(repeating: "a", count: 60), count: 4).joined(separator: "."),
            "longer than 254"
        ),
    ]

    @Test(arguments: malformedEmails) func aMalformedEmailAddressIsRefusedAndNothingIsStored(_ email: String, _ why: String) async throws {
        let before = try admin.users()
        let error = await expectFogError(.invalidArguments, "\(email)") {
            try await admin.addUser("bob", emailAddress: email, nameComponents: Self.name("Bob", nil))
        }
        #expect(error?.message.contains("addUser") == true, "names the call: \(error?.message ?? "")")
        #expect(error?.message.contains("emailAddress") == true, "names the argument: \(error?.message ?? "")")
        #expect(error?.message.contains(why) == true, "says what is wrong (\(why)): \(error?.message ?? "")")
        #expect(try admin.users() == before)
        // Looking up by such an address is the same error, not nil.
        await expectFogError(.invalidArguments, "\(email)") { try await alice.userIdentity(forEmailAddress: email) }
    }

    @Test func wellFormedAddressesAreAccepted() async throws {
        for (i, email) in ["a@b.co", "first.last+tag@sub.example.org", "o'neil@example.com", "jürgen@bücher.example", "x@1.2.3.4"]
            .enumerated()
        {
            let identity = try await admin.addUser("user\(i)", emailAddress: email)
            #expect(try await alice.userIdentity(forEmailAddress: email) == identity, "\(email)")
        }
    }

    @Test func emptyNamesAreRefusedAndNothingIsStored() async throws {
        let before = try admin.users()
        var blankGiven = Self.name("  ", "Smith")
        await expectFogError(.invalidArguments) { try await admin.addUser("bob", nameComponents: blankGiven) }
        blankGiven.givenName = ""
        let error = await expectFogError(.invalidArguments) { try await admin.addUser("bob", nameComponents: blankGiven) }
        #expect(error?.message.contains("nameComponents.givenName") == true, "\(error?.message ?? "")")
        let none = await expectFogError(.invalidArguments) { try await admin.addUser("bob", nameComponents: PersonNameComponents()) }
        #expect(none?.message.contains("no part") == true, "\(none?.message ?? "")")
        var long = PersonNameComponents()
        long.nickname = String(repeating: "n", count: 1025)
        await expectFogError(.invalidArguments) { try await admin.addUser("bob", nameComponents: long) }
        for user in ["", String(repeating: "u", count: 256)] {
            let bad = await expectFogError(.invalidArguments) { try await admin.addUser(user, emailAddress: "u@example.com") }
            #expect(bad?.message.contains("user name") == true, "\(bad?.message ?? "")")
        }
        #expect(try admin.users() == before)
        #expect(try await alice.userIdentity(forEmailAddress: "u@example.com") == nil)
    }

    @Test func everyNamePartIsKept() async throws {
        var name = PersonNameComponents()
        name.namePrefix = "Dr."
        name.givenName = "Ada"
        name.middleName = "King"
        name.familyName = "Lovelace"
        name.nameSuffix = "II"
        name.nickname = "Countess"
        let added = try await admin.addUser("ada", emailAddress: "ada@example.com", nameComponents: name)
        #expect(added.nameComponents == name)
        #expect(try await alice.userIdentity(forEmailAddress: "ada@example.com")?.nameComponents == name)
        #expect(added.description.contains("Dr. Ada King Lovelace II \"Countess\""))
    }

    @Test func theDirectoryPersistsAndTheAdministratorListsIt() async throws {
        let bob = try await admin.addUser("bob", emailAddress: "bob@example.com", nameComponents: Self.name("Bob", "Smith"))
        let aliceID = try await alice.userRecordID()
        let listed = try admin.users()
        #expect(listed["bob"] == bob)
        #expect(listed["alice"]?.userRecordID == aliceID)
        #expect(listed["alice"]?.nameComponents == nil)
        #expect(listed.count == 2)

        // Reopened from disk.
        let copy = try TemporaryDirectory()
        try admin.backup(to: copy.url)
        let reopened = try Container.Administrator(identifier: "iCloud.test", directory: copy.url)
        defer { reopened.close() }
        #expect(try reopened.users() == listed)
        let carol = try reopened.container(user: "carol")
        defer { carol.close() }
        #expect(try await carol.userIdentity(forEmailAddress: "bob@example.com") == bob)
    }

    @Test func nobodyCannotLookUpUsersAndUsersCannotChangeTheDirectory() async throws {
        _ = try await admin.addUser("bob", emailAddress: "bob@example.com")
        let nobody = try store.container(user: nil)
        await expectFogError(.notAuthenticated) { try await nobody.userIdentity(forEmailAddress: "bob@example.com") }
        await expectFogError(.notAuthenticated) { try await nobody.userIdentity(forUserRecordID: try await alice.userRecordID()) }
        // Only the administrator changes or lists the directory (a container has no such
        // call; the policy refuses the others); the administrator does not look users up.
        for caller in [Caller.user(try await alice.userRecordID().recordName), .anonymous] {
            for call in [AdministrativeCall.changeUsers, .readUsers] {
                await expectFogError(.permissionFailure) {
                    try AccessPolicy.standard.check(.administer(call), AccessRequest(caller: caller))
                }
            }
        }
        await expectFogError(.permissionFailure) {
            try AccessPolicy.standard.check(.discoverUsers, AccessRequest(caller: .administrator))
        }
    }

    @Test func aClosedContainerOrAdministratorRefuses() async throws {
        let bob = try admin.container(user: "bob")
        bob.close()
        await expectFogError(.internalError) { try await bob.userIdentity(forEmailAddress: "bob@example.com") }
        let other = try Container.Administrator(identifier: "iCloud.test", store: store.location)
        other.close()
        await expectFogError(.internalError) { try await other.addUser("bob") }
        await expectFogError(.internalError) { try other.users() }
    }
}
