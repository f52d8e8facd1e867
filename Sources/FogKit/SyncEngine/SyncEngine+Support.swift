import Foundation
import Synchronization

/// The engine's events, delivered to the delegate one at a time in the order they were
/// posted, by one task.
final class SyncEventQueue: Sendable {
    private struct Item: Sendable {
        /// The event, made when it is delivered (so that a state update carries the state
        /// of that moment).
        let make: @Sendable () -> SyncEngine.Event
        let done: CheckedContinuation<Void, Never>?
    }

    private let stream: AsyncStream<Item>
    private let continuation: AsyncStream<Item>.Continuation

    init() {
        (stream, continuation) = AsyncStream<Item>.makeStream(bufferingPolicy: .unbounded)
    }

    /// Starts delivering events with `deliver`.
    func start(_ deliver: @escaping @Sendable (SyncEngine.Event) async -> Void) {
        let stream = self.stream
        Task {
            for await item in stream {
                await deliver(item.make())
                item.done?.resume()
            }
        }
    }

    /// Posts `event` and waits until the delegate has handled it.
    func post(_ event: SyncEngine.Event) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            if case .terminated = continuation.yield(Item(make: { event }, done: done)) { done.resume() }
        }
    }

    /// Posts the event `make` makes when its turn comes, without waiting.
    func postLater(_ make: @escaping @Sendable () -> SyncEngine.Event) {
        continuation.yield(Item(make: make, done: nil))
    }

    /// Delivers what was posted, then stops.
    func finish() { continuation.finish() }
}

/// A lock held across suspension points: one fetch, send or account check of an engine
/// runs at a time.
actor SyncWorkLock {
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func lock() async {
        if !locked {
            locked = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Hands the lock to the next waiter, or frees it.
    func unlock() {
        if waiters.isEmpty { locked = false } else { waiters.removeFirst().resume() }
    }
}

/// The delegate, held weakly.
final class WeakSyncEngineDelegate: Sendable {
    private struct Box: @unchecked Sendable { weak var value: (any SyncEngineDelegate)? }
    private let box: Mutex<Box>

    init(_ delegate: any SyncEngineDelegate) { box = Mutex(Box(value: delegate)) }

    var value: (any SyncEngineDelegate)? { box.withLock { $0.value } }
}

/// Tasks an engine may cancel (``SyncEngine/cancelOperations()``).
final class SyncTaskSet: Sendable {
    private let tasks = Mutex<[UUID: @Sendable () -> Void]>([:])

    func insert<R: Sendable>(_ task: Task<R, any Error>) -> UUID {
        let id = UUID()
        tasks.withLock { $0[id] = { task.cancel() } }
        return id
    }

    func remove(_ id: UUID) { _ = tasks.withLock { $0.removeValue(forKey: id) } }

    func cancelAll() {
        for cancel in tasks.withLock({ Array($0.values) }) { cancel() }
    }
}

/// How an engine retries transient failures.
struct SyncRetryPolicy: Sendable {
    /// Retries of one request before the engine gives up for this sync.
    var maximumRetries = 4
    /// The first wait when the error says none; it doubles with each retry.
    var baseDelay: Double = 0.1
    /// The longest wait.
    var maximumDelay: Double = 60
    /// The wait before a scheduled retry of a sync that gave up (automatic sync only).
    var scheduledRetryDelay: Double = 2
    /// How long automatic sync waits after a change before it sends, so that changes made
    /// together go together.
    var sendDelay: Double = 0.2
    /// How long automatic sync waits after a notification before it fetches.
    var fetchDelay: Double = 0.05

    static let standard = SyncRetryPolicy()

    /// Errors worth retrying at once (after the delay).
    static func isRetryable(_ code: FogError.Code) -> Bool {
        switch code {
        case .networkUnavailable, .networkFailure, .serviceUnavailable, .requestRateLimited, .zoneBusy, .serverResponseLost: true
        default: false
        }
    }

    /// Errors after which a change stays pending (the engine sends it again later).
    static func keepsPending(_ code: FogError.Code) -> Bool {
        isRetryable(code) || code == .notAuthenticated || code == .accountTemporarilyUnavailable || code == .operationCancelled
    }

    /// The wait before retry number `attempt` (1 is the first) after `error`.
    func delay(after error: FogError?, attempt: Int) -> Duration {
        let seconds = error?.retryAfterSeconds ?? baseDelay * Double(1 << min(attempt - 1, 16))
        return .seconds(min(max(seconds, 0), maximumDelay))
    }
}

extension FogError {
    /// `error` as a FogError; a cancellation is `operationCancelled`.
    static func syncError(_ error: any Error) -> FogError {
        if error is CancellationError { return FogError(.operationCancelled, message: "the sync engine's operation was cancelled") }
        return wrapping(error)
    }
}
