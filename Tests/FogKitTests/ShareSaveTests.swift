import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// Saving and deleting shares in the owner's private database (issue 16, sharing; reference
/// §10.1; `Docs/Sharing.md`): a new share comes with its root, the root's `share` is set and
/// cleared, one share per record, the participant limit, and what a fetch returns.
@Suite struct ShareSaveTests {
    let store: TestStore
    var admin: Container.Administrator { store.admin }
    var alice: Container { store.container }
    var db: Database { store.privateDatabase }
    static let zone = RecordZone.ID(zoneName: "Albums")

    init() async throws {
        store = try TestStore()
        _ = try await store.privateDatabase.save(RecordZone(zoneID: Self.zone))
        var name = PersonNameComponents()
        name.givenName = "Alice"
        _ = try await store.admin.addUser("alice", emailAddress: "alice@example.com", nameComponents: name)
        _ = try await store.admin.addUser("bob", emailAddress: "bob@example.com")
    }

    static func album(_ name: String, parent: Record? = nil) -> Record {
        let record = Record(recordType: "Album", recordID: Record.ID(recordName: name, zoneID: zone))
        record["title"] = name
        if let parent { record.setParent(parent) }
        return record
    }

    /// Saves `records` in one request; returns each record's result by name.
    func save(_ records: [Record], atomically: Bool = true) async throws -> [String: Result<Record, any Error>] {
        let result = try await db.modifyRecords(saving: records, deleting: [], atomically: atomically)
        return Dictionary(uniqueKeysWithValues: result.saveResults.map { ($0.key.recordName, $0.value) })
    }

    @Test(arguments: [true, false]) func aShareSavedWithItsRootIsStoredAndTheRootNamesIt(atomically: Bool) async throws {
        let root = Self.album("holiday")
        let share = Share(rootRecord: root, shareID: Record.ID(recordName: "holiday-share", zoneID: Self.zone))
        share[Share.SystemFieldKey.title] = "Holiday photos"
        let bob = try await alice.shareParticipant(forEmailAddress: "bob@example.com")
        bob.permission = .readWrite
        share.addParticipant(bob)
        // The share comes first in the request: the store saves the root first anyway.
        let results = try await save([share, root], atomically: atomically)
        let savedRoot = try #require(try results["holiday"]?.get())
        let savedShare = try #require(try results["holiday-share"]?.get() as? Share)
        #expect(savedRoot.share?.recordID == share.recordID)
        #expect(savedShare.url?.absoluteString.hasPrefix("fogkit:share/") == true)

        let aliceID = try await alice.userRecordID()
        let fetchedRoot = try await db.record(for: root.recordID)
        #expect(fetchedRoot.share?.recordID == share.recordID)
        let fetched = try #require(try await db.record(for: share.recordID) as? Share)
        #expect(fetched.recordType == "cloudkit.share")
        #expect(fetched.allKeys() == [Share.SystemFieldKey.title], "the share's state is not handed out as fields")
        #expect(fetched[Share.SystemFieldKey.title] as? String == "Holiday photos")
        #expect(fetched.url == savedShare.url)
        #expect(fetched.rootRecordID == root.recordID)
        #expect(fetched.publicPermission == .none)
        #expect(fetched.owner.userIdentity.userRecordID == aliceID)
        #expect(fetched.owner.userIdentity.nameComponents?.givenName == "Alice")
        #expect(fetched.owner.role == .owner)
        #expect(fetched.owner.acceptanceStatus == .accepted)
        #expect(fetched.currentUserParticipant == fetched.owner)
        #expect(fetched.participants.count == 2)
        let invited = try #require(fetched.participants.last)
        #expect(invited == bob)
        #expect(invited.permission == .readWrite)
        #expect(invited.acceptanceStatus == .pending)
        #expect(invited.userIdentity.lookupInfo?.emailAddress == "bob@example.com")
        #expect(try admin.checkIntegrity().isSound)
        // Desired keys limit the share's fields, never its state.
        for keys in [[], ["other"], [Share.SystemFieldKey.title]] {
            let partial = try #require(try await db.records(for: [share.recordID], desiredKeys: keys)[share.recordID]?.get() as? Share)
            #expect(partial.participants.count == 2, "\(keys)")
            #expect(partial.url == savedShare.url)
            #expect(partial.allKeys() == keys.filter { $0 == Share.SystemFieldKey.title })
        }
    }

