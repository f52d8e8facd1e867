import FogKit
import FogKitTesting
import Foundation
import Synchronization
import Testing

/// The sync engine's options, cancellation, untracked changes, errors it hands to the app,
/// zone purges, its subscription, and a database other than the private one.
@Suite struct SyncEngineBehaviourTests {
    let store: TestStore
    var container: Container { store.container }
    let a: NotesDevice
    let b: NotesDevice

    init() throws {
        store = try TestStore()
        a = NotesDevice("A", database: store.container.privateCloudDatabase)
        b = NotesDevice("B", database: store.container.privateCloudDatabase)
        try a.start()
        try b.start()
    }

    @Test func fetchOptionsFromTheDelegateNarrowTheFetch() async throws {
        let other = NotesDevice("A2", database: container.privateCloudDatabase, zoneID: RecordZone.ID(zoneName: "Other"))
        try other.start()
        a.createZone()
        a.write("n", "in Notes")
        try await a.engine.sendChanges()
        other.createZone()
        other.write("o", "in Other")
        try await other.engine.sendChanges()
        b.model.withLock { $0.fetchScope = .zoneIDs([b.zoneID]) }
        try await b.engine.fetchChanges()
        #expect(b.titles == ["n": "in Notes"])
        #expect(b.engine.state.zoneIDsWithUnfetchedServerChanges == [other.zoneID], "the other zone waits")
        #expect(b.model.withLock { $0.optionRequests } >= 2, "asked before every request")
        b.model.withLock { $0.fetchScope = nil }
        try await b.engine.fetchChanges(SyncEngine.FetchChangesOptions(scope: .all))
        #expect(b.titles == ["n": "in Notes", "o": "in Other"])
        #expect(b.engine.state.zoneIDsWithUnfetchedServerChanges.isEmpty)
    }

    @Test func cancellingASendKeepsItsChangesPending() async throws {
        a.createZone()
        try await a.engine.sendChanges()
        a.write("slow", "slow")
        container.faultPlan = FaultPlan([.init(.error(.networkUnavailable, retryAfterSeconds: 5), requests: [.modifyRecords])])
        let engine = a.engine
        let send = Task { try await engine.sendChanges() }
        try await Task.sleep(for: .milliseconds(200))
        await engine.cancelOperations()
        await #expect {
            try await send.value
        } throws: { error in
            (error as? FogError)?.code == .operationCancelled
        }
        container.faultPlan = .none
        #expect(engine.state.pendingRecordZoneChanges == [.saveRecord(a.id("slow"))])
        try await engine.sendChanges()
        #expect(engine.state.pendingRecordZoneChanges.isEmpty)
    }

    @Test func untrackedChangesAskTheDelegateAndAreClearedAfterTheSend() async throws {
        a.createZone()
        try await a.engine.sendChanges()
        a.write("u", "untracked")
        a.engine.state.hasPendingUntrackedChanges = true
        #expect(a.engine.state.hasPendingUntrackedChanges)
        try await a.engine.sendChanges()
        #expect(!a.engine.state.hasPendingUntrackedChanges)
        try await b.engine.fetchChanges()
        #expect(b.titles == ["u": "untracked"])
    }

    @Test func quotaErrorsGoToTheAppAndTheChangeIsDropped() async throws {
        a.createZone()
        try await a.engine.sendChanges()
        a.write("q", "too much")
        container.faultPlan = FaultPlan([.init(.error(.quotaExceeded), requests: [.modifyRecords])])
        let error = await expectFogError(.partialFailure) { try await a.engine.sendChanges() }
        container.faultPlan = .none
        #expect(fogCode(error?.partialErrorsByItemID?[a.id("q")]) == .quotaExceeded)
        #expect(a.model.withLock { $0.failedSaves[a.id("q")] } == .quotaExceeded)
        #expect(a.engine.state.pendingRecordZoneChanges.isEmpty, "not retried unless the app adds it again")
    }

    @Test func aPurgedZoneArrivesAsPurged() async throws {
        a.createZone()
        a.write("p", "purge me")
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(b.titles == ["p": "purge me"])
        try await container.privateCloudDatabase.purgeRecordZone(withID: a.zoneID)
        try await b.engine.fetchChanges()
        #expect(b.model.withLock { $0.zoneDeletions } == [.purged])
        #expect(b.titles.isEmpty)
    }

    @Test func automaticSyncSavesTheConfiguredSubscription() async throws {
        let c = NotesDevice("C", database: container.privateCloudDatabase)
        try c.start(automaticallySync: true, subscriptionID: "notes-changes")
        var saved: Subscription?
        // Generous: in a full parallel test run the engine's task waits behind many others.
        let deadline = Date().addingTimeInterval(120)
        while saved == nil, Date() < deadline {
            saved = try? await container.privateCloudDatabase.subscription(for: "notes-changes")
            if saved == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(saved?.subscriptionType == .database)
        await c.engine.cancelOperations()
    }

    @Test func anUnavailableAccountPausesSyncAndKeepsTheState() async throws {
        a.createZone()
        try await a.engine.sendChanges()
        a.write("w", "written while unavailable")
        try container.setAccountStatus(.temporarilyUnavailable)
        try await a.engine.sendChanges()
        #expect(a.engine.state.pendingRecordZoneChanges == [.saveRecord(a.id("w"))], "nothing sent, nothing dropped")
        try container.setAccountStatus(.restricted)
        try await a.engine.sendChanges()
        #expect(a.engine.state.pendingRecordZoneChanges == [.saveRecord(a.id("w"))])
        try container.setAccountStatus(.available)
        try await a.engine.sendChanges()
        #expect(a.engine.state.pendingRecordZoneChanges.isEmpty)
        // The same user all along: no account change was reported, and nothing was reset.
        #expect(a.model.withLock { $0.accountChanges.isEmpty })
        try await b.engine.fetchChanges()
        #expect(b.titles == ["w": "written while unavailable"])
    }

    @Test func thePublicDatabaseSyncsWhenItHasAFeed() async throws {
        let everyZone = try TestStore(configuration: .init(durability: .none, changeFeeds: .everyZone))
        let database = everyZone.container.publicCloudDatabase
        let p = NotesDevice("P", database: database, zoneID: .default)
        let q = NotesDevice("Q", database: database, zoneID: .default)
        try p.start()
        try q.start()
        p.write("pub", "public note")
        try await p.engine.sendChanges()
        try await q.engine.fetchChanges()
        // The public feed also carries the users' `Users` records; the note is what matters.
        #expect(q.titles["pub"] == "public note")
    }
}
