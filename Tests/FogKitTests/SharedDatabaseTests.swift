import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// The participant's shared database (issue 16, sharing; reference §10.4; `Docs/Sharing.md`):
/// after accepting, it lists the owner's zone under the owner's name and fetches exactly the
/// shared records; removing the participant or deleting the share revokes that at once.
@Suite struct SharedDatabaseTests {
    let store: TestStore
    var alice: Container { store.container }
    var db: Database { store.privateDatabase }
    static let albums = RecordZone.ID(zoneName: "Albums")
    static let notes = RecordZone.ID(zoneName: "Notes")

    let root = Record(recordType: "Album", recordID: Record.ID(recordName: "holiday", zoneID: albums))
    let child: Record
    let grandchild: Record
    let unshared = Record(recordType: "Album", recordID: Record.ID(recordName: "private", zoneID: albums))

    init() async throws {
        store = try TestStore()
        child = Record(recordType: "Photo", recordID: Record.ID(recordName: "day1", zoneID: Self.albums))
        child.setParent(root)
        grandchild = Record(recordType: "Photo", recordID: Record.ID(recordName: "day1-beach", zoneID: Self.albums))
        grandchild.setParent(child)
        for zone in [Self.albums, Self.notes] { _ = try await store.privateDatabase.save(RecordZone(zoneID: zone)) }
        _ = try await store.admin.addUser("bob", emailAddress: "bob@example.com")
        _ = try await store.admin.addUser("carol", emailAddress: "carol@example.com")
        _ = try await store.privateDatabase.modifyRecords(
            saving: [
                root, child, grandchild, unshared, Record(recordType: "Note", recordID: Record.ID(recordName: "n1", zoneID: Self.notes)),
            ],
            deleting: [])
    }

    var bob: Container { get throws { try store.container(user: "bob") } }
    var carol: Container { get throws { try store.container(user: "carol") } }

