import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// Share metadata by URL and accepting a share (issue 16, sharing; reference §10.3, §6.9;
/// `Docs/Sharing.md`): for the owner, invited participants, and anyone on a public share;
/// `participantMayNeedVerification` for everyone else.
@Suite struct ShareAcceptTests {
    let store: TestStore
    var alice: Container { store.container }
    var db: Database { store.privateDatabase }
    static let zone = RecordZone.ID(zoneName: "Albums")
    let root = Record(recordType: "Album", recordID: Record.ID(recordName: "holiday", zoneID: zone))

    init() async throws {
        store = try TestStore()
        _ = try await store.privateDatabase.save(RecordZone(zoneID: Self.zone))
        var name = PersonNameComponents()
        name.givenName = "Alice"
        _ = try await store.admin.addUser("alice", emailAddress: "alice@example.com", nameComponents: name)
        _ = try await store.admin.addUser("bob", emailAddress: "bob@example.com")
        _ = try await store.admin.addUser("carol", emailAddress: "carol@example.com")
    }

    var bob: Container { get throws { try store.container(user: "bob") } }
    var carol: Container { get throws { try store.container(user: "carol") } }

    /// Alice shares the album with bob (`readWrite`), or publicly with `publicPermission`.
    func share(publicPermission: Share.ParticipantPermission = .none) async throws -> Share {
        let share = Share(rootRecord: root)
        if publicPermission == .none {
            let bob = try await alice.shareParticipant(forEmailAddress: "bob@example.com")
            bob.permission = .readWrite
            share.addParticipant(bob)
        } else {
            share.publicPermission = publicPermission
        }
        let result = try await db.modifyRecords(saving: [root, share], deleting: [])
        return try #require(try result.saveResults[share.recordID]?.get() as? Share)
    }