    @Test func aNewShareWithoutItsRootIsRefusedAndNothingIsStored() async throws {
        let root = try await db.save(Self.album("holiday"))
        let share = Share(rootRecord: root)
        let alone = try await save([share], atomically: false)
        let error = try #require(alone[share.recordID.recordName].flatMap { fogCode($0.failureError) })
        #expect(error == .invalidArguments)
        await expectNotStored(share.recordID, in: db)
        #expect(try await db.record(for: root.recordID).share == nil)

        // A root that fails to save takes the share with it, atomically or not.
        let stale = try await db.record(for: root.recordID)
        stale["title"] = "changed"
        let later = try await save([Self.album("holiday"), Share(rootRecord: stale)], atomically: false)
        #expect(later.values.allSatisfy { !$0.succeeded })
        #expect(try await db.record(for: root.recordID).share == nil)
    }

    @Test func oneSharePerRecord() async throws {
        let root = Self.album("holiday")
        let child = Self.album("day1", parent: root)
        let first = Share(rootRecord: root)
        _ = try await save([root, child, first])
        // The same root again.
        let again = try await save([try await db.record(for: root.recordID), Share(rootRecord: root)], atomically: false)
        #expect(again.values.contains { fogCode($0.failureError) == .alreadyShared })
        // A record inside the shared hierarchy.
        let inside = try await save([try await db.record(for: child.recordID), Share(rootRecord: child)], atomically: false)
        #expect(inside.values.contains { fogCode($0.failureError) == .alreadyShared })
        // A record above the shared hierarchy: its share would hold the shared root too.
        let album = Self.album("albums")
        let rootAgain = try await db.record(for: root.recordID)
        rootAgain.setParent(album)
        let above = try await save([album, rootAgain, Share(rootRecord: album)], atomically: false)
        #expect(above.values.contains { fogCode($0.failureError) == .alreadyShared })
        #expect(try await db.record(for: album.recordID).share == nil)
        // The zone as a whole.
        let zoneWide = Share(recordZoneID: Self.zone)
        let whole = try await save([zoneWide], atomically: false)
        #expect(whole.values.contains { fogCode($0.failureError) == .alreadyShared })
        await expectNotStored(zoneWide.recordID, in: db)
    }

    @Test func aZoneWideShareSharesTheZoneAndNoHierarchyShareJoinsIt() async throws {
        let other = RecordZone.ID(zoneName: "Notes")
        _ = try await db.save(RecordZone(zoneID: other))
        let zoneWide = Share(recordZoneID: other)
        let saved = try #require(try await db.save(zoneWide) as? Share)
        #expect(saved.recordID.recordName == Share.zoneWideShareRecordName)
        #expect(saved.rootRecordID == nil)
        #expect(saved.url != nil)
        let note = Record(recordType: "Note", recordID: Record.ID(recordName: "n1", zoneID: other))
        let refused = try await db.modifyRecords(saving: [note, Share(rootRecord: note)], deleting: [], atomically: false)
        #expect(refused.saveResults.values.contains { fogCode($0.failureError) == .alreadyShared })
    }

    @Test func whereSharesCannotBeSaved() async throws {
        let inDefault = Record(recordType: "Album", recordID: Record.ID(recordName: "d"))
        await expectFogError(.invalidArguments) { try await db.save(Share(rootRecord: inDefault)) }
        let publicRoot = Record(recordType: "Album")
        let publicResult = try await alice.publicCloudDatabase.modifyRecords(
            saving: [publicRoot, Share(rootRecord: publicRoot)], deleting: [], atomically: false)
        #expect(publicResult.saveResults.values.contains { fogCode($0.failureError) == .invalidArguments })
        // A plain record of the share type is not a share.
        let fake = Record(recordType: Record.SystemType.share, recordID: Record.ID(recordName: "fake", zoneID: Self.zone))
        let error = await expectFogError(.invalidArguments) { try await db.save(fake) }
        #expect(error?.message.contains("Share(rootRecord:)") == true)
    }

