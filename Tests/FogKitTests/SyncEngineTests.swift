import FogKit
import FogKitTesting
import Foundation
import Synchronization
import Testing

/// Waits until `condition` holds, polling, for at most `timeout` seconds; returns whether it did.
/// The default is long because a whole `swift test` run shares 2 cores among many tests at once:
/// a test that waits 120 s for automatic sync ran out in a clean-clone CI run, and with 16 tests at
/// a time such a wait still took 154 s beside the damaged-store children.
func eventually(timeout: Double = 600, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}

/// Two "devices" (``NotesDevice``: a local store, a persisted state, a ``SyncEngine``) on one
/// user's container, syncing explicitly (`automaticallySync = false`) as the scenarios of
/// CloudKit's sync engine reference (§10) describe.
@Suite struct SyncEngineTests {
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

    /// A creates the zone and `count` notes and sends them.
    private func seed(_ count: Int) async throws {
        a.createZone()
        for i in 0..<count { a.write("n\(i)", "note \(i)") }
        try await a.engine.sendChanges()
    }

    @Test func createdOnAIsSeenOnB() async throws {
        try await seed(10)
        #expect(a.engine.state.pendingRecordZoneChanges.isEmpty)
        #expect(a.engine.state.pendingDatabaseChanges.isEmpty)
        #expect(b.titles.isEmpty)
        try await b.engine.fetchChanges()
        #expect(b.titles == a.titles)
        #expect(b.titles.count == 10)
        // Each record came once.
        #expect(b.model.withLock { $0.fetched.values.allSatisfy { $0 == 1 } })
        // The fetch's events came in CloudKit's order.
        let events = b.events.filter { !$0.hasPrefix("stateUpdate") }
        #expect(events.first == "willFetchChanges")
        #expect(events.last == "didFetchChanges")
        #expect(events.contains { $0.hasPrefix("fetchedDatabaseChanges(1 modified") })
        #expect(events.contains("willFetchRecordZoneChanges(\(a.zoneID))"))
        #expect(events.contains("didFetchRecordZoneChanges(\(a.zoneID))"))
        // A fetch with nothing new delivers no records.
        try await b.engine.fetchChanges()
        #expect(b.model.withLock { $0.fetched.values.allSatisfy { $0 == 1 } })
    }

