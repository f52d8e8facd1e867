import FogKit
import FogKitTesting
import Foundation
import Synchronization
import Testing

/// Every notification `container`'s user has for `listener` that arrives within `settle`
/// (notifications are stored at commit, so the ones already produced arrive at once).
/// Nothing is acknowledged.
func receivedNotifications(
    _ container: Container, listener: String = "test", settle: Duration = .milliseconds(300)
) async throws -> [CloudNotification] {
    let sequence = try container.notifications(listener: listener)
    let task = Task { () throws -> [CloudNotification] in
        var received: [CloudNotification] = []
        for try await notification in sequence { received.append(notification) }
        return received
    }
    try await Task.sleep(for: settle)
    task.cancel()
    return try await task.value
}

/// Subscriptions and notifications (reference §2.5, §6.8, §9): each kind fires as CloudKit
/// documents, in the same commit as the change, and only for records its subscriber may read.
@Suite struct SubscriptionTests {
    let store: TestStore
    var alice: Container { store.container }
    var db: Database { store.privateDatabase }
    static let notes = RecordZone.ID(zoneName: "Notes")
    static let other = RecordZone.ID(zoneName: "Other")

    init() async throws {
        store = try TestStore()
        for zone in [Self.notes, Self.other] { _ = try await store.privateDatabase.save(RecordZone(zoneID: zone)) }
    }

    func note(_ name: String, _ title: String, zone: RecordZone.ID = notes, type: String = "Note") -> Record {
        let record = Record(recordType: type, recordID: Record.ID(recordName: name, zoneID: zone))
        record["title"] = title
        record["rank"] = 1
        return record
    }

    @Test func aQuerySubscriptionFiresOnCreationUpdateAndDeletionWithTheDesiredKeys() async throws {
        let subscription = QuerySubscription(
            recordType: "Note", predicate: try QueryPredicate(format: "title BEGINSWITH %@", "a"), subscriptionID: "a-notes")
        var info = Subscription.NotificationInfo()
        info.desiredKeys = ["title", "rank"]
        subscription.notificationInfo = info
        try await db.save(subscription)

        try await db.save(note("n1", "apple"))
        try await db.save(note("n2", "banana"))
        let n1 = try await db.record(for: Record.ID(recordName: "n1", zoneID: Self.notes))
        n1["rank"] = 2
        try await db.save(n1)
        try await db.deleteRecord(withID: n1.recordID)

        let received = try await receivedNotifications(alice)
        let queries = received.compactMap { $0 as? QueryNotification }
        #expect(queries.count == 3 && received.count == 3)
        #expect(queries.map(\.queryNotificationReason) == [.recordCreated, .recordUpdated, .recordDeleted])
        #expect(queries.allSatisfy { $0.recordID == n1.recordID && $0.subscriptionID == "a-notes" && $0.databaseScope == .private })
        #expect(queries[0].recordFields == ["title": .string("apple"), "rank": .int64(1)])
        #expect(queries[1].recordFields?["rank"] == .int64(2))
        #expect(queries[2].recordFields == nil)
        #expect(queries[0].notificationType == .query)
        #expect(queries.map { $0.notificationID! } == queries.map { $0.notificationID! }.sorted())
        #expect(queries[0].subscriptionOwnerUserRecordID == (try await alice.userRecordID()))
    }

    @Test func theOptionsChooseWhichChangesFire() async throws {
        try await db.save(
            QuerySubscription(
                recordType: "Note", predicate: QueryPredicate(value: true), subscriptionID: "created", options: .firesOnRecordCreation))
        try await db.save(
            QuerySubscription(
                recordType: "Note", predicate: QueryPredicate(value: true), subscriptionID: "deleted", options: .firesOnRecordDeletion))
        let record = try await db.save(note("n1", "x"))
        record["title"] = "y"
        try await db.save(record)
        try await db.deleteRecord(withID: record.recordID)
        let received = try await receivedNotifications(alice).compactMap { $0 as? QueryNotification }
        #expect(received.map(\.subscriptionID) == ["created", "deleted"])
        #expect(received.map(\.queryNotificationReason) == [.recordCreated, .recordDeleted])
    }

    @Test func aFiresOnceSubscriptionIsRemovedInTheCommitThatFiresIt() async throws {
        try await db.save(
            QuerySubscription(
                recordType: "Note", predicate: try QueryPredicate(format: "title == %@", "x"), subscriptionID: "once",
                options: [.firesOnRecordCreation, .firesOnce]))
        // Two matches in one commit still fire once.
        _ = try await db.modifyRecords(saving: [note("n1", "x"), note("n2", "x")], deleting: [])
        #expect(try await db.allSubscriptions().isEmpty)
        await expectFogError(.unknownItem) { try await db.subscription(for: "once") }
        try await db.save(note("n3", "x"))
        let received = try await receivedNotifications(alice)
        #expect(received.count == 1)
        #expect((received.first as? QueryNotification)?.recordID?.recordName == "n1")
    }