    @Test func anInvitedParticipantReadsTheMetadataAndAccepts() async throws {
        let saved = try await share()
        let url = try #require(saved.url)
        let aliceID = try await alice.userRecordID()
        let bobID = try await bob.userRecordID()

        let metadata = try await bob.shareMetadata(for: url)
        #expect(metadata.participantRole == .privateUser)
        #expect(metadata.participantPermission == .readWrite)
        #expect(metadata.participantStatus == .pending)
        #expect(metadata.containerIdentifier == "iCloud.test")
        #expect(metadata.ownerIdentity.userRecordID == aliceID)
        #expect(metadata.ownerIdentity.nameComponents?.givenName == "Alice")
        #expect(metadata.rootRecord == nil)
        // IDs name the owner, as the shared database's zones do.
        let rootID = try #require(metadata.hierarchicalRootRecordID)
        #expect(rootID.recordName == "holiday")
        #expect(rootID.zoneID == RecordZone.ID(zoneName: "Albums", ownerName: aliceID.recordName))
        #expect(metadata.share.recordID.zoneID.ownerName == aliceID.recordName)
        #expect(metadata.share.currentUserParticipant?.userIdentity.userRecordID == bobID)
        #expect(metadata.share.url == url)

        let accepted = try await bob.accept(metadata)
        #expect(accepted.currentUserParticipant?.acceptanceStatus == .accepted)
        #expect(try await bob.shareMetadata(for: url).participantStatus == .accepted)
        // The owner sees it, and the share changed in the owner's zone.
        let ownerView = try #require(try await db.record(for: saved.recordID) as? Share)
        #expect(ownerView.participants.last?.acceptanceStatus == .accepted)
        #expect(ownerView.recordChangeTag != saved.recordChangeTag)
        // Accepting again changes nothing.
        _ = try await bob.accept(metadata)
        #expect(try await db.record(for: saved.recordID).recordChangeTag == ownerView.recordChangeTag)
        // The owner saving the share again keeps the acceptance.
        ownerView[Share.SystemFieldKey.title] = "Holiday"
        let resaved = try #require(try await db.save(ownerView) as? Share)
        #expect(resaved.participants.last?.acceptanceStatus == .accepted)
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func theOwnerReadsTheMetadataAsOwner() async throws {
        let saved = try await share()
        let metadata = try await alice.shareMetadata(for: try #require(saved.url))
        #expect(metadata.participantRole == .owner)
        #expect(metadata.participantStatus == .accepted)
        let tag = try await db.record(for: saved.recordID).recordChangeTag
        _ = try await alice.accept(metadata)
        #expect(try await db.record(for: saved.recordID).recordChangeTag == tag)
    }

    @Test func someoneAPrivateShareDoesNotNameMayNeedVerification() async throws {
        let saved = try await share()
        let url = try #require(saved.url)
        await expectFogError(.participantMayNeedVerification) { try await carol.shareMetadata(for: url) }
        // Carol holding bob's metadata cannot accept with it.
        let bobs = try await bob.shareMetadata(for: url)
        await expectFogError(.participantMayNeedVerification) { try await carol.accept(bobs) }
        let ownerView = try #require(try await db.record(for: saved.recordID) as? Share)
        #expect(ownerView.participants.count == 2)
        // Nobody and the administrator are not users.
        let nobody = try store.container(user: nil)
        await expectFogError(.notAuthenticated) { try await nobody.shareMetadata(for: url) }
        await expectFogError(.notAuthenticated) { try await nobody.accept(bobs) }
        await expectFogError(.permissionFailure) {
            try AccessPolicy.standard.check(.acceptShare, AccessRequest(caller: .administrator, shareStanding: .owner))
        }
    }

    @Test func aRemovedParticipantCannotAccept() async throws {
        let saved = try await share()
        let metadata = try await bob.shareMetadata(for: try #require(saved.url))
        let ownerView = try #require(try await db.record(for: saved.recordID) as? Share)
        ownerView.removeParticipant(try #require(ownerView.participants.last))
        _ = try await db.save(ownerView)
        await expectFogError(.participantMayNeedVerification) { try await bob.accept(metadata) }
        await expectFogError(.participantMayNeedVerification) { try await bob.shareMetadata(for: try #require(saved.url)) }
    }

    @Test func anyoneJoinsAPublicShareAsAPublicUser() async throws {
        let saved = try await share(publicPermission: .readOnly)
        let metadata = try await carol.shareMetadata(for: try #require(saved.url))
        #expect(metadata.participantRole == .publicUser)
        #expect(metadata.participantPermission == .readOnly)
        #expect(metadata.participantStatus == .unknown)
        #expect(metadata.share.currentUserParticipant == nil)
        let joined = try await carol.accept(metadata)
        let me = try #require(joined.currentUserParticipant)
        #expect(me.role == .publicUser && me.permission == .readOnly && me.acceptanceStatus == .accepted)
        #expect(me.userIdentity.lookupInfo?.emailAddress == "carol@example.com")
        let ownerView = try #require(try await db.record(for: saved.recordID) as? Share)
        #expect(ownerView.participants.map(\.role) == [.owner, .publicUser])
        #expect(try await carol.shareMetadata(for: try #require(saved.url)).participantStatus == .accepted)
    }

    @Test func badAndStaleURLs() async throws {
        await expectFogError(.invalidArguments) { try await bob.shareMetadata(for: URL(string: "https://www.icloud.com/share/x")!) }
        await expectFogError(.invalidArguments) { try await bob.shareMetadata(for: URL(string: "fogkit:share/a/b")!) }
        let saved = try await share()
        let url = try #require(saved.url)
        let metadata = try await bob.shareMetadata(for: url)
        try await db.deleteRecord(withID: saved.recordID)
        await expectFogError(.unknownItem) { try await bob.shareMetadata(for: url) }
        await expectFogError(.unknownItem) { try await bob.accept(metadata) }
        // A URL naming a zone or owner that does not exist.
        let aliceID = try await alice.userRecordID()
        await expectFogError(.unknownItem) {
            try await bob.shareMetadata(for: Share.url(owner: aliceID.recordName, zoneName: "Nope", recordName: "x"))
        }
    }

    @Test func manyURLsAndManyAcceptancesAnswerEachOnItsOwn() async throws {
        let saved = try await share()
        let url = try #require(saved.url)
        let bad = URL(string: "fogkit:share/x/y/z")!
        let metadatas = try await bob.shareMetadatas(for: [url, bad])
        let good = try #require(try metadatas[url]?.get())
        #expect(fogCode(metadatas[bad]?.failureError) == .unknownItem)
        let results = try await bob.accept([good])
        #expect(try results[good]?.get().currentUserParticipant?.acceptanceStatus == .accepted)
        let carols = try await carol.accept([good])
        #expect(fogCode(carols[good]?.failureError) == .participantMayNeedVerification)
        let nobody = try store.container(user: nil)
        await expectFogError(.notAuthenticated) { try await nobody.shareMetadatas(for: [url]) }
    }
}
