import FogKit
import FogKitTesting
import Foundation
import Synchronization
import Testing

/// The signed-in account of an open container: every ``AccountStatus`` is reachable, signing
/// in, out and switching changes what the databases act for, and each change posts
/// `AccountChanged` once, with the container as object.
@Suite struct AccountStatusTests {
    let store: TestStore
    var container: Container { store.container }
    init() throws { store = try TestStore() }

    private func note(_ name: String, zone: RecordZone.ID = .default) -> Record {
        let record = Record(recordType: "Note", recordID: Record.ID(recordName: name, zoneID: zone))
        record["title"] = name
        return record
    }

    /// Counts `AccountChanged` notifications whose object is `container`.
    private final class Counter: @unchecked Sendable {
        final class Tally: Sendable {
            let count = Mutex(0)
        }
        let tally = Tally()
        private var token: (any NSObjectProtocol)?
        init(_ container: Container) {
            let tally = self.tally
            token = NotificationCenter.default.addObserver(forName: .AccountChanged, object: nil, queue: nil) { notification in
                if (notification.object as? Container) === container { tally.count.withLock { $0 += 1 } }
            }
        }
        var value: Int { tally.count.withLock { $0 } }
        func stop() { if let token { NotificationCenter.default.removeObserver(token) } }
    }