    @Test func aZoneSubscriptionFiresOncePerCommitForItsZone() async throws {
        try await db.save(RecordZoneSubscription(zoneID: Self.notes, subscriptionID: "notes"))
        _ = try await db.modifyRecords(saving: [note("n1", "a"), note("n2", "b"), note("n3", "c")], deleting: [])
        try await db.save(note("o1", "a", zone: Self.other))
        try await db.deleteRecord(withID: Record.ID(recordName: "n1", zoneID: Self.notes))
        let received = try await receivedNotifications(alice)
        #expect(received.count == 2)
        #expect(received.allSatisfy { ($0 as? RecordZoneNotification)?.recordZoneID == Self.notes })
        #expect(received.allSatisfy { $0.notificationType == .recordZone && $0.subscriptionID == "notes" })
    }

    @Test func aZoneSubscriptionWithARecordTypeFiresForThatTypeOnly() async throws {
        let subscription = RecordZoneSubscription(zoneID: Self.notes, subscriptionID: "tasks")
        subscription.recordType = "Task"
        try await db.save(subscription)
        try await db.save(note("n1", "a"))
        try await db.save(note("t1", "a", type: "Task"))
        #expect(try await receivedNotifications(alice).count == 1)
        #expect((try await db.subscription(for: "tasks") as? RecordZoneSubscription)?.recordType == "Task")
    }

    @Test func aDatabaseSubscriptionFiresForCustomZonesOnly() async throws {
        try await db.save(DatabaseSubscription(subscriptionID: "all"))
        try await db.save(note("d1", "a", zone: .default))
        _ = try await db.modifyRecords(saving: [note("n1", "a"), note("o1", "a", zone: Self.other)], deleting: [])
        let received = try await receivedNotifications(alice)
        #expect(received.count == 1)
        #expect(received.first is DatabaseNotification)
        #expect(received.first?.notificationType == .database)
    }

    @Test func anotherUsersWritesDoNotReachAPrivateSubscription() async throws {
        try await db.save(QuerySubscription(recordType: "Note", predicate: QueryPredicate(value: true), subscriptionID: "mine"))
        let bob = try store.container(user: "bob")
        try await bob.privateCloudDatabase.save(note("b1", "x", zone: .default))
        #expect(try await receivedNotifications(alice).isEmpty)
        #expect(try await receivedNotifications(bob).isEmpty)
    }

    @Test func subscriptionsAreSavedFetchedAndDeleted() async throws {
        let query = QuerySubscription(
            recordType: "Note", predicate: try QueryPredicate(format: "rank > 3 AND title == %@", "x"), subscriptionID: "q",
            options: [.firesOnRecordUpdate, .firesOnce])
        query.zoneID = Self.notes
        query.notificationInfo = Subscription.NotificationInfo(alertBody: "hello", desiredKeys: ["title"], shouldBadge: true)
        let (saves, _) = try await db.modifySubscriptions(
            saving: [query, RecordZoneSubscription(zoneID: Self.notes, subscriptionID: "z"), DatabaseSubscription(subscriptionID: "d")],
            deleting: [])
        #expect(saves.count == 3 && saves.values.allSatisfy { (try? $0.get()) != nil })
        let fetched = try #require(try await db.subscription(for: "q") as? QuerySubscription)
        #expect(fetched.recordType == "Note")
        #expect(fetched.predicate == query.predicate)
        #expect(fetched.querySubscriptionOptions == [.firesOnRecordUpdate, .firesOnce])
        #expect(fetched.zoneID == Self.notes)
        #expect(fetched.notificationInfo == query.notificationInfo)
        #expect(fetched.subscriptionType == .query)
        #expect(try await db.allSubscriptions().map(\.subscriptionID) == ["d", "q", "z"])
        #expect(try await store.publicDatabase.allSubscriptions().isEmpty)
        #expect(try await db.deleteSubscription(withID: "z") == "z")
        await expectFogError(.unknownItem) { try await db.deleteSubscription(withID: "z") }
        let results = try await db.subscriptions(for: ["d", "z"])
        #expect((try? results["d"]?.get()) != nil)
        #expect(results["z"]?.fogCode == .unknownItem)
    }

