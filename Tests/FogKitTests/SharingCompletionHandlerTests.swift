import FogKit
import FogKitTesting
import Testing

/// The container's sharing and user-discovery completion handlers, each against its `async`
/// twin: share metadata, acceptance, participants by email address and user record ID, and the
/// deprecated identity discovery.
@Suite struct SharingCompletionHandlerTests {
    let store: TestStore
    static let zone = RecordZone.ID(zoneName: "Albums")

    init() async throws {
        store = try TestStore()
        _ = try await store.privateDatabase.save(RecordZone(zoneID: Self.zone))
        _ = try await store.admin.addUser("bob", emailAddress: "bob@example.com")
    }

    private func await<T: Sendable>(_ start: (@escaping @Sendable (T) -> Void) -> Void) async -> T {
        await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
    }

    @Test func participantsAndIdentitiesThroughCompletionHandlers() async throws {
        let alice = store.container
        let byEmail: Share.Participant? = await self.await { done in
            alice.fetchShareParticipant(withEmailAddress: "bob@example.com") { participant, _ in done(participant) }
        }
        let bobID = try #require(byEmail?.userIdentity.userRecordID)
        let byID: Share.Participant? = await self.await { done in
            alice.fetchShareParticipant(withUserRecordID: bobID) { participant, _ in done(participant) }
        }
        #expect(byID?.userIdentity.userRecordID == bobID)
        let unknown: FogError.Code? = await self.await { done in
            alice.fetchShareParticipant(withEmailAddress: "nobody@example.com") { _, error in done((error as? FogError)?.code) }
        }
        #expect(unknown == .unknownItem)
    }

    @Test @available(*, deprecated) func deprecatedDiscoveryGivesNilForUnknownUsers() async throws {
        let alice = store.container
        let found: UserIdentity? = await self.await { done in
            alice.discoverUserIdentity(withEmailAddress: "bob@example.com") { identity, _ in done(identity) }
        }
        let bobID = try #require(found?.userRecordID)
        let again: UserIdentity? = await self.await { done in
            alice.discoverUserIdentity(withUserRecordID: bobID) { identity, _ in done(identity) }
        }
        #expect(again?.userRecordID == bobID)
        let missing: Bool = await self.await { done in
            alice.discoverUserIdentity(withEmailAddress: "nobody@example.com") { identity, error in done(identity == nil && error == nil) }
        }
        #expect(missing)
    }

    @Test func bobFetchesMetadataAndAcceptsThroughCompletionHandlers() async throws {
        let alice = store.container
        let root = Record(recordType: "Album", recordID: Record.ID(recordName: "holiday", zoneID: Self.zone))
        root["title"] = "Holiday"
        let share = Share(rootRecord: root)
        share.addParticipant(try await alice.shareParticipant(forEmailAddress: "bob@example.com"))
        _ = try await alice.privateCloudDatabase.modifyRecords(saving: [root, share], deleting: [])
        let stored = try #require(try await alice.privateCloudDatabase.record(for: share.recordID) as? Share)
        let url = try #require(stored.url)
        let bob = try store.container(user: "bob")

        let metadata: Share.Metadata? = await self.await { done in
            bob.fetchShareMetadata(with: url) { metadata, _ in done(metadata) }
        }
        let fetched = try #require(metadata)
        #expect(fetched.hierarchicalRootRecordID?.recordName == root.recordID.recordName)
        let accepted: Share? = await self.await { done in bob.accept(fetched) { share, _ in done(share) } }
        #expect(accepted?.recordID.recordName == share.recordID.recordName)

        let sharedZones = try await bob.sharedCloudDatabase.allRecordZones()
        #expect(sharedZones.map(\.zoneID.zoneName) == [Self.zone.zoneName])
        let album = try await bob.sharedCloudDatabase.record(for: Record.ID(recordName: "holiday", zoneID: sharedZones[0].zoneID))
        #expect(album["title"] as? String == "Holiday")
    }
}