    private func expectSyncFogError(
        _ code: FogError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) {
        do {
            try body()
            Issue.record("expected \(code)", sourceLocation: sourceLocation)
        } catch {
            #expect((error as? FogError)?.code == code, "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func theNotificationNameIsCloudKits() {
        #expect(Notification.Name.AccountChanged.rawValue == "CKAccountChangedNotification")
    }

    @Test func availableThenNoAccountAfterSignOut() async throws {
        #expect(try await container.accountStatus() == .available)
        #expect(container.userIdentity == "alice")
        try await container.publicCloudDatabase.save(note("public"))
        container.signOut()
        #expect(try await container.accountStatus() == .noAccount)
        #expect(container.userIdentity == nil)
        await expectFogError(.notAuthenticated) { try await container.userRecordID() }
        await expectFogError(.notAuthenticated) { try await container.privateCloudDatabase.save(note("a")) }
        // Public reads still work for nobody.
        _ = try await container.publicCloudDatabase.records(matching: Query(recordType: "Note", predicate: QueryPredicate(value: true)))
    }

    @Test func restrictedAccountsFailNotAuthenticatedButReadThePublicDatabase() async throws {
        try await container.publicCloudDatabase.save(note("public"))
        try container.setAccountStatus(.restricted)
        #expect(try await container.accountStatus() == .restricted)
        await expectFogError(.notAuthenticated) { try await container.privateCloudDatabase.save(note("a")) }
        await expectFogError(.notAuthenticated) { try await container.privateCloudDatabase.allRecordZones() }
        await expectFogError(.notAuthenticated) { try await container.sharedCloudDatabase.allRecordZones() }
        await expectFogError(.notAuthenticated) { try await container.publicCloudDatabase.save(note("b")) }
        await expectFogError(.notAuthenticated) { try await container.userRecordID() }
        #expect(try await container.publicCloudDatabase.record(for: Record.ID(recordName: "public"))["title"] as? String == "public")
        try container.setAccountStatus(.available)
        try await container.privateCloudDatabase.save(note("a"))
    }

    @Test func temporarilyUnavailableAccountsFailWithCode36() async throws {
        try await container.privateCloudDatabase.save(note("kept"))
        try await container.publicCloudDatabase.save(note("public"))
        try container.setAccountStatus(.temporarilyUnavailable)
        #expect(try await container.accountStatus() == .temporarilyUnavailable)
        let error = await expectFogError(.accountTemporarilyUnavailable) {
            try await container.privateCloudDatabase.record(for: Record.ID(recordName: "kept"))
        }
        #expect(error?.code.rawValue == 36)
        await expectFogError(.accountTemporarilyUnavailable) {
            try await container.privateCloudDatabase.databaseChanges(since: nil)
        }
        await expectFogError(.accountTemporarilyUnavailable) {
            try await container.privateCloudDatabase.save(RecordZone(zoneName: "Z"))
        }
        await expectFogError(.accountTemporarilyUnavailable) { try await container.publicCloudDatabase.save(note("p")) }
        _ = try await container.publicCloudDatabase.records(matching: Query(recordType: "Note", predicate: QueryPredicate(value: true)))
        try container.setAccountStatus(.available)
        #expect(try await container.privateCloudDatabase.record(for: Record.ID(recordName: "kept"))["title"] as? String == "kept")
    }

    @Test func couldNotDetermineComesWithTheInjectedError() async throws {
        container.faultPlan = FaultPlan([.init(.error(.networkUnavailable), requests: [.accountStatus])])
        await expectFogError(.networkUnavailable) { try await container.accountStatus() }
        let (status, error) = await withCheckedContinuation { continuation in
            container.accountStatus { status, error in continuation.resume(returning: (status, error as? FogError)) }
        }
        #expect(status == .couldNotDetermine)
        #expect(error?.code == .networkUnavailable)
        // A rule for every kind of request leaves accountStatus alone.
        container.faultPlan = FaultPlan([.init(.error(.networkUnavailable))])
        #expect(try await container.accountStatus() == .available)
    }

    @Test func badStatusChangesAreRefusedAndChangeNothing() async throws {
        expectSyncFogError(.invalidArguments) { try container.setAccountStatus(.noAccount) }
        expectSyncFogError(.invalidArguments) { try container.setAccountStatus(.couldNotDetermine) }
        expectSyncFogError(.invalidArguments) { try container.signIn(as: "") }
        #expect(try await container.accountStatus() == .available)
        container.signOut()
        expectSyncFogError(.notAuthenticated) { try container.setAccountStatus(.restricted) }
        #expect(try await container.accountStatus() == .noAccount)
    }

    @Test func signInSwitchAndSignOutChangeWhatTheDatabasesSee() async throws {
        let db = container.privateCloudDatabase
        let zone = RecordZone.ID(zoneName: "Notes")
        try await db.save(RecordZone(zoneID: zone))
        try await db.save(note("alices", zone: zone))
        let alice = try await container.userRecordID()

        try container.signIn(as: "bob")
        #expect(container.userIdentity == "bob")
        let bob = try await container.userRecordID()
        #expect(bob != alice)
        // Bob's private database has none of Alice's zones or records.
        #expect(try await db.allRecordZones().map(\.zoneID).contains(zone) == false)
        await #expect(throws: FogError.self) { try await db.record(for: Record.ID(recordName: "alices", zoneID: zone)) }
        try await db.save(note("bobs"))

        container.signOut()
        await expectFogError(.notAuthenticated) { try await db.allRecordZones() }

        try container.signIn(as: "alice")
        #expect(try await container.userRecordID() == alice)
        #expect(try await db.record(for: Record.ID(recordName: "alices", zoneID: zone))["title"] as? String == "alices")
        await expectFogError(.unknownItem) { try await db.record(for: Record.ID(recordName: "bobs")) }
        // The same database objects served every account.
        #expect(container.database(with: .private) === db)
    }

    @Test func eachChangePostsTheNotificationOnceWithTheContainer() async throws {
        let counter = Counter(container)
        defer { counter.stop() }
        let other = try store.container(user: "carol")
        let otherCounter = Counter(other)
        defer { otherCounter.stop() }

        container.signOut()
        #expect(counter.value == 1)
        container.signOut()  // no change: nobody was signed in
        #expect(counter.value == 1)
        try container.signIn(as: "bob")
        #expect(counter.value == 2)
        try container.signIn(as: "bob")  // no change
        #expect(counter.value == 2)
        try container.signIn(as: "dave")  // a switch
        #expect(counter.value == 3)
        try container.setAccountStatus(.temporarilyUnavailable)
        #expect(counter.value == 4)
        try container.setAccountStatus(.available)
        #expect(counter.value == 5)
        #expect(otherCounter.value == 0, "another container's account did not change")
    }

    @Test func accountChangesStreamYieldsEachChange() async throws {
        let changes = container.accountChanges
        container.signOut()
        try container.signIn(as: "bob")
        try container.setAccountStatus(.restricted)
        var seen: [AccountStatus] = []
        for await status in changes {
            seen.append(status)
            if seen.count == 3 { break }
        }
        #expect(seen == [.noAccount, .available, .restricted])
    }

    @Test func aCallInFlightFinishesAsTheOldAccount() async throws {
        // A slow save (latency injected) started for alice lands in alice's database even
        // though bob signs in while it runs.
        let zone = RecordZone.ID(zoneName: "Slow")
        try await container.privateCloudDatabase.save(RecordZone(zoneID: zone))
        container.faultPlan = FaultPlan([.init(.delayOnly, requests: [.modifyRecords], latency: 0.3)])
        let db = container.privateCloudDatabase
        let record = note("inflight", zone: zone)
        let save = Task { try await db.save(record) }
        try await Task.sleep(for: .milliseconds(100))
        try container.signIn(as: "bob")
        _ = try await save.value
        container.faultPlan = .none
        await #expect(throws: FogError.self) { try await db.record(for: Record.ID(recordName: "inflight", zoneID: zone)) }
        try container.signIn(as: "alice")
        #expect(try await db.record(for: Record.ID(recordName: "inflight", zoneID: zone))["title"] as? String == "inflight")
    }
}
