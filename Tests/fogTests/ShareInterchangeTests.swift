import FogKit
import FogKitTesting
import Foundation
import Testing

/// `fog export` and `fog import` carry the user directory and shares (`Docs/ImportExport.md`,
/// "Users and shares"): a round trip restores users' email addresses and names, and each
/// share's root, public permission, participants and their acceptance.
@Suite struct ShareInterchangeTests {
    static let identifier = "iCloud.test.share-interchange"
    static let albums = RecordZone.ID(zoneName: "Albums")
    static let notes = RecordZone.ID(zoneName: "Notes")

    static func name(_ given: String, _ family: String? = nil) -> PersonNameComponents {
        var name = PersonNameComponents()
        name.givenName = given
        name.familyName = family
        return name
    }

    /// Alice shares an album with bob (read-write, accepted) and carol (read-only, pending),
    /// and her Notes zone publicly (read-only), which dave joined.
    static func makeStore(at directory: URL) async throws {
        let admin = try Container.Administrator(identifier: identifier, directory: directory, configuration: .init(durability: .none))
        defer { admin.close() }
        try await admin.addUser("alice", emailAddress: "alice@example.com", nameComponents: name("Alice"))
        try await admin.addUser("bob", emailAddress: "bob@example.com", nameComponents: name("Bob", "Smith"))
        try await admin.addUser("carol", emailAddress: "carol@example.com")
        let alice = try admin.container(user: "alice")
        defer { alice.close() }
        let bob = try admin.container(user: "bob")
        defer { bob.close() }
        let dave = try admin.container(user: "dave")
        defer { dave.close() }
        let db = alice.privateCloudDatabase
        for zone in [albums, notes] { _ = try await db.save(RecordZone(zoneID: zone)) }
        let root = Record(recordType: "Album", recordID: Record.ID(recordName: "holiday", zoneID: albums))
        let child = Record(recordType: "Photo", recordID: Record.ID(recordName: "day1", zoneID: albums))
        child.setParent(root)
        _ = try await db.modifyRecords(
            saving: [root, child, Record(recordType: "Note", recordID: Record.ID(recordName: "n1", zoneID: notes))], deleting: [])
        let share = Share(rootRecord: root, shareID: Record.ID(recordName: "holiday-share", zoneID: albums))
        share[Share.SystemFieldKey.title] = "Summer"
        let bobParticipant = try await alice.shareParticipant(forEmailAddress: "bob@example.com")
        bobParticipant.permission = .readWrite
        share.addParticipant(bobParticipant)
        share.addParticipant(try await alice.shareParticipant(forEmailAddress: "carol@example.com"))
        let saved = try await db.modifyRecords(saving: [try await db.record(for: root.recordID), share], deleting: [])
        let url = try #require(try (saved.saveResults[share.recordID]?.get() as? Share)?.url)
        _ = try await bob.accept(try await bob.shareMetadata(for: url))
        let zoneShare = Share(recordZoneID: notes)
        zoneShare.publicPermission = .readOnly
        let zoneURL = try #require(try await db.save(zoneShare).asShare?.url)
        _ = try await dave.accept(try await dave.shareMetadata(for: zoneURL))
    }

