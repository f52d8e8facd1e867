import FogKitTesting
import Foundation
import Synchronization
import Testing

@testable import FogKit

/// The interleavings of automatic sync suspected of losing a first change, forced: a change
/// committed before any database subscription exists, and a notification that arrives while a
/// fetch whose snapshot predates it is running. Neither loses the change.
@Suite struct SyncEngineListeningRaceTests {
    let store: TestStore

    init() throws { store = try TestStore() }

    /// A ``NotesDevice`` as the delegate, holding the first fetched page until released.
    final class HeldDevice: SyncEngineDelegate, Sendable {
        let device: NotesDevice
        /// Whether a page is being held, and whether it may go on.
        let state = Mutex((holding: false, released: false, held: false))

        init(_ device: NotesDevice) { self.device = device }

        func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
            if case .fetchedRecordZoneChanges = event {
                let hold = state.withLock { s in
                    defer { s.held = true }
                    return !s.held
                }
                if hold {
                    state.withLock { $0.holding = true }
                    while !state.withLock({ $0.released }) { try? await Task.sleep(for: .milliseconds(10)) }
                }
            }
            await device.handleEvent(event, syncEngine: syncEngine)
        }

        func nextRecordZoneChangeBatch(
            _ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine
        ) async -> SyncEngine.RecordZoneChangeBatch? {
            await device.nextRecordZoneChangeBatch(context, syncEngine: syncEngine)
        }
    }

    @Test func aChangeBeforeTheSubscriptionAndOneDuringTheFirstFetchBothArrive() async throws {
        let c = NotesDevice("C", database: store.container.privateCloudDatabase)
        try c.start()
        // Committed while no database subscription exists: it makes no notification.
        c.createZone()
        c.write("one", "before the subscription")
        try await c.engine.sendChanges()
        #expect(try await store.container.privateCloudDatabase.allSubscriptions().isEmpty)

        let device = NotesDevice("D", database: store.container.privateCloudDatabase)
        let held = HeldDevice(device)
        var configuration = SyncEngine.Configuration(
            database: store.container.privateCloudDatabase, stateSerialization: nil, delegate: held)
        configuration.automaticallySync = true
        let engine = SyncEngine(configuration)
        // D's first listening fetch has read the zone (its snapshot holds "one" only) and is
        // held at its first page.
        #expect(await eventually { held.state.withLock { $0.holding } })
        c.write("two", "during the first fetch")
        try await c.engine.sendChanges()
        // The notification of "two" reached D while that fetch runs: another fetch is scheduled.
        #expect(await eventually { engine.scheduled.withLock { $0.notificationsScheduled } >= 1 })
        held.state.withLock { $0.released = true }
        #expect(await eventually { device.titles == ["one": "before the subscription", "two": "during the first fetch"] })
        await engine.cancelOperations()
    }
}