    @Test func participantRules() async throws {
        let root = Self.album("holiday")
        let crowded = Share(rootRecord: root)
        for i in 0...Share.maximumParticipants {
            let id = Record.ID(recordName: String(format: "_%032x", i + 1))
            crowded.addParticipant(
                Share.Participant(
                    userIdentity: UserIdentity(
                        userRecordID: id, lookupInfo: .init(userRecordID: id), nameComponents: nil, hasiCloudAccount: true),
                    role: .privateUser, permission: .readOnly, acceptanceStatus: .unknown))
        }
        let tooMany = try await save([root, crowded], atomically: false)
        #expect(fogCode(tooMany[crowded.recordID.recordName]?.failureError) == .tooManyParticipants)
        await expectNotStored(crowded.recordID, in: db)

        // Invited participants and a public permission do not mix.
        let mixed = Share(rootRecord: root)
        mixed.publicPermission = .readOnly
        mixed.addParticipant(try await alice.shareParticipant(forEmailAddress: "bob@example.com"))
        let refused = try await save([try await db.record(for: root.recordID), mixed], atomically: false)
        #expect(fogCode(refused[mixed.recordID.recordName]?.failureError) == .invalidArguments)
    }

    @Test func changingAShareKeepsItsOwnerRootAndURL() async throws {
        let root = Self.album("holiday")
        let share = Share(rootRecord: root)
        _ = try await save([root, share])
        let fetched = try #require(try await db.record(for: share.recordID) as? Share)
        fetched.addParticipant(try await alice.shareParticipant(forEmailAddress: "bob@example.com"))
        fetched.publicPermission = .none
        let saved = try #require(try await db.save(fetched) as? Share)
        #expect(saved.participants.count == 2)
        #expect(saved.url == fetched.url)
        #expect(saved.owner == fetched.owner)
        // Only the store accepts: a client cannot mark a participant accepted.
        let again = try #require(try await db.record(for: share.recordID) as? Share)
        again.participants.last?.acceptanceStatus = .accepted
        let resaved = try #require(try await db.save(again) as? Share)
        #expect(resaved.participants.last?.acceptanceStatus == .pending)
        // The root of a share never changes.
        let moved = Share(rootRecord: Self.album("other"), shareID: share.recordID)
        _ = try await db.save(Self.album("other"))
        let error = await expectFogError(.invalidArguments) {
            try await db.modifyRecords(saving: [moved], deleting: [], savePolicy: .allKeys, atomically: false).saveResults[moved.recordID]!
                .get()
        }
        #expect(error?.message.contains("root") == true, "\(error?.message ?? "")")
        #expect(try admin.checkIntegrity().isSound)
    }

    @Test func deletingTheShareClearsTheRootsShareAndDeletingTheRootDeletesTheShare() async throws {
        let root = Self.album("holiday")
        let share = Share(rootRecord: root)
        _ = try await save([root, share])
        let before = try await db.record(for: root.recordID)
        try await db.deleteRecord(withID: share.recordID)
        let after = try await db.record(for: root.recordID)
        #expect(after.share == nil)
        #expect(after.recordChangeTag != before.recordChangeTag, "clearing the share changes the root")
        #expect(after["title"] as? String == "holiday")

        // Share again (the root alone may be shared anew), then delete the root.
        let second = Share(rootRecord: after)
        _ = try await save([after, second])
        #expect(try await db.record(for: root.recordID).share?.recordID == second.recordID)
        try await db.deleteRecord(withID: root.recordID)
        await expectNotStored(second.recordID, in: db)
        #expect(try admin.checkIntegrity().isSound)
    }

    @Test func theChangeFeedReportsTheRootWhenItsShareGoes() async throws {
        let root = Self.album("holiday")
        let share = Share(rootRecord: root)
        _ = try await save([root, share])
        let token = try await db.recordZoneChanges(inZoneWith: Self.zone, since: nil).changeToken
        try await db.deleteRecord(withID: share.recordID)
        let changes = try await db.recordZoneChanges(inZoneWith: Self.zone, since: token)
        let modified = try changes.modificationResultsByID.compactMapValues { try $0.get().record }
        #expect(modified[root.recordID]?.share == nil)
        #expect(changes.deletions.map(\.recordID) == [share.recordID])
    }
}