    /// Expects the store at `directory` to hold what ``makeStore(at:)`` made.
    static func expectRestored(at directory: URL) async throws {
        let admin = try Container.Administrator(identifier: identifier, directory: directory, configuration: .init(durability: .none))
        defer { admin.close() }
        let users = try admin.users()
        #expect(Set(users.keys).isSuperset(of: ["alice", "bob", "carol", "dave"]))
        #expect(users["bob"]?.lookupInfo?.emailAddress == "bob@example.com")
        #expect(users["bob"]?.nameComponents == name("Bob", "Smith"))
        #expect(users["alice"]?.nameComponents?.givenName == "Alice")
        #expect(users["carol"]?.lookupInfo?.emailAddress == "carol@example.com")

        let alice = try admin.container(user: "alice")
        defer { alice.close() }
        let db = alice.privateCloudDatabase
        let share = try #require(try await db.record(for: Record.ID(recordName: "holiday-share", zoneID: albums)) as? Share)
        #expect(share[Share.SystemFieldKey.title] as? String == "Summer")
        #expect(share.publicPermission == .none)
        #expect(share.owner.userIdentity.userRecordID == users["alice"]?.userRecordID)
        let invited = share.participants.dropFirst().map {
            ($0.userIdentity.userRecordID, $0.role, $0.permission, $0.acceptanceStatus)
        }
        #expect(invited.count == 2)
        #expect(invited.contains { $0 == (users["bob"]?.userRecordID, .privateUser, .readWrite, .accepted) })
        #expect(invited.contains { $0 == (users["carol"]?.userRecordID, .privateUser, .readOnly, .pending) })
        let root = try await db.record(for: Record.ID(recordName: "holiday", zoneID: albums))
        #expect(root.share?.recordID == share.recordID, "root.share links the share again")
        let metadata = try await alice.shareMetadata(for: try #require(share.url))
        #expect(metadata.hierarchicalRootRecordID?.recordName == "holiday")

        let zoneShare = try #require(
            try await db.record(for: Record.ID(recordName: Share.zoneWideShareRecordName, zoneID: notes)) as? Share)
        #expect(zoneShare.publicPermission == .readOnly)
        let joined = try #require(zoneShare.participants.dropFirst().first)
        #expect(joined.userIdentity.userRecordID == users["dave"]?.userRecordID)
        #expect(joined.role == .publicUser && joined.acceptanceStatus == .accepted && joined.permission == .readOnly)

        // Bob reads the album through his shared database again.
        let bob = try admin.container(user: "bob")
        defer { bob.close() }
        let zones = try await bob.sharedCloudDatabase.allRecordZones()
        #expect(zones.map(\.zoneID.zoneName) == ["Albums"])
        let day1 = try await bob.sharedCloudDatabase.record(for: Record.ID(recordName: "day1", zoneID: try #require(zones.first).zoneID))
        #expect(day1.recordType == "Photo")
    }

    @Test func aRoundTripRestoresUsersAndShares() async throws {
        let work = try TemporaryDirectory("share-interchange")
        let source = work.appending("source"), target = work.appending("target"), file = work.appending("all.jsonl")
        try await Self.makeStore(at: source)
        let exported = try FogTool.run(["export", "--store", source.path])
        #expect(exported.status == 0, "\(exported.err)")
        try Data(exported.out.utf8).write(to: file)
        let lines = exported.out.split(separator: "\n")
        #expect(lines.prefix(3).allSatisfy { $0.contains("\"directoryEntry\"") }, "the users with entries come first")
        #expect(lines.filter { $0.contains("\"directoryEntry\"") }.count == 3, "dave has no entry")
        #expect(lines.filter { $0.contains("\"share\":{") }.count == 2)

        let imported = try FogTool.run(["import", file.path, "--store", target.path, "--container", Self.identifier])
        #expect(imported.status == 0, "\(imported.err)")
        try await Self.expectRestored(at: target)
        // An import run again changes nothing.
        let again = try FogTool.run(["import", file.path, "--store", target.path])
        #expect(again.status == 0, "\(again.err)")
        try await Self.expectRestored(at: target)
    }

    @Test func aBadShareLineStopsTheImportWithoutWritingTheShare() async throws {
        let work = try TemporaryDirectory("share-interchange-bad")
        let target = work.appending("target"), file = work.appending("bad.jsonl")
        let root = #"{"recordName":"holiday","recordType":"Album","fields":{},"zoneID":{"zoneName":"Albums"},"user":"alice"}"#
        let share =
            #"{"recordName":"s1","recordType":"cloudkit.share","fields":{},"zoneID":{"zoneName":"Albums"},"user":"alice","#
            + #""share":{"root":"holiday","publicPermission":"NONE","participants":[{"user":"alice","role":"KING","permission":"READ_WRITE","acceptanceStatus":"ACCEPTED"}]}}"#
        let bare = #"{"recordName":"s2","recordType":"cloudkit.share","fields":{},"zoneID":{"zoneName":"Albums"},"user":"alice"}"#
        for (line, reason) in [(share, "share.participants[0].role"), (bare, "share:")] {
            try Data((root + "\n" + line + "\n").utf8).write(to: file)
            let run = try FogTool.run(["import", file.path, "--store", target.path, "--container", Self.identifier])
            #expect(run.status != 0)
            #expect(run.err.contains("line 2: \(reason)"), "\(run.err)")
        }
        let admin = try Container.Administrator(identifier: Self.identifier, directory: target, configuration: .init(durability: .none))
        defer { admin.close() }
        let alice = try admin.container(user: "alice")
        defer { alice.close() }
        for name in ["s1", "s2"] {
            await #expect(throws: FogError.self) {
                try await alice.privateCloudDatabase.record(for: Record.ID(recordName: name, zoneID: Self.albums))
            }
        }
    }
}

extension Record {
    fileprivate var asShare: Share? { self as? Share }
}
