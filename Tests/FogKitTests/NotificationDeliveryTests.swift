import FogKit
import FogKitTesting
import Foundation
import Testing

/// Delivery of notifications to named listeners: in commit order, resumed after the last
/// acknowledged one across a reopen of the container, nothing lost and nothing twice; expiry;
/// read permissions; live wake-up; the photo app's flow (seed 003).
@Suite struct NotificationDeliveryTests {
    let store: TestStore
    var alice: Container { store.container }
    var db: Database { store.privateDatabase }

    init() async throws {
        store = try TestStore()
        _ = try await store.admin.addUser("bob", emailAddress: "bob@example.com")
    }

    func post(_ name: String, zone: RecordZone.ID = .default) -> Record {
        let record = Record(recordType: "Post", recordID: Record.ID(recordName: name, zoneID: zone))
        record["caption"] = name
        return record
    }

    @Test func aListenerResumesAfterItsLastAcknowledgementAcrossAReopen() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = Container.Configuration(durability: .none)
        var container = try Container(identifier: "iCloud.test", directory: directory, user: "alice", configuration: configuration)
        var database = container.privateCloudDatabase
        try await database.save(QuerySubscription(recordType: "Post", predicate: QueryPredicate(value: true), subscriptionID: "posts"))
        for i in 1...3 { try await database.save(post("p\(i)")) }
        let first = try await receivedNotifications(container, listener: "feed")
        #expect(first.compactMap { ($0 as? QueryNotification)?.recordID?.recordName } == ["p1", "p2", "p3"])
        // Acknowledging the second acknowledges the first too.
        try await container.acknowledgeNotifications(through: try #require(first[1].notificationID), listener: "feed")
        container.close()

        // More posts arrive while the listener is away (another run of the program).
        container = try Container(identifier: "iCloud.test", directory: directory, user: "alice", configuration: configuration)
        database = container.privateCloudDatabase
        for i in 4...5 { try await database.save(post("p\(i)")) }
        container.close()

        container = try Container(identifier: "iCloud.test", directory: directory, user: "alice", configuration: configuration)
        defer { container.close() }
        let resumed = try await receivedNotifications(container, listener: "feed")
        #expect(resumed.compactMap { ($0 as? QueryNotification)?.recordID?.recordName } == ["p3", "p4", "p5"])
        #expect(resumed.map { $0.notificationID! } == resumed.map { $0.notificationID! }.sorted())
        try await container.acknowledgeNotifications(through: try #require(resumed.last?.notificationID), listener: "feed")
        #expect(try await receivedNotifications(container, listener: "feed").isEmpty)
        // Another listener of the same user has its own position.
        #expect(try await receivedNotifications(container, listener: "other").count == 5)
        // An older acknowledgement does not move a listener back.
        try await container.acknowledgeNotifications(through: try #require(first[0].notificationID), listener: "feed")
        #expect(try await receivedNotifications(container, listener: "feed").isEmpty)
    }

    @Test func aWaitingListenerIsWokenByACommit() async throws {
        try await db.save(QuerySubscription(recordType: "Post", predicate: QueryPredicate(value: true), subscriptionID: "posts"))
        let sequence = try alice.notifications(listener: "live")
        let waiting = Task { () throws -> CloudNotification? in
            for try await notification in sequence { return notification }
            return nil
        }
        try await Task.sleep(for: .milliseconds(100))
        try await db.save(post("p1"))
        // Woken by the commit (a listener of another process would see it at its next poll).
        let received = try await waiting.value
        #expect((received as? QueryNotification)?.recordID?.recordName == "p1")
    }

    @Test func anExpiredPositionIsAClearError() async throws {
        var configuration = alice.configuration
        configuration.notificationRetention = 2
        let container = try store.admin.container(user: "alice", configuration: configuration)
        defer { container.close() }
        let database = container.privateCloudDatabase
        try await database.save(QuerySubscription(recordType: "Post", predicate: QueryPredicate(value: true), subscriptionID: "posts"))
        try await database.save(post("p1"))
        // The first notification of a store is at position 1.
        try await container.acknowledgeNotifications(through: CloudNotification.ID(position: 1), listener: "slow")
        try await database.save(post("p2"))
        try await Task.sleep(for: .milliseconds(2_500))
        let error = await expectFogError(.changeTokenExpired) { try await receivedNotifications(container, listener: "slow") }
        #expect(error?.message.contains("slow") == true)
        // Reset, the listener goes on with what comes next (read through a container whose
        // retention is the default, so a slow machine cannot expire p3 before it is read).
        try await container.resetNotificationListener("slow")
        try await db.save(post("p3"))
        let after = try await receivedNotifications(alice, listener: "slow")
        #expect(after.compactMap { ($0 as? QueryNotification)?.recordID?.recordName } == ["p3"])
    }

    @Test func aPublicSubscriptionSeesOnlyRecordsItsSubscriberMayRead() async throws {
        let pub = store.publicDatabase
        let own = Record(recordType: "Own", recordID: Record.ID(recordName: "own-1"))
        own["v"] = 1
        try await pub.save(own)
        try await store.admin.importSchema(
            try Schema(
                parsing: """
                    DEFINE SCHEMA
                        RECORD TYPE Own (v INT64 QUERYABLE, GRANT CREATE TO "_icloud", GRANT READ, WRITE TO "_creator");
                    """))
        let bob = try store.container(user: "bob")
        try await bob.publicCloudDatabase.save(
            QuerySubscription(recordType: "Own", predicate: QueryPredicate(value: true), subscriptionID: "own"))
        try await pub.save(QuerySubscription(recordType: "Own", predicate: QueryPredicate(value: true), subscriptionID: "own"))
        let second = Record(recordType: "Own", recordID: Record.ID(recordName: "own-2"))
        second["v"] = 2
        try await pub.save(second)
        let mine = Record(recordType: "Own", recordID: Record.ID(recordName: "bob-1"))
        mine["v"] = 3
        try await bob.publicCloudDatabase.save(mine)
        // Each user hears of their own records only: `_creator` alone reads.
        #expect(try await receivedNotifications(alice).compactMap { ($0 as? QueryNotification)?.recordID?.recordName } == ["own-2"])
        #expect(try await receivedNotifications(bob).compactMap { ($0 as? QueryNotification)?.recordID?.recordName } == ["bob-1"])
        #expect(try await receivedNotifications(bob).allSatisfy { $0.databaseScope == .public })
    }

    @Test func aRemovedParticipantsSubscriptionsStopFiring() async throws {
        let albums = RecordZone.ID(zoneName: "Albums")
        try await db.save(RecordZone(zoneID: albums))
        let root = Record(recordType: "Album", recordID: Record.ID(recordName: "holiday", zoneID: albums))
        let hidden = Record(recordType: "Album", recordID: Record.ID(recordName: "hidden", zoneID: albums))
        _ = try await db.modifyRecords(saving: [root, hidden], deleting: [])
        let share = Share(rootRecord: try await db.record(for: root.recordID))
        share.addParticipant(try await alice.shareParticipant(forEmailAddress: "bob@example.com"))
        let result = try await db.modifyRecords(saving: [try await db.record(for: root.recordID), share], deleting: [])
        let saved = try #require(try result.saveResults[share.recordID]?.get() as? Share)
        let bob = try store.container(user: "bob")
        _ = try await bob.accept(try await bob.shareMetadata(for: try #require(saved.url)))
        let ownerZone = RecordZone.ID(zoneName: "Albums", ownerName: try await alice.userRecordID().recordName)
        try await bob.sharedCloudDatabase.save(RecordZoneSubscription(zoneID: ownerZone, subscriptionID: "albums"))
        try await bob.sharedCloudDatabase.save(DatabaseSubscription(subscriptionID: "shared"))

        // A record the share does not cover notifies nobody; a covered one notifies both.
        let change = try await db.record(for: hidden.recordID)
        change["title"] = "secret"
        try await db.save(change)
        #expect(try await receivedNotifications(bob).isEmpty)
        let covered = try await db.record(for: root.recordID)
        covered["title"] = "Holiday"
        try await db.save(covered)
        let received = try await receivedNotifications(bob)
        #expect(received.count == 2)
        #expect(received.allSatisfy { $0.databaseScope == .shared })
        #expect(received.compactMap { ($0 as? RecordZoneNotification)?.recordZoneID } == [ownerZone])
        try await bob.acknowledgeNotifications(through: try #require(received.last?.notificationID), listener: "test")

        // Alice removes bob: his subscriptions stop firing.
        let ownerView = try #require(try await db.record(for: share.recordID) as? Share)
        ownerView.removeParticipant(try #require(ownerView.participants.last))
        try await db.save(ownerView)
        let again = try await db.record(for: root.recordID)
        again["title"] = "Holiday 2"
        try await db.save(again)
        #expect(try await receivedNotifications(bob).isEmpty)
    }

    /// Seed 003 (the photo app): alice subscribes to new posts and to the comments of one post
    /// she follows; bob posts and comments; alice's listener receives exactly those.
    @Test func thePhotoAppFlow() async throws {
        let pub = store.publicDatabase
        let bob = try store.container(user: "bob")
        let followed = post("followed")
        try await bob.publicCloudDatabase.save(followed)
        let other = post("other")
        try await bob.publicCloudDatabase.save(other)

        try await pub.save(QuerySubscription(recordType: "Post", predicate: QueryPredicate(value: true), subscriptionID: "allPosts"))
        let comments = QuerySubscription(
            recordType: "Comment",
            predicate: try QueryPredicate(format: "post == %@", Record.Reference(recordID: followed.recordID, action: .none)),
            subscriptionID: followed.recordID.recordName, options: .firesOnRecordCreation)
        comments.notificationInfo = Subscription.NotificationInfo(
            alertBody: "New comment", desiredKeys: ["text"], shouldSendContentAvailable: true)
        try await pub.save(comments)

        let newPost = post("sunset")
        try await bob.publicCloudDatabase.save(newPost)
        for (name, target) in [("c1", followed), ("c2", other), ("c3", followed)] {
            let comment = Record(recordType: "Comment", recordID: Record.ID(recordName: name))
            comment["text"] = "comment \(name)"
            comment["post"] = Record.Reference(recordID: target.recordID, action: .deleteSelf)
            try await bob.publicCloudDatabase.save(comment)
        }
        let received = try await receivedNotifications(alice, listener: "app").compactMap { $0 as? QueryNotification }
        #expect(received.map { $0.recordID!.recordName } == ["sunset", "c1", "c3"])
        #expect(received.map(\.subscriptionID) == ["allPosts", "followed", "followed"])
        #expect(received[1].recordFields == ["text": .string("comment c1")])
        #expect(received.allSatisfy { $0.queryNotificationReason == .recordCreated && $0.databaseScope == .public })
        #expect(try await receivedNotifications(bob, listener: "app").isEmpty)
    }
}