    @Test func aSendOf444RecordsGoesInBatchesWithinTheLimit() async throws {
        try await seed(444)
        let sent = a.events.filter { $0.hasPrefix("sentRecordZoneChanges") }
        #expect(
            sent == [
                "sentRecordZoneChanges(400 saved, 0 failed saves, 0 deleted, 0 failed deletes)",
                "sentRecordZoneChanges(44 saved, 0 failed saves, 0 deleted, 0 failed deletes)",
            ])
        // Zones go before the records in them.
        let zoneEvent = try #require(a.events.firstIndex { $0.hasPrefix("sentDatabaseChanges(1 saved") })
        let recordEvent = try #require(a.events.firstIndex { $0.hasPrefix("sentRecordZoneChanges") })
        #expect(zoneEvent < recordEvent)
        try await b.engine.fetchChanges()
        #expect(b.titles.count == 444)
    }

    @Test func editsRoundTripBothWays() async throws {
        try await seed(3)
        try await b.engine.fetchChanges()
        b.write("n1", "renamed on B")
        try await b.engine.sendChanges()
        try await a.engine.fetchChanges()
        #expect(a.titles["n1"] == "renamed on B")
        a.write("n2", "renamed on A")
        a.delete("n0")
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(b.titles == ["n1": "renamed on B", "n2": "renamed on A"])
        #expect(a.titles == b.titles)
    }

    @Test func offlineEditsOnBothConflictAndTheLaterEditWins() async throws {
        try await seed(1)
        try await b.engine.fetchChanges()
        // Both edit offline; B's edit is the later one.
        a.write("n0", "A's edit")
        b.write("n0", "B's edit")
        try await a.engine.sendChanges()
        // B's send conflicts: it throws after the event, and B keeps its (later) edit pending.
        let error = await expectFogError(.partialFailure) { try await b.engine.sendChanges() }
        #expect(fogCode(error?.partialErrorsByItemID?[b.id("n0")]) == .serverRecordChanged)
        #expect(b.model.withLock { $0.failedSaves[b.id("n0")] } == .serverRecordChanged)
        #expect(b.engine.state.pendingRecordZoneChanges == [.saveRecord(b.id("n0"))])
        #expect(a.engine.state.pendingRecordZoneChanges.isEmpty)
        // The second send, merged into the server record, goes through.
        try await b.engine.sendChanges()
        try await a.engine.fetchChanges()
        #expect(a.titles["n0"] == "B's edit")
        #expect(b.titles["n0"] == "B's edit")
    }

    @Test func aConflictLostByTheLaterSenderTakesTheServerValue() async throws {
        try await seed(1)
        try await b.engine.fetchChanges()
        b.write("n0", "B's older edit")
        a.write("n0", "A's later edit")
        try await a.engine.sendChanges()
        await expectFogError(.partialFailure) { try await b.engine.sendChanges() }
        // B took the server's (later) value and has nothing left to send.
        #expect(b.titles["n0"] == "A's later edit")
        #expect(b.engine.state.pendingRecordZoneChanges.isEmpty)
        try await b.engine.sendChanges()
    }

    @Test func aZoneDeletedBehindOurBackIsCreatedAgain() async throws {
        try await seed(2)
        try await b.engine.fetchChanges()
        let created = try #require(b.note("n0")?.lastKnown?.creationDate)
        _ = try await container.privateCloudDatabase.deleteRecordZone(withID: a.zoneID)
        // B learns of the deletion and drops the zone's notes.
        try await b.engine.fetchChanges()
        #expect(b.titles.isEmpty)
        #expect(b.events.contains { $0.hasPrefix("fetchedDatabaseChanges(0 modified, 1 deleted") })
        // A's next send fails with zoneNotFound; A adds the zone again and resends.
        a.write("n0", "after the zone went")
        await expectFogError(.partialFailure) { try await a.engine.sendChanges() }
        #expect(a.model.withLock { $0.failedSaves[a.id("n0")] } == .zoneNotFound)
        // The zone went out in the same send (zones go first when the app adds them during
        // the record phase); the record waits for the next send.
        #expect(a.engine.state.pendingDatabaseChanges.isEmpty)
        #expect(a.engine.state.pendingRecordZoneChanges == [.saveRecord(a.id("n0"))])
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(b.titles == ["n0": "after the zone went"])
        let recreated = try #require(b.note("n0")?.lastKnown?.creationDate)
        #expect(recreated > created, "a new record, with a new creation date")
    }

    @Test func aRecordDeletedBehindOurBackIsCreatedAgain() async throws {
        try await seed(1)
        _ = try await container.privateCloudDatabase.deleteRecord(withID: a.id("n0"))
        a.write("n0", "edited after the delete")
        await expectFogError(.partialFailure) { try await a.engine.sendChanges() }
        #expect(a.model.withLock { $0.failedSaves[a.id("n0")] } == .unknownItem)
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(b.titles == ["n0": "edited after the delete"])
    }

    @Test func anAtomicBatchWithAConflictSavesNothingThenBoth() async throws {
        try await seed(1)
        try await b.engine.fetchChanges()
        b.model.withLock { $0.atomic = true }
        a.write("n0", "A's edit")
        try await a.engine.sendChanges()
        b.write("n0", "B's later edit")
        b.write("fresh", "new on B")
        let error = await expectFogError(.partialFailure) { try await b.engine.sendChanges() }
        #expect(fogCode(error?.partialErrorsByItemID?[b.id("n0")]) == .serverRecordChanged)
        #expect(fogCode(error?.partialErrorsByItemID?[b.id("fresh")]) == .batchRequestFailed)
        await expectNotStored(b.id("fresh"), in: container.privateCloudDatabase)
        try await b.engine.sendChanges()
        try await a.engine.fetchChanges()
        #expect(a.titles == ["n0": "B's later edit", "fresh": "new on B"])
    }

    @Test func anEditBetweenTheBatchAndItsResultStillGoesOut() async throws {
        try await seed(1)
        // The send's request takes a while; the app edits the note meanwhile.
        container.faultPlan = FaultPlan([.init(.delayOnly, requests: [.modifyRecords], trigger: .firstCalls(1), latency: 2)])
        a.write("n0", "first edit")
        let built = a.model.withLock { $0.batchesBuilt }
        let engine = a.engine
        let send = Task { try await engine.sendChanges() }
        #expect(await eventually { a.model.withLock { $0.batchesBuilt } > built })
        a.write("n0", "second edit")
        try await send.value
        container.faultPlan = .none
        #expect(a.engine.state.pendingRecordZoneChanges == [.saveRecord(a.id("n0"))], "the later edit stays pending")
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(b.titles["n0"] == "second edit")
    }

    @Test func anExpiredZoneTokenRefetchesTheZoneFromTheStart() async throws {
        try await seed(5)
        try await b.engine.fetchChanges()
        a.write("n1", "changed")
        try await a.engine.sendChanges()
        container.faultPlan = FaultPlan([.init(.error(.changeTokenExpired), requests: [.fetchZoneChanges], trigger: .firstCalls(1))])
        try await b.engine.fetchChanges()
        container.faultPlan = .none
        #expect(b.titles == a.titles)
        #expect(b.model.withLock { $0.zoneFetchErrors.isEmpty })
        // The zone was fetched again from nil: every record arrived a second time.
        #expect(b.model.withLock { $0.fetched[b.id("n3")] } == 2)
    }

    @Test func anExpiredDatabaseTokenRefetchesTheDatabaseFeed() async throws {
        try await seed(2)
        try await b.engine.fetchChanges()
        a.write("n0", "changed")
        try await a.engine.sendChanges()
        container.faultPlan = FaultPlan([.init(.error(.changeTokenExpired), requests: [.fetchDatabaseChanges], trigger: .firstCalls(1))])
        try await b.engine.fetchChanges()
        container.faultPlan = .none
        #expect(b.titles == a.titles)
    }

    @Test func aRestartFromTheSavedStateMidFetchLosesNothingAndAppliesNothingTwice() async throws {
        try await seed(444)
        // B "crashes" after the first page of the zone's changes: nothing after it is persisted.
        b.model.withLock { $0.crashAfterFetchedPages = 1 }
        try await b.engine.fetchChanges()
        b.stop()
        let persisted = b.model.withLock { $0.persisted }
        #expect(persisted.notes.count > 0 && persisted.notes.count < 444, "the crash came mid-fetch")
        let restarted = NotesDevice.restarted(from: b)
        try restarted.start()
        try await restarted.engine.fetchChanges()
        #expect(restarted.titles == a.titles)
        // Only what the crashed run had not persisted came again.
        let again = restarted.model.withLock { Set($0.fetched.keys) }
        #expect(again.isDisjoint(with: persisted.notes.keys))
        #expect(again.count + persisted.notes.count == 444)
    }

    @Test func aRestartFromTheSavedStateMidSendSendsWhatWasLeft() async throws {
        a.createZone()
        try await a.engine.sendChanges()
        for i in 0..<3 { a.write("n\(i)", "note \(i)") }
        // A quits before sending; its edits and pending changes were persisted with the state.
        _ = await eventually { a.model.withLock { $0.persisted.notes.count == 3 } }
        a.stop()
        let restarted = NotesDevice.restarted(from: a)
        let engine = try restarted.start()
        #expect(engine.state.pendingRecordZoneChanges.count == 3)
        try await engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(b.titles == ["n0": "note 0", "n1": "note 1", "n2": "note 2"])
    }

    @Test func rateLimitedSendsAreRetriedAfterTheirDelay() async throws {
        container.faultPlan = FaultPlan([
            .init(.error(.requestRateLimited, retryAfterSeconds: 0.01), requests: [.modifyRecords, .modifyZones], trigger: .firstCalls(3))
        ])
        try await seed(5)
        container.faultPlan = FaultPlan([
            .init(
                .error(.zoneBusy, retryAfterSeconds: 0.01), requests: [.fetchZoneChanges, .fetchDatabaseChanges], trigger: .firstCalls(2))
        ])
        try await b.engine.fetchChanges()
        container.faultPlan = .none
        #expect(b.titles == a.titles)
        #expect(b.titles.count == 5)
        #expect(a.model.withLock { $0.failedSaves.isEmpty })
    }

    @Test func changesStayPendingWhenRetriesRunOut() async throws {
        a.createZone()
        try await a.engine.sendChanges()
        a.write("n0", "waits")
        container.faultPlan = FaultPlan([.init(.error(.serviceUnavailable, retryAfterSeconds: 0.005), requests: [.modifyRecords])])
        let error = await expectFogError(.partialFailure) { try await a.engine.sendChanges() }
        #expect(fogCode(error?.partialErrorsByItemID?[a.id("n0")]) == .serviceUnavailable)
        #expect(a.engine.state.pendingRecordZoneChanges == [.saveRecord(a.id("n0"))])
        container.faultPlan = .none
        try await a.engine.sendChanges()
        #expect(a.engine.state.pendingRecordZoneChanges.isEmpty)
        try await b.engine.fetchChanges()
        #expect(b.titles == ["n0": "waits"])
    }

    @Test func aLostReplyAfterCommitIsNeitherLostNorAppliedTwice() async throws {
        a.createZone()
        try await a.engine.sendChanges()
        for i in 0..<4 { a.write("n\(i)", "note \(i)") }
        container.faultPlan = FaultPlan([.init(.responseLost(), requests: [.modifyRecords], trigger: .nthCall(1))])
        try await a.engine.sendChanges()
        #expect(a.engine.state.pendingRecordZoneChanges.isEmpty)
        #expect(a.model.withLock { $0.failedSaves.isEmpty })
        // A holds the server's system fields: its next edit saves without a conflict.
        a.write("n1", "edited")
        a.delete("n3")
        container.faultPlan = FaultPlan([.init(.responseLost(), requests: [.modifyRecords], trigger: .nthCall(1))])
        try await a.engine.sendChanges()
        container.faultPlan = .none
        #expect(a.model.withLock { $0.failedSaves.isEmpty })
        try await b.engine.fetchChanges()
        #expect(b.titles == ["n0": "note 0", "n1": "edited", "n2": "note 2"])
        #expect(b.model.withLock { $0.fetched.values.allSatisfy { $0 == 1 } })
        // One version per save on the server: the lost reply's request was not run twice.
        let stored = try await container.privateCloudDatabase.record(for: a.id("n0"))
        #expect(stored.recordChangeTag == a.note("n0")?.lastKnown?.recordChangeTag)
    }

    @Test func signingOutResetsTheStateAndReportsTheChange() async throws {
        try await seed(2)
        try await b.engine.fetchChanges()
        let alice = try await container.userRecordID()
        a.write("n0", "pending when the user signs out")
        container.signOut()
        #expect(await eventually { a.model.withLock { !$0.accountChanges.isEmpty } && b.model.withLock { !$0.accountChanges.isEmpty } })
        #expect(a.model.withLock { $0.accountChanges } == [.signOut(previousUser: alice)])
        #expect(b.model.withLock { $0.accountChanges } == [.signOut(previousUser: alice)])
        #expect(a.engine.state.pendingRecordZoneChanges.isEmpty, "the state was reset")
        #expect(a.titles.isEmpty && b.titles.isEmpty, "the app dropped the account's data")
        // Nothing is sent or fetched while signed out.
        a.write("n5", "while signed out")
        try await a.engine.sendChanges()
        #expect(a.engine.state.pendingRecordZoneChanges == [.saveRecord(a.id("n5"))])
        // Signing in again: the app uploads its local notes.
        try container.signIn(as: "alice")
        #expect(await eventually { a.model.withLock { $0.accountChanges.count == 2 } })
        #expect(a.model.withLock { $0.accountChanges.last } == .signIn(currentUser: alice))
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(b.titles["n5"] == "while signed out")
    }

    @Test func switchingAccountsWhileStoppedGivesOneNetEventAtStart() async throws {
        try await seed(1)
        let alice = try await container.userRecordID()
        a.stop()
        try container.signIn(as: "bob")
        container.signOut()
        try container.signIn(as: "bob")
        let bob = try await container.userRecordID()
        let restarted = NotesDevice.restarted(from: a)
        try restarted.start()
        #expect(await eventually { restarted.model.withLock { !$0.accountChanges.isEmpty } })
        try await restarted.engine.fetchChanges()
        #expect(restarted.model.withLock { $0.accountChanges } == [.switchAccounts(previousUser: alice, currentUser: bob)])
        // Bob's private database has none of Alice's notes.
        #expect(restarted.titles.isEmpty)
    }

    @Test func theAppsOwnChangesOfTheStateAreReported() async throws {
        let before = a.events.filter { $0 == "stateUpdate" }.count
        a.write("x", "x")
        #expect(await eventually { a.events.filter { $0 == "stateUpdate" }.count > before })
        let saved = try #require(a.model.withLock { $0.persisted.state })
        let serialization = try JSONDecoder().decode(SyncEngine.State.Serialization.self, from: saved)
        var configuration = SyncEngine.Configuration(database: a.database, stateSerialization: serialization, delegate: a)
        configuration.automaticallySync = false
        #expect(SyncEngine(configuration).state.pendingRecordZoneChanges == [.saveRecord(a.id("x"))])
    }

    @Test func automaticSyncCarriesASaveOnAToB() async throws {
        let c = NotesDevice("C", database: container.privateCloudDatabase)
        let d = NotesDevice("D", database: container.privateCloudDatabase)
        try c.start(automaticallySync: true)
        try d.start(automaticallySync: true)
        c.createZone()
        c.write("auto", "sent by itself")
        // Known issue, open: under a loaded CI machine the first automatic send sometimes does
        // not reach D within the deadline (seen twice in clean-clone runs, never alone); the
        // edit below, which must arrive, is checked without exception. No interleaving found
        // loses it (SyncEngineListeningRaceTests); with Swift's cooperative threads blocked it
        // arrives late without any further change (a probe blocking the two pool threads with
        // usleep in 4 s spells delivered it after 136-152 s).
        await withKnownIssue("the first automatic send is sometimes late under load", isIntermittent: true) {
            #expect(await eventually { d.titles["auto"] == "sent by itself" })
        }
        c.write("auto", "edited by itself")
        #expect(await eventually { d.titles["auto"] == "edited by itself" })
        #expect(c.engine.state.pendingRecordZoneChanges.isEmpty)
        await c.engine.cancelOperations()
        await d.engine.cancelOperations()
    }
}
