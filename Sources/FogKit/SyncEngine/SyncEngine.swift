import Foundation
import Synchronization

/// Keeps an app's local store in step with a database (CloudKit's `CKSyncEngine`).
///
/// The app keeps its own store and tells the engine which records and zones changed
/// (``state``'s pending changes). The engine sends them, asking the delegate for the
/// records batch by batch, fetches what changed on the server, and hands the app
/// ``Event``s: fetched records and deletions, the results of each send, account changes,
/// and a ``Event/stateUpdate(_:)`` after every change of its state, which the app persists
/// and passes back at the next launch.
///
/// ```swift
/// var configuration = SyncEngine.Configuration(
///     database: container.privateCloudDatabase, stateSerialization: store.savedState, delegate: store)
/// let engine = SyncEngine(configuration)
/// engine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneName: "Notes"))])
/// engine.state.add(pendingRecordZoneChanges: [.saveRecord(note.recordID)])
/// try await engine.sendChanges()
/// ```
///
/// The engine owns scheduling (with ``Configuration/automaticallySync``), retries of transient
/// errors, change tokens, the database subscription and its notifications, and account
/// monitoring. It talks to the database through FogKit's public API only (see `Docs/SyncEngine.md`).
public final class SyncEngine: Sendable, CustomStringConvertible {
    /// The database the engine syncs.
    public let database: Database
    /// The engine's live state: pending changes, tokens, zones to fetch.
    public let state: State

    let server: any SyncServer
    let automaticallySync: Bool
    let configuredSubscriptionID: Subscription.ID?
    let retry: SyncRetryPolicy
    private let weakDelegate: WeakSyncEngineDelegate
    let events = SyncEventQueue()
    let workLock = SyncWorkLock()
    /// Running fetches and sends, which ``cancelOperations()`` cancels.
    let running = SyncTaskSet()
    /// Scheduled (automatic) work.
    let scheduled = Mutex(ScheduledWork())
    /// Records sent in requests whose reply was lost, by ID: a later conflict with a server
    /// record that holds the same fields is the lost save, not a conflict.
    let lostSaves = Mutex<[Record.ID: Record]>([:])
    /// Whether a state update for the app's own changes waits to be delivered.
    let appUpdateQueued = Atomic(false)
    /// Whether listening stopped for want of a usable account (checkAccount restarts it).
    let listeningWaitsForAccount = Atomic(false)
    /// The tasks that watch the account and the notifications, cancelled when the engine goes.
    let monitors = Mutex<[String: Task<Void, Never>]>([:])

    /// Creates an engine (CloudKit's `init(_:)`). Create it early: with
    /// ``Configuration/automaticallySync`` it starts watching the database's notifications.
    /// It reports the net account change since `stateSerialization` was saved, if any.
    public convenience init(_ configuration: Configuration) {
        self.init(configuration, server: LocalSyncServer(database: configuration.database))
    }

    /// Creates an engine over `server` (the seam a transport implements).
    init(_ configuration: Configuration, server: any SyncServer, retry: SyncRetryPolicy = .standard) {
        database = configuration.database
        state = State(configuration.stateSerialization?.storage ?? State.Storage())
        self.server = server
        automaticallySync = configuration.automaticallySync
        configuredSubscriptionID = configuration.subscriptionID
        self.retry = retry
        weakDelegate = WeakSyncEngineDelegate(configuration.delegate)
        events.start { [weak self] event in
            guard let self, let delegate = self.weakDelegate.value else { return }
            await delegate.handleEvent(event, syncEngine: self)
        }
        state.onAppChange.withLock {
            $0 = { [weak self] added in self?.stateChangedByApp(added: added) }
        }
        startMonitoring()
    }

    deinit {
        for task in monitors.withLock({ Array($0.values) }) { task.cancel() }
        scheduled.withLock { $0.cancelAll() }
        running.cancelAll()
        events.finish()
    }

    /// The delegate, while it exists.
    var delegate: (any SyncEngineDelegate)? { weakDelegate.value }

    /// Fetches the database's changes now (CloudKit's `fetchChanges(_:)`), whatever the
    /// schedule, and returns after the delegate has handled every event of the fetch.
    /// Does nothing without a usable account.
    ///
    /// - Throws: ``FogError`` when the database feed fails after the engine's retries, or
    ///   `operationCancelled` (``cancelOperations()``). A zone's failure is reported in its
    ///   ``Event/didFetchRecordZoneChanges(_:)`` event, not thrown.
    public func fetchChanges(_ options: FetchChangesOptions = FetchChangesOptions()) async throws {
        _ = try await runWork { try await $0.fetch(options, reason: .manual) }
    }

    /// Sends the pending changes now (CloudKit's `sendChanges(_:)`), and returns after the
    /// delegate has handled every event of the send. Does nothing without a usable account.
    ///
    /// - Throws: ``FogError/Code/partialFailure`` when any change failed, with the errors by
    ///   record or zone ID (after the ``Event/sentRecordZoneChanges(_:)`` events that carry
    ///   them), or `operationCancelled`.
    public func sendChanges(_ options: SendChangesOptions = SendChangesOptions()) async throws {
        _ = try await runWork { try await $0.send(options, reason: .manual) }
    }

    /// Cancels the running and scheduled fetches and sends (CloudKit's
    /// `cancelOperations()`). Cancellation is asynchronous: a request already at the server
    /// may still succeed, and its results are reported.
    public func cancelOperations() async {
        scheduled.withLock { $0.cancelAll() }
        running.cancelAll()
    }

    /// `<SyncEngine private database>`.
    public var description: String { "<SyncEngine \(database.databaseScope) database>" }

    /// Runs `body` as one of the engine's operations: one at a time, cancellable by
    /// ``cancelOperations()`` and by the caller's task.
    @discardableResult
    func runWork<R: Sendable>(_ body: @escaping @Sendable (SyncEngine) async throws -> R) async throws -> R {
        let task = Task { [self] in
            await workLock.lock()
            do {
                try Task.checkCancellation()
                let result = try await body(self)
                await workLock.unlock()
                return result
            } catch {
                await workLock.unlock()
                throw error
            }
        }
        let id = running.insert(task)
        defer { running.remove(id) }
        do {
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        } catch {
            throw FogError.syncError(error)
        }
    }

    /// Posts a ``Event/stateUpdate(_:)`` with the state now, and waits for it to be handled.
    func postStateUpdate() async {
        await events.post(.stateUpdate(Event.StateUpdate(stateSerialization: state.serialization())))
    }

    /// The app added or removed pending changes: report the state (one update for changes
    /// made in a row: it carries the state of the moment it is delivered), and schedule a send.
    private func stateChangedByApp(added: Bool) {
        if !appUpdateQueued.exchange(true, ordering: .acquiringAndReleasing) {
            events.postLater { [weak self, state] in
                self?.appUpdateQueued.store(false, ordering: .releasing)
                return .stateUpdate(Event.StateUpdate(stateSerialization: state.serialization()))
            }
        }
        if added { scheduleSend(after: retry.sendDelay) }
    }
}