    @Test func badSubscriptionsFailItemByItem() async throws {
        let bob = try store.container(user: "bob")
        let checks: [(Database, Subscription, FogError.Code)] = [
            (
                try store.container(user: "alice").sharedCloudDatabase,
                QuerySubscription(recordType: "Note", predicate: QueryPredicate(value: true), subscriptionID: "q-shared"), .invalidArguments
            ),
            (store.publicDatabase, RecordZoneSubscription(zoneID: .default, subscriptionID: "z-public"), .invalidArguments),
            (store.publicDatabase, DatabaseSubscription(subscriptionID: "d-public"), .invalidArguments),
            (
                db,
                QuerySubscription(
                    recordType: "Note", predicate: QueryPredicate(value: true), subscriptionID: "no-flags", options: .firesOnce),
                .invalidArguments
            ),
            (db, RecordZoneSubscription(zoneID: RecordZone.ID(zoneName: "Missing"), subscriptionID: "missing"), .zoneNotFound),
            (bob.sharedCloudDatabase, RecordZoneSubscription(zoneID: Self.notes, subscriptionID: "not-shared"), .zoneNotFound),
        ]
        for (database, subscription, code) in checks {
            await expectFogError(code, "\(subscription.subscriptionID)") { try await database.save(subscription) }
        }
        // A predicate that clashes with a field's type, next to a good one: per item.
        try await db.save(note("n1", "x"))
        let (saves, _) = try await db.modifySubscriptions(
            saving: [
                QuerySubscription(recordType: "Note", predicate: try QueryPredicate(format: "title > 3"), subscriptionID: "clash"),
                QuerySubscription(recordType: "Note", predicate: try QueryPredicate(format: "title == 'x'"), subscriptionID: "good"),
            ], deleting: [])
        #expect(saves["clash"]?.fogCode == .invalidArguments)
        #expect((try? saves["good"]?.get()) != nil)
        let nobody = try store.container(user: nil)
        await expectFogError(.notAuthenticated) { try await nobody.publicCloudDatabase.save(DatabaseSubscription(subscriptionID: "x")) }
    }

    @Test func inProductionAPredicateOnAnUnindexedFieldIsRefused() async throws {
        try await db.save(note("n1", "x"))
        try await store.clearIndexes(ofRecordTypes: "Note")
        try await store.admin.deploySchema()
        let production = try store.productionContainer()
        defer { production.close() }
        await expectFogError(.invalidArguments) {
            try await production.privateCloudDatabase.save(
                QuerySubscription(recordType: "Note", predicate: try QueryPredicate(format: "title == 'x'"), subscriptionID: "p"))
        }
        await expectFogError(.invalidArguments) {
            try await production.privateCloudDatabase.save(
                QuerySubscription(recordType: "Unknown", predicate: QueryPredicate(value: true), subscriptionID: "u"))
        }
    }

    @Test func theOperationsReportPerSubscriptionResults() throws {
        let operation = ModifySubscriptionsOperation(
            subscriptionsToSave: [
                DatabaseSubscription(subscriptionID: "d"),
                RecordZoneSubscription(zoneID: RecordZone.ID(zoneName: "Nope"), subscriptionID: "z"),
            ],
            subscriptionIDsToDelete: ["absent"])
        let saved = Mutex<[Subscription.ID: Bool]>([:])
        let final = Mutex<FogError.Code?>(nil)
        operation.perSubscriptionSaveBlock = { id, result in saved.withLock { $0[id] = (try? result.get()) != nil } }
        operation.modifySubscriptionsResultBlock = { result in final.withLock { $0 = result.fogCode } }
        db.add(operation)
        operation.waitUntilFinished()
        #expect(saved.withLock { $0 } == ["d": true, "z": false])
        #expect(final.withLock { $0 } == .partialFailure)

        let fetchAll = FetchSubscriptionsOperation.fetchAllSubscriptionsOperation()
        let fetched = Mutex<[Subscription.ID]>([])
        fetchAll.perSubscriptionResultBlock = { id, _ in fetched.withLock { $0.append(id) } }
        db.add(fetchAll)
        fetchAll.waitUntilFinished()
        #expect(fetched.withLock { $0 } == ["d"])

        let fetchSome = FetchSubscriptionsOperation(subscriptionIDs: ["d", "x"])
        let outcome = Mutex<FogError.Code?>(nil)
        fetchSome.fetchSubscriptionsResultBlock = { result in outcome.withLock { $0 = result.fogCode } }
        db.add(fetchSome)
        fetchSome.waitUntilFinished()
        #expect(outcome.withLock { $0 } == .partialFailure)
    }
}