    /// Alice shares the album hierarchy with bob (`readWrite`); bob accepts unless told not to.
    @discardableResult
    func shareWithBob(accept: Bool = true) async throws -> Share {
        let share = Share(rootRecord: root)
        let participant = try await alice.shareParticipant(forEmailAddress: "bob@example.com")
        participant.permission = .readWrite
        share.addParticipant(participant)
        let result = try await db.modifyRecords(saving: [try await db.record(for: root.recordID), share], deleting: [])
        let saved = try #require(try result.saveResults[share.recordID]?.get() as? Share)
        if accept { _ = try await bob.accept(try await bob.shareMetadata(for: try #require(saved.url))) }
        return saved
    }

    func ownerZone(_ zone: RecordZone.ID) async throws -> RecordZone.ID {
        RecordZone.ID(zoneName: zone.zoneName, ownerName: try await alice.userRecordID().recordName)
    }

    func inShared(_ record: Record) async throws -> Record.ID {
        Record.ID(recordName: record.recordID.recordName, zoneID: try await ownerZone(record.recordID.zoneID))
    }

    @Test func theSharedDatabaseListsTheOwnersZoneOnceAccepted() async throws {
        try await shareWithBob(accept: false)
        #expect(try await bob.sharedCloudDatabase.allRecordZones().isEmpty, "not before accepting")
        let share = try #require(try await db.record(for: root.recordID).share)
        let saved = try #require(try await db.record(for: share.recordID) as? Share)
        _ = try await bob.accept(try await bob.shareMetadata(for: try #require(saved.url)))
        let zones = try await bob.sharedCloudDatabase.allRecordZones()
        let albums = try await ownerZone(Self.albums)
        #expect(zones.map(\.zoneID) == [albums])
        #expect(zones.first?.capabilities.contains(.sharing) == true)
        #expect(try await bob.sharedCloudDatabase.recordZone(for: albums).zoneID == albums)
        await expectFogError(.zoneNotFound) { try await bob.sharedCloudDatabase.recordZone(for: try await ownerZone(Self.notes)) }
        await expectFogError(.zoneNotFound) { try await bob.sharedCloudDatabase.recordZone(for: Self.albums) }
        // The owner's own zones are not in the owner's shared database, nor in another user's.
        #expect(try await alice.sharedCloudDatabase.allRecordZones().isEmpty)
        #expect(try await carol.sharedCloudDatabase.allRecordZones().isEmpty)
    }

    @Test func aParticipantFetchesExactlyTheSharedRecords() async throws {
        let share = try await shareWithBob()
        let shared = try bob.sharedCloudDatabase
        let aliceName = try await alice.userRecordID().recordName
        for record in [root, child, grandchild] {
            let id = try await inShared(record)
            let fetched = try await shared.record(for: id)
            #expect(fetched.recordID == id)
            #expect(fetched.recordID.zoneID.ownerName == aliceName, "the owner's name in the zone ID")
            #expect(fetched["title"] as? String == record["title"] as? String)
            #expect(fetched.parent?.recordID.zoneID.ownerName == (record.parent == nil ? nil : aliceName))
        }
        // The owner's other records stay invisible, as if they did not exist.
        let hidden = await expectFogError(.unknownItem) { try await shared.record(for: try await inShared(unshared)) }
        #expect(hidden?.message.contains("not shared") == true, "\(hidden?.message ?? "")")
        // A missing record and an unshared one answer in the same words: no oracle.
        let absent = await expectFogError(.unknownItem) {
            try await shared.record(for: Record.ID(recordName: "missing", zoneID: try await ownerZone(Self.albums)))
        }
        #expect(absent?.message == hidden?.message.replacingOccurrences(of: "private", with: "missing"))
        let deleteHidden = await expectFogError(.unknownItem) { try await shared.deleteRecord(withID: try await inShared(unshared)) }
        let deleteAbsent = await expectFogError(.unknownItem) {
            try await shared.deleteRecord(withID: Record.ID(recordName: "missing", zoneID: try await ownerZone(Self.albums)))
        }
        #expect(deleteAbsent?.message == deleteHidden?.message.replacingOccurrences(of: "private", with: "missing"))
        await expectFogError(.zoneNotFound) {
            try await shared.record(for: Record.ID(recordName: "n1", zoneID: try await ownerZone(Self.notes)))
        }
        await expectFogError(.zoneNotFound) { try await shared.record(for: root.recordID) }
        // Many at once, each with its own result.
        let results = try await shared.records(for: [
            try await inShared(root), try await inShared(unshared), try await inShared(grandchild),
        ])
        #expect(results[try await inShared(root)]?.succeeded == true)
        #expect(fogCode(results[try await inShared(unshared)]?.failureError) == .unknownItem)
        #expect(results[try await inShared(grandchild)]?.succeeded == true)
        // The share itself, seen by its participant.
        let fetchedShare = try #require(
            try await shared.record(for: Record.ID(recordName: share.recordID.recordName, zoneID: try await ownerZone(Self.albums)))
                as? Share)
        #expect(fetchedShare.currentUserParticipant?.userIdentity.userRecordID == (try await bob.userRecordID()))
        // Someone who did not accept sees nothing.
        await expectFogError(.zoneNotFound) { try await carol.sharedCloudDatabase.record(for: try await inShared(root)) }
    }

    @Test func removingTheParticipantOrDeletingTheShareRevokesAtOnce() async throws {
        let share = try await shareWithBob()
        let shared = try bob.sharedCloudDatabase
        let rootID = try await inShared(root)
        _ = try await shared.record(for: rootID)
        let ownerView = try #require(try await db.record(for: share.recordID) as? Share)
        ownerView.removeParticipant(try #require(ownerView.participants.last))
        _ = try await db.save(ownerView)
        await expectFogError(.zoneNotFound) { try await shared.record(for: rootID) }
        #expect(try await shared.allRecordZones().isEmpty)

        // Shared again and accepted, then the share deleted.
        let again = try #require(try await db.record(for: share.recordID) as? Share)
        again.addParticipant(try await alice.shareParticipant(forEmailAddress: "bob@example.com"))
        _ = try await db.save(again)
        _ = try await bob.accept(try await bob.shareMetadata(for: try #require(again.url)))
        _ = try await shared.record(for: rootID)
        try await db.deleteRecord(withID: share.recordID)
        await expectFogError(.zoneNotFound) { try await shared.record(for: rootID) }
        #expect(try await shared.allRecordZones().isEmpty)
    }

    @Test func aZoneWideShareSharesEveryRecordOfTheZone() async throws {
        let share = Share(recordZoneID: Self.notes)
        share.addParticipant(try await alice.shareParticipant(forEmailAddress: "bob@example.com"))
        let saved = try #require(try await db.save(share) as? Share)
        _ = try await bob.accept(try await bob.shareMetadata(for: try #require(saved.url)))
        let note = try await bob.sharedCloudDatabase.record(for: Record.ID(recordName: "n1", zoneID: try await ownerZone(Self.notes)))
        #expect(note.recordType == "Note")
        #expect(try await bob.sharedCloudDatabase.allRecordZones().map(\.zoneID) == [try await ownerZone(Self.notes)])
        await expectFogError(.zoneNotFound) { try await bob.sharedCloudDatabase.record(for: try await inShared(root)) }
    }

    /// The names of the records a query in bob's shared database returns, every batch of
    /// `resultsLimit` followed.
    func sharedQuery(_ recordType: String, _ format: String = "TRUEPREDICATE", resultsLimit: Int = 0) async throws -> [String] {
        let shared = try bob.sharedCloudDatabase
        var names: [String] = []
        var (results, cursor) = try await shared.records(
            matching: Query(recordType: recordType, predicate: QueryPredicate(format: format)),
            inZoneWith: try await ownerZone(Self.albums),
            resultsLimit: resultsLimit)
        while true {
            for (id, result) in results {
                #expect(id.zoneID.ownerName == (try await alice.userRecordID()).recordName)
                names.append(try result.get().recordID.recordName)
            }
            guard let next = cursor else { break }
            (results, cursor) = try await shared.records(continuingMatchFrom: next, resultsLimit: resultsLimit)
        }
        return names.sorted()
    }

    @Test func queriesSeeExactlyTheSharedRecords() async throws {
        // More records inside and outside the shared hierarchy.
        var saves: [Record] = []
        for i in 0..<6 {
            let inside = Record(recordType: "Photo", recordID: Record.ID(recordName: "in\(i)", zoneID: Self.albums))
            inside.setParent(i.isMultiple(of: 2) ? root : grandchild)
            let outside = Record(recordType: "Photo", recordID: Record.ID(recordName: "out\(i)", zoneID: Self.albums))
            if i > 0 { outside.setParent(Record.ID(recordName: "out\(i - 1)", zoneID: Self.albums)) }
            inside["n"] = i
            outside["n"] = i
            saves += [inside, outside]
        }
        _ = try await db.modifyRecords(saving: saves, deleting: [])
        try await shareWithBob()
        #expect(try await sharedQuery("Album") == ["holiday"])
        let photos = ["day1", "day1-beach"] + (0..<6).map { "in\($0)" }
        #expect(try await sharedQuery("Photo") == photos.sorted())
        #expect(try await sharedQuery("Photo", resultsLimit: 3) == photos.sorted(), "across cursors")
        #expect(try await sharedQuery("Photo", "n >= 3", resultsLimit: 1) == ["in3", "in4", "in5"])
        // The owner's own queries still see everything.
        let all = try await db.records(
            matching: Query(recordType: "Photo", predicate: QueryPredicate(value: true)), inZoneWith: Self.albums)
        #expect(all.matchResults.count == 2 + 12)
        // Someone who did not accept, and bob once removed, find no zone.
        await expectFogError(.zoneNotFound) {
            try await carol.sharedCloudDatabase.records(
                matching: Query(recordType: "Photo", predicate: QueryPredicate(value: true)), inZoneWith: try await ownerZone(Self.albums))
        }
        // A cursor bob took before he is removed returns no records, and no cursor.
        let (_, taken) = try await bob.sharedCloudDatabase.records(
            matching: Query(recordType: "Photo", predicate: QueryPredicate(value: true)), inZoneWith: try await ownerZone(Self.albums),
            resultsLimit: 2)
        let cursor = try #require(taken)
        let share = try #require(try await db.record(for: root.recordID).share)
        let ownerView = try #require(try await db.record(for: share.recordID) as? Share)
        ownerView.removeParticipant(try #require(ownerView.participants.last))
        _ = try await db.save(ownerView)
        await expectFogError(.zoneNotFound) { try await sharedQuery("Photo") }
        let after = try await bob.sharedCloudDatabase.records(continuingMatchFrom: cursor)
        #expect(after.matchResults.isEmpty && after.queryCursor == nil)
    }

    @Test func aReadWriteParticipantChangesAndAddsSharedRecordsButNotTheRoot() async throws {
        let shareRecord = try await shareWithBob()
        let shared = try bob.sharedCloudDatabase
        let bobID = try await bob.userRecordID()
        let token = try await db.recordZoneChanges(inZoneWith: Self.albums, since: nil).changeToken

        // Change a shared record.
        let day1 = try await shared.record(for: try await inShared(child))
        day1["caption"] = "the first day"
        let saved = try await shared.save(day1)
        #expect(saved.recordID.zoneID.ownerName == (try await alice.userRecordID()).recordName)
        #expect(try await db.record(for: child.recordID)["caption"] as? String == "the first day")
        // Add a child under the shared hierarchy: the owner sees it, created by bob.
        let added = Record(recordType: "Photo", recordID: Record.ID(recordName: "day2", zoneID: try await ownerZone(Self.albums)))
        added.setParent(try await inShared(root))
        _ = try await shared.save(added)
        let ownerCopy = try await db.record(for: Record.ID(recordName: "day2", zoneID: Self.albums))
        #expect(ownerCopy.creatorUserRecordID == bobID)
        #expect(try await shared.record(for: added.recordID).recordType == "Photo")
        // Delete a shared record that is not the root.
        try await shared.deleteRecord(withID: try await inShared(grandchild))
        await expectNotStored(grandchild.recordID, in: db)
        // The owner's feed reports the participant's changes.
        let changes = try await db.recordZoneChanges(inZoneWith: Self.albums, since: token)
        #expect(Set(changes.modificationResultsByID.keys.map(\.recordName)) == ["day1", "day2"])
        #expect(changes.deletions.map(\.recordID.recordName) == ["day1-beach"])

        // Only the owner deletes the root, and the share record is not the participant's.
        let root = await expectFogError(.permissionFailure) { try await shared.deleteRecord(withID: try await inShared(self.root)) }
        #expect(root?.message.contains("only its owner") == true, "\(root?.message ?? "")")
        #expect(try await db.record(for: self.root.recordID).share?.recordID == shareRecord.recordID)
        // (Deleting the share would leave it: `aParticipantDeletingTheShareLeavesIt`.) Saving it
        // is the owner's.
        let seen = try #require(
            try await shared.record(for: Record.ID(recordName: shareRecord.recordID.recordName, zoneID: try await ownerZone(Self.albums)))
                as? Share)
        seen.publicPermission = .readWrite
        await expectFogError(.unknownItem) { try await shared.save(seen) }
        #expect((try await db.record(for: shareRecord.recordID) as? Share)?.publicPermission == Share.ParticipantPermission.none)
        // Nothing outside the hierarchy: no new record without a shared parent, no change to
        // an unshared record, no moving a shared record out.
        let orphan = Record(recordType: "Photo", recordID: Record.ID(recordName: "orphan", zoneID: try await ownerZone(Self.albums)))
        await expectFogError(.permissionFailure) { try await shared.save(orphan) }
        let outside = Record(recordType: "Photo", recordID: Record.ID(recordName: "outside", zoneID: try await ownerZone(Self.albums)))
        outside.setParent(try await inShared(unshared))
        await expectFogError(.permissionFailure) { try await shared.save(outside) }
        let overwrite = Record(recordType: "Album", recordID: try await inShared(unshared))
        overwrite["title"] = "hijacked"
        await expectFogError(.unknownItem) {
            try await shared.modifyRecords(saving: [overwrite], deleting: [], savePolicy: .allKeys, atomically: false)
                .saveResults[overwrite.recordID]!.get()
        }
        #expect(try await db.record(for: unshared.recordID)["title"] == nil, "not hijacked")
        // Saving a new record under an unshared record's name is refused without handing out
        // the stored record (as a conflict's serverRecord would).
        let clash = Record(recordType: "Album", recordID: try await inShared(unshared))
        let refused = await expectFogError(.unknownItem) { try await shared.save(clash) }
        #expect(refused?.serverRecord == nil)
        await expectFogError(.unknownItem) { try await shared.deleteRecord(withID: try await inShared(unshared)) }
        let moving = try await shared.record(for: try await inShared(child))
        moving.setParent(try await inShared(unshared))
        await expectFogError(.unknownItem) { try await shared.save(moving) }
        #expect(try await db.record(for: child.recordID).parent?.recordID.recordName == "holiday")
        await expectNotStored(orphan.recordID, in: db)
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func aParticipantsDeleteCannotCascadeOutsideTheShare() async throws {
        // An unshared record that goes when day1 goes (deleteSelf).
        let dependent = Record(recordType: "Note", recordID: Record.ID(recordName: "dependent", zoneID: Self.albums))
        dependent["about"] = Record.Reference(recordID: child.recordID, action: .deleteSelf)
        _ = try await db.save(dependent)
        try await shareWithBob()
        let error = await expectFogError(.permissionFailure) {
            try await bob.sharedCloudDatabase.deleteRecord(withID: try await inShared(child))
        }
        #expect(error?.message.contains("deleteSelf") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("dependent") == false, "the unshared record is not named: \(error?.message ?? "")")
        _ = try await db.record(for: child.recordID)
        _ = try await db.record(for: dependent.recordID)
    }

    @Test func aReadOnlyParticipantOnlyReads() async throws {
        let share = Share(rootRecord: root)
        share.addParticipant(try await alice.shareParticipant(forEmailAddress: "carol@example.com"))  // readOnly
        _ = try await db.modifyRecords(saving: [try await db.record(for: root.recordID), share], deleting: [])
        let saved = try #require(try await db.record(for: share.recordID) as? Share)
        _ = try await carol.accept(try await carol.shareMetadata(for: try #require(saved.url)))
        let shared = try carol.sharedCloudDatabase
        let day1 = try await shared.record(for: try await inShared(child))
        day1["caption"] = "mine"
        let error = await expectFogError(.permissionFailure) { try await shared.save(day1) }
        #expect(error?.message.contains("read-only") == true, "\(error?.message ?? "")")
        await expectFogError(.permissionFailure) { try await shared.deleteRecord(withID: try await inShared(grandchild)) }
        let added = Record(recordType: "Photo", recordID: Record.ID(recordName: "day2", zoneID: try await ownerZone(Self.albums)))
        added.setParent(try await inShared(root))
        await expectFogError(.permissionFailure) { try await shared.save(added) }
        #expect(try await db.record(for: child.recordID)["caption"] == nil)
        _ = try await db.record(for: grandchild.recordID)
    }

    @Test func theSharedDatabaseFeedReportsTheZoneUntilItIsRevoked() async throws {
        let shared = try bob.sharedCloudDatabase
        #expect(try await shared.databaseChanges(since: nil).modifications.isEmpty)
        let share = try await shareWithBob()
        let albums = try await ownerZone(Self.albums)
        let first = try await shared.databaseChanges(since: nil)
        #expect(first.modifications.map(\.zoneID) == [albums])
        #expect(first.deletions.isEmpty && !first.moreComing)
        #expect(try await shared.databaseChanges(since: first.changeToken).modifications.isEmpty, "nothing since")
        // The owner changes a shared record: the zone changed.
        let day1 = try await db.record(for: child.recordID)
        day1["caption"] = "x"
        _ = try await db.save(day1)
        let second = try await shared.databaseChanges(since: first.changeToken)
        #expect(second.modifications.map(\.zoneID) == [albums])
        // The owner's other zones never appear; another user's token is refused.
        let note = try await db.record(for: Record.ID(recordName: "n1", zoneID: Self.notes))
        note["text"] = "y"
        _ = try await db.save(note)
        #expect(try await shared.databaseChanges(since: second.changeToken).modifications.isEmpty)
        let carols = try await carol.sharedCloudDatabase.databaseChanges(since: nil).changeToken
        await expectFogError(.invalidArguments) { try await shared.databaseChanges(since: carols) }
        await expectFogError(.invalidArguments) { try await db.databaseChanges(since: second.changeToken) }
        // Removed from the share: the zone is deleted for bob (and absent from a new feed).
        let ownerView = try #require(try await db.record(for: share.recordID) as? Share)
        ownerView.removeParticipant(try #require(ownerView.participants.last))
        _ = try await db.save(ownerView)
        let revoked = try await shared.databaseChanges(since: second.changeToken)
        #expect(revoked.modifications.isEmpty)
        #expect(revoked.deletions.map(\.zoneID) == [albums])
        #expect(try await shared.databaseChanges(since: nil).modifications.isEmpty)
        #expect(try await shared.databaseChanges(since: revoked.changeToken).deletions.isEmpty)
    }

    @Test func theZoneFeedSeesExactlyTheSharedRecords() async throws {
        let share = try await shareWithBob()
        let shared = try bob.sharedCloudDatabase
        let albums = try await ownerZone(Self.albums)
        let first = try await shared.recordZoneChanges(inZoneWith: albums, since: nil)
        let names = Set(first.modificationResultsByID.keys.map(\.recordName))
        #expect(names == ["holiday", "day1", "day1-beach", share.recordID.recordName], "not the unshared record")
        #expect(first.modificationResultsByID.keys.allSatisfy { $0.zoneID == albums })
        let sharedShare = try #require(
            try first.modificationResultsByID[Record.ID(recordName: share.recordID.recordName, zoneID: albums)]?.get().record as? Share)
        #expect(sharedShare.currentUserParticipant?.userIdentity.userRecordID == (try await bob.userRecordID()))

        // The owner changes a shared and an unshared record, then deletes one of each.
        let day1 = try await db.record(for: child.recordID)
        day1["caption"] = "x"
        let hidden = try await db.record(for: unshared.recordID)
        hidden["title"] = "still private"
        _ = try await db.modifyRecords(saving: [day1, hidden], deleting: [])
        let second = try await shared.recordZoneChanges(inZoneWith: albums, since: first.changeToken)
        #expect(Set(second.modificationResultsByID.keys.map(\.recordName)) == ["day1"])
        _ = try await db.modifyRecords(saving: [], deleting: [grandchild.recordID, unshared.recordID])
        let third = try await shared.recordZoneChanges(inZoneWith: albums, since: second.changeToken)
        #expect(third.modificationResultsByID.isEmpty)
        #expect(third.deletions.map(\.recordID.recordName) == ["day1-beach"], "the unshared deletion is not named")
        // The owner's own feed has both.
        let owners = try await db.recordZoneChanges(inZoneWith: Self.albums, since: nil)
        #expect(Set(owners.deletions.map(\.recordID.recordName)) == ["day1-beach", "private"])
        // A record deleted with its parent in one request is reported through the parent.
        let a = Record(recordType: "Photo", recordID: Record.ID(recordName: "a", zoneID: Self.albums))
        a.setParent(root)
        let b = Record(recordType: "Photo", recordID: Record.ID(recordName: "b", zoneID: Self.albums))
        b.setParent(a)
        _ = try await db.modifyRecords(saving: [a, b], deleting: [])
        let fourth = try await shared.recordZoneChanges(inZoneWith: albums, since: third.changeToken)
        _ = try await db.modifyRecords(saving: [], deleting: [a.recordID, b.recordID])
        let fifth = try await shared.recordZoneChanges(inZoneWith: albums, since: fourth.changeToken)
        #expect(Set(fifth.deletions.map(\.recordID.recordName)) == ["a", "b"])
        #expect(try store.admin.checkIntegrity().isSound)

        // Revoked: the feed finds no zone.
        let ownerView = try #require(try await db.record(for: share.recordID) as? Share)
        ownerView.removeParticipant(try #require(ownerView.participants.last))
        _ = try await db.save(ownerView)
        await expectFogError(.zoneNotFound) { try await shared.recordZoneChanges(inZoneWith: albums, since: fifth.changeToken) }
    }

    @Test func aZoneWideShareFeedsEveryRecordAndDeletion() async throws {
        let share = Share(recordZoneID: Self.notes)
        share.addParticipant(try await alice.shareParticipant(forEmailAddress: "bob@example.com"))
        let saved = try #require(try await db.save(share) as? Share)
        _ = try await bob.accept(try await bob.shareMetadata(for: try #require(saved.url)))
        let notes = try await ownerZone(Self.notes)
        let first = try await bob.sharedCloudDatabase.recordZoneChanges(inZoneWith: notes, since: nil)
        #expect(Set(first.modificationResultsByID.keys.map(\.recordName)) == ["n1", Share.zoneWideShareRecordName])
        try await db.deleteRecord(withID: Record.ID(recordName: "n1", zoneID: Self.notes))
        let second = try await bob.sharedCloudDatabase.recordZoneChanges(inZoneWith: notes, since: first.changeToken)
        #expect(second.deletions.map(\.recordID.recordName) == ["n1"])
    }

    @Test func aParticipantDeletingTheShareLeavesIt() async throws {
        let share = try await shareWithBob()
        let shared = try bob.sharedCloudDatabase
        let token = try await shared.databaseChanges(since: nil).changeToken
        let inSharedDatabase = Record.ID(recordName: share.recordID.recordName, zoneID: try await ownerZone(Self.albums))
        try await shared.deleteRecord(withID: inSharedDatabase)
        // The share stays, without bob; bob's shared database no longer has the zone.
        let ownerView = try #require(try await db.record(for: share.recordID) as? Share)
        #expect(ownerView.participants.count == 1)
        #expect(try await shared.allRecordZones().isEmpty)
        await expectFogError(.zoneNotFound) { try await shared.record(for: try await inShared(root)) }
        #expect(try await shared.databaseChanges(since: token).deletions.map(\.zoneID) == [try await ownerZone(Self.albums)])
        #expect(try await db.record(for: root.recordID).share?.recordID == share.recordID)
        // Leaving again, or someone else's share, finds no zone.
        await expectFogError(.zoneNotFound) { try await shared.deleteRecord(withID: inSharedDatabase) }
        await expectFogError(.zoneNotFound) { try await carol.sharedCloudDatabase.deleteRecord(withID: inSharedDatabase) }
        #expect(try store.admin.checkIntegrity().isSound)
    }
}
