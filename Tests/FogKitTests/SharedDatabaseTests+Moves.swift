import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// Records that leave or enter a shared hierarchy when a `parent` changes (`Docs/Sharing.md`,
/// "The zone change feed"): the participant's zone feed reports them deleted or changed.
extension SharedDatabaseTests {
    func moved(_ record: Record, under parent: Record?) async throws {
        let current = try await db.record(for: record.recordID)
        current.setParent(parent)
        _ = try await db.save(current)
    }

    @Test func aRecordMovedOutOfTheHierarchyIsReportedDeletedWithItsDescendants() async throws {
        try await shareWithBob()
        let shared = try bob.sharedCloudDatabase
        let albums = try await ownerZone(Self.albums)
        let first = try await shared.recordZoneChanges(inZoneWith: albums, since: nil)
        #expect(first.modificationResultsByID.keys.contains(try await inShared(child)))

        // The owner moves day1 (and with it day1-beach) out of the shared album.
        try await moved(child, under: nil)
        let second = try await shared.recordZoneChanges(inZoneWith: albums, since: first.changeToken)
        #expect(second.modificationResultsByID.isEmpty)
        #expect(Set(second.deletions.map(\.recordID.recordName)) == ["day1", "day1-beach"])
        #expect(second.deletions.allSatisfy { $0.recordID.zoneID == albums })
        #expect(Set(second.deletions.map(\.recordType)) == ["Photo"])
        await expectFogError(.unknownItem) { try await shared.record(for: try await inShared(child)) }
        await expectFogError(.unknownItem) { try await shared.record(for: try await inShared(grandchild)) }
        // A participant who never saw them is told nothing; a later fetch nothing more.
        let fresh = try await shared.recordZoneChanges(inZoneWith: albums, since: nil)
        #expect(Set(fresh.modificationResultsByID.keys.map(\.recordName)).isDisjoint(with: ["day1", "day1-beach"]))
        #expect(fresh.deletions.isEmpty)
        let third = try await shared.recordZoneChanges(inZoneWith: albums, since: second.changeToken)
        #expect(third.deletions.isEmpty && third.modificationResultsByID.isEmpty)

        // The owner changes the moved record again: the old token still learns it left, the
        // newer one learns nothing.
        let day1 = try await db.record(for: child.recordID)
        day1["caption"] = "now private"
        _ = try await db.save(day1)
        let again = try await shared.recordZoneChanges(inZoneWith: albums, since: first.changeToken)
        #expect(Set(again.deletions.map(\.recordID.recordName)) == ["day1", "day1-beach"])
        let later = try await shared.recordZoneChanges(inZoneWith: albums, since: third.changeToken)
        #expect(later.deletions.isEmpty && later.modificationResultsByID.isEmpty)

        // Deleting a record that left: its deletion reaches those who knew it.
        _ = try await db.modifyRecords(saving: [], deleting: [grandchild.recordID])
        let deleted = try await shared.recordZoneChanges(inZoneWith: albums, since: first.changeToken)
        #expect(Set(deleted.deletions.map(\.recordID.recordName)) == ["day1", "day1-beach"])
        // The owner's feed is the owner's: day1 changed, day1-beach deleted.
        let owners = try await db.recordZoneChanges(inZoneWith: Self.albums, since: nil)
        #expect(owners.modificationResultsByID.keys.contains(child.recordID))
        #expect(owners.deletions.map(\.recordID.recordName) == ["day1-beach"])
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func aRecordMovedIntoTheHierarchyAppearsChangedWithItsDescendants() async throws {
        let inner = Record(recordType: "Photo", recordID: Record.ID(recordName: "private-1", zoneID: Self.albums))
        inner.setParent(unshared)
        _ = try await db.save(inner)
        try await shareWithBob()
        let shared = try bob.sharedCloudDatabase
        let albums = try await ownerZone(Self.albums)
        let first = try await shared.recordZoneChanges(inZoneWith: albums, since: nil)
        #expect(!first.modificationResultsByID.keys.contains(try await inShared(unshared)))

        // A move between unshared records tells the participant nothing.
        try await moved(inner, under: nil)
        let quiet = try await shared.recordZoneChanges(inZoneWith: albums, since: first.changeToken)
        #expect(quiet.deletions.isEmpty && quiet.modificationResultsByID.isEmpty)
        try await moved(inner, under: unshared)

        // The owner moves "private" (and private-1 below it) under the shared album.
        let before = try await shared.recordZoneChanges(inZoneWith: albums, since: nil)
        try await moved(unshared, under: root)
        let second = try await shared.recordZoneChanges(inZoneWith: albums, since: before.changeToken)
        #expect(Set(second.modificationResultsByID.keys.map(\.recordName)) == ["private", "private-1"])
        #expect(second.deletions.isEmpty)
        let fetched = try await shared.record(for: try await inShared(inner))
        #expect(fetched.parent?.recordID.recordName == "private")

        // And out again: both reported deleted.
        try await moved(unshared, under: nil)
        let third = try await shared.recordZoneChanges(inZoneWith: albums, since: second.changeToken)
        #expect(Set(third.deletions.map(\.recordID.recordName)) == ["private", "private-1"])
        #expect(try store.admin.checkIntegrity().isSound)
    }
}
