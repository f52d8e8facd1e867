import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// `Share` as a record and `Share.Participant` as CloudKit obtains them (issue 16, sharing;
/// reference §10.1, §10.2): participants from the user directory, the share's participant
/// list and its public-permission rules.
@Suite struct ShareModelTests {
    let store: TestStore
    var admin: Container.Administrator { store.admin }
    var alice: Container { store.container }

    init() throws { store = try TestStore() }

    static func name(_ given: String) -> PersonNameComponents {
        var name = PersonNameComponents()
        name.givenName = given
        return name
    }

    @Test func participantsComeFromTheDirectoryByEmailOrUserRecordID() async throws {
        let bob = try await admin.addUser("bob", emailAddress: "bob@example.com", nameComponents: Self.name("Bob"))
        let byEmail = try await alice.shareParticipant(forEmailAddress: "BOB@example.com")
        #expect(byEmail.userIdentity == bob)
        #expect(byEmail.role == .privateUser)
        #expect(byEmail.permission == .readOnly)
        #expect(byEmail.acceptanceStatus == .unknown)
        #expect(byEmail.participantID == bob.userRecordID?.recordName)
        let byID = try await alice.shareParticipant(forUserRecordID: try #require(bob.userRecordID))
        #expect(byID == byEmail, "the same user")
        #expect(byID !== byEmail, "a new participant each time")
        // A user without a directory entry is found by user record ID.
        let aliceID = try await alice.userRecordID()
        #expect(try await store.container(user: "bob").shareParticipant(forUserRecordID: aliceID).userIdentity.userRecordID == aliceID)
    }

    @Test func unknownUsersHaveNoParticipant() async throws {
        let noEmail = await expectFogError(.unknownItem) { try await alice.shareParticipant(forEmailAddress: "nobody@example.com") }
        #expect(noEmail?.message.contains("nobody@example.com") == true)
        await expectFogError(.unknownItem) {
            try await alice.shareParticipant(forUserRecordID: Record.ID(recordName: "_" + String(repeating: "f", count: 32)))
        }
        await expectFogError(.invalidArguments) { try await alice.shareParticipant(forEmailAddress: "not an address") }
        let nobody = try store.container(user: nil)
        await expectFogError(.notAuthenticated) { try await nobody.shareParticipant(forEmailAddress: "bob@example.com") }
    }

    @Test func aHierarchyShareIsARecordOfTypeShareInItsRootsZone() async throws {
        let zone = RecordZone.ID(zoneName: "Albums")
        let root = Record(recordType: "Album", recordID: Record.ID(recordName: "holiday", zoneID: zone))
        let share = Share(rootRecord: root)
        let record: Record = share
        #expect(record.recordType == Record.SystemType.share)
        #expect(record.recordType == "cloudkit.share")
        #expect(share.recordID.zoneID == zone)
        #expect(share.rootRecordID == root.recordID)
        #expect(share.publicPermission == .none)
        #expect(share.url == nil)
        #expect(share.owner.role == .owner)
        #expect(share.participants == [share.owner])
        #expect(share.currentUserParticipant == share.owner)
        let named = Share(rootRecord: root, shareID: Record.ID(recordName: "s1", zoneID: zone))
        #expect(named.recordID.recordName == "s1")
        // A share holds fields like any record, its system fields among them.
        share[Share.SystemFieldKey.title] = "Holiday"
        #expect(share[Share.SystemFieldKey.title] as? String == "Holiday")
        #expect(share.changedKeys() == ["cloudkit.share.title"])
    }

    @Test func aZoneWideShareIsNamedAfterCloudKitsConstant() {
        let zone = RecordZone.ID(zoneName: "Notes")
        let share = Share(recordZoneID: zone)
        #expect(share.recordID == Record.ID(recordName: "cloudkit.zoneshare", zoneID: zone))
        #expect(share.rootRecordID == nil)
    }

    @Test func addingAndRemovingParticipants() async throws {
        _ = try await admin.addUser("bob", emailAddress: "bob@example.com")
        _ = try await admin.addUser("carol", emailAddress: "carol@example.com")
        let share = Share(rootRecord: Record(recordType: "Album"))
        let bob = try await alice.shareParticipant(forEmailAddress: "bob@example.com")
        bob.permission = .readWrite
        share.addParticipant(bob)
        #expect(bob.acceptanceStatus == .pending)
        share.addParticipant(try await alice.shareParticipant(forEmailAddress: "bob@example.com"))
        #expect(share.participants.count == 2, "the same user is added once")
        #expect(share.participants.last?.permission == .readWrite)
        // The share holds the participant itself: changing it changes the share's.
        bob.permission = .readOnly
        #expect(share.participants.last?.permission == .readOnly)
        share.addParticipant(share.owner)
        #expect(share.participants.count == 2, "the owner is not added again")

        let carol = try await alice.shareParticipant(forEmailAddress: "carol@example.com")
        share.addParticipant(carol)
        share.removeParticipant(try await alice.shareParticipant(forEmailAddress: "bob@example.com"))
        #expect(share.participants == [share.owner, carol])
        #expect(bob.acceptanceStatus == .removed)
        share.removeParticipant(share.owner)
        #expect(share.participants.first?.role == .owner, "the owner stays")
    }

    @Test func publicPermissionRulesFollowCloudKit() async throws {
        _ = try await admin.addUser("bob", emailAddress: "bob@example.com")
        let share = Share(rootRecord: Record(recordType: "Album"))
        let bob = try await alice.shareParticipant(forEmailAddress: "bob@example.com")
        share.addParticipant(bob)
        // Raising the public permission drops pending participants.
        share.publicPermission = .readOnly
        #expect(share.participants == [share.owner])
        // Setting it back to none removes every participant but the owner.
        let accepted = try await alice.shareParticipant(forEmailAddress: "bob@example.com")
        share.publicPermission = .none
        share.addParticipant(accepted)
        accepted.acceptanceStatus = .accepted
        share.publicPermission = .readWrite
        #expect(share.participants.count == 2, "an accepted participant stays when the permission rises")
        share.publicPermission = .none
        #expect(share.participants == [share.owner])
    }

    @Test func aCopyIsIndependent() async throws {
        _ = try await admin.addUser("bob", emailAddress: "bob@example.com")
        let share = Share(rootRecord: Record(recordType: "Album"))
        share.addParticipant(try await alice.shareParticipant(forEmailAddress: "bob@example.com"))
        share["cloudkit.share.title"] = "T"
        let copy = try #require(share.copy() as? Share)
        #expect(copy.recordID == share.recordID)
        #expect(copy.participants == share.participants)
        #expect(copy["cloudkit.share.title"] as? String == "T")
        copy.participants.last?.permission = .readWrite
        #expect(share.participants.last?.permission == .readOnly)
        copy.publicPermission = .readOnly
        #expect(share.publicPermission == .none)
    }
}
