import FogKitTesting
import Foundation
import Synchronization
import Testing

@testable import FogKit

/// Automatic sync across a spell without a usable account: what a scheduled fetch or send
/// skipped then is done once the account is usable again, without waiting for another change.
@Suite struct SyncEngineAccountGapTests {
    let store: TestStore

    init() throws { store = try TestStore() }

    /// D's fetch for C's notification runs while D's account is temporarily unavailable and
    /// fetches nothing. It used to acknowledge the notification all the same, so D missed C's
    /// change until a later notification; now the fetch is owed and runs when the account is back.
    @Test func aNotificationWhoseFetchFoundNoAccountIsFetchedWhenTheAccountIsBack() async throws {
        let readerContainer = try store.container(user: "alice")
        let c = NotesDevice("C", database: store.container.privateCloudDatabase)
        let d = NotesDevice("D", database: readerContainer.privateCloudDatabase)
        try c.start()
        let engine = try d.start(automaticallySync: true)
        // D's first listening: the subscription is saved, then the fetch covering the gap ends.
        #expect(await eventually { engine.scheduled.withLock { $0.fetchesEnded } >= 1 })
        try readerContainer.setAccountStatus(.temporarilyUnavailable)
        let ended = engine.scheduled.withLock { $0.fetchesEnded }
        c.createZone()
        c.write("n", "while D was unavailable")
        try await c.engine.sendChanges()
        // D's fetch for the notification of that send ends, having found no usable account.
        #expect(await eventually { engine.scheduled.withLock { $0.fetchesEnded } > ended })
        #expect(d.titles["n"] == nil)
        try readerContainer.setAccountStatus(.available)
        #expect(await eventually { d.titles["n"] == "while D was unavailable" })
        await engine.cancelOperations()
    }

    /// An engine started while the account is unavailable starts listening once it is
    /// available again (same user): it used to wait for a change of user that never came.
    @Test func listeningStartsWhenTheAccountBecomesAvailable() async throws {
        let readerContainer = try store.container(user: "alice")
        let c = NotesDevice("C", database: store.container.privateCloudDatabase)
        let d = NotesDevice("D", database: readerContainer.privateCloudDatabase)
        try c.start()
        try d.start()
        // D's state knows the user first (a saved state), then D restarts automatic while unavailable.
        try await d.engine.fetchChanges()
        try readerContainer.setAccountStatus(.temporarilyUnavailable)
        d.stop()
        let engine = try d.start(automaticallySync: true)
        #expect(await eventually { engine.listeningWaitsForAccount.load(ordering: .acquiring) })
        try readerContainer.setAccountStatus(.available)
        c.createZone()
        c.write("n", "after the account came back")
        try await c.engine.sendChanges()
        #expect(await eventually { d.titles["n"] == "after the account came back" })
        await engine.cancelOperations()
    }
}
