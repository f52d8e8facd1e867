import FogKit
import FogKitTesting
import Foundation
import Testing

/// `fog watch`, run as the built tool, and the photo app's subscriptions in `fog demo`.
@Suite struct WatchCommandTests {
    @Test func watchPrintsAUsersNotificationsAndResumesAfterThem() async throws {
        let work = try TemporaryDirectory("watch-cli")
        let store = work.appending("store").path
        let directory = URL(fileURLWithPath: store)
        let bob = try Container(identifier: "iCloud.test.watch", directory: directory, user: "bob", configuration: .init(durability: .none))
        let alice = try Container(
            identifier: "iCloud.test.watch", directory: directory, user: "alice", configuration: .init(durability: .none))
        let posts = QuerySubscription(
            recordType: "Post", predicate: QueryPredicate(value: true), subscriptionID: "allPosts", options: .firesOnRecordCreation)
        posts.notificationInfo = Subscription.NotificationInfo(desiredKeys: ["caption"])
        try await alice.publicCloudDatabase.save(posts)
        for name in ["p1", "p2"] {
            let post = Record(recordType: "Post", recordID: Record.ID(recordName: name))
            post["caption"] = "caption \(name)"
            try await bob.publicCloudDatabase.save(post)
        }
        alice.close()
        bob.close()

        let first = try SchemaCommandTests.fogSucceeds(["watch", "--store", store, "--user", "alice", "--count", "1"])
        #expect(first.contains("public  allPosts  recordCreated  p1  caption=\"caption p1\""), "\(first)")
        #expect(!first.contains("p2"))
        // The listener acknowledged p1: the next run starts with p2, and stops when time is up.
        let second = try SchemaCommandTests.fogSucceeds(["watch", "--store", store, "--user", "alice", "--for", "1"])
        #expect(second.split(separator: "\n").count == 1 && second.contains("p2"), "\(second)")
        // Another listener starts from the oldest.
        let other = try SchemaCommandTests.fogSucceeds(
            ["watch", "--store", store, "--user", "alice", "--listener", "other", "--for", "1", "--no-acknowledge"])
        #expect(other.split(separator: "\n").count == 2, "\(other)")
        #expect(try SchemaCommandTests.fogSucceeds(["watch", "--store", store, "--user", "bob", "--for", "0.5"]).isEmpty)
    }

    @Test func theDemoShowsThePhotoAppsNotifications() throws {
        let work = try TemporaryDirectory("watch-demo")
        let out = try SchemaCommandTests.fogSucceeds(["demo", "--store", work.appending("store").path])
        let lines = out.split(separator: "\n").map(String.init)
        let index = try #require(lines.firstIndex { $0.hasPrefix("Alice's listener receives") })
        #expect(lines[index] == "Alice's listener receives 3 notifications:")
        #expect(lines[index + 1].contains("allPosts  recordCreated  post-") && lines[index + 1].contains("-sunset"), "\(lines[index + 1])")
        #expect(lines[index + 2].contains("recordCreated  comment-") && lines[index + 2].contains("text=\"Lovely\""), "\(lines[index + 2])")
        #expect(lines[index + 3].contains("text=\"Great light\""), "\(lines[index + 3])")
    }
}
