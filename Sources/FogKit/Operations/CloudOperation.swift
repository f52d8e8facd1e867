import Foundation

/// The base of FogKit's operations (CloudKit's `CKOperation`): a Foundation `Operation` with
/// CloudKit's configuration, cancellation and callbacks. ``DatabaseOperation`` works on one
/// database; the sharing operations (``FetchShareMetadataOperation``,
/// ``AcceptSharesOperation``, ``FetchShareParticipantsOperation``) work on a container.
///
/// Configure an operation's properties and callbacks, then hand it to ``Database/add(_:)``
/// or ``Container/add(_:)``. Operations also run on any `OperationQueue` once their database
/// or container is set, and honour dependencies, cancellation and `completionBlock` as
/// Foundation operations do.
///
/// Callbacks run one after another on the thread that runs the operation,
/// after the store has committed (or failed) the work and with no storage
/// transaction open, so a callback may call FogKit again. The `completionBlock`
/// of `Operation` runs last. A cancelled operation reports
/// ``FogError/Code/operationCancelled`` through its result blocks.
public class CloudOperation: Operation, @unchecked Sendable {
    /// How the operation runs.
    public var configuration = Configuration()
    /// A unique identifier of the operation, for logs.
    public let operationID: String = UUID().uuidString

    /// Creates an operation.
    override public init() {
        super.init()
    }

    /// Guards ``phase`` and ``deferredCancel``. Recursive: Foundation may notify observers of
    /// `isCancelled` (which read it) from inside `cancel()`.
    private let lifecycle = NSRecursiveLock()
    /// Where the operation is between `start()` and `main()`; guarded by ``lifecycle``.
    private var phase = Phase.waiting
    /// Whether a cancellation arrived while the operation was being started; guarded by ``lifecycle``.
    private var deferredCancel = false

    private enum Phase {
        /// Not started yet: a cancellation applies at once, and `start()` reports it.
        case waiting
        /// In `start()`, before `main()`: a cancellation waits for `main()`, which reports it.
        case starting
        /// In `main()`, or `start()` is over: a cancellation applies at once.
        case running
    }

    /// Starts the operation; a cancelled operation reports
    /// ``FogError/Code/operationCancelled`` to its result blocks and finishes.
    ///
    /// Every operation reports exactly once, whenever it is cancelled. Foundation's `start()`
    /// skips `main()` for an operation cancelled before it gets there, so a cancellation
    /// landing between a check here and Foundation's own would report nothing; instead, a
    /// cancellation that arrives after this check waits for `main()` (see ``cancel()``).
    override public func start() {
        if isFinished { return super.start() }
        if let qos = configuration.qualityOfService { qualityOfService = qos }
        let cancelledBeforeStart = lifecycle.withLock {
            phase = .starting
            return super.isCancelled
        }
        // Foundation will not call `main()`: report the cancellation now, before the
        // operation finishes.
        if cancelledBeforeStart { finish(with: cancellationError()) }
        super.start()
        // If `main()` did not run although this check found no cancellation (a Foundation
        // that reads the deferred cancellation through `isCancelled`), report it now.
        let skipped = lifecycle.withLock {
            defer { phase = .running }
            return phase == .starting
        }
        if skipped, !cancelledBeforeStart {
            super.cancel()
            finish(with: cancellationError())
        }
    }

    /// Cancels the operation. Before it runs, it reports ``FogError/Code/operationCancelled``;
    /// while it runs, it stops where it can (between pages or records) and reports the same;
    /// once it has reported, cancelling changes nothing.
    override public func cancel() {
        lifecycle.withLock {
            if phase == .starting {
                deferredCancel = true
            } else {
                super.cancel()
            }
        }
    }

    /// Whether the operation was cancelled (a cancellation deferred while it starts included).
    override public var isCancelled: Bool {
        lifecycle.withLock { deferredCancel || super.isCancelled }
    }

    /// Runs the operation's work. Called by `start()`; do not call it directly.
    override public func main() {
        lifecycle.withLock {
            phase = .running
            if deferredCancel { super.cancel() }
        }
        guard !isCancelled else { return finish(with: cancellationError()) }
        run()
    }

    /// The error a cancelled operation reports.
    func cancellationError() -> FogError {
        FogError(.operationCancelled, message: "the operation was cancelled")
    }

    /// Does the work and reports it through the callbacks, once the operation runs and is not
    /// cancelled. Subclasses override it.
    func run() {}

    /// Reports a failure of the whole operation through the callbacks. Subclasses override it.
    func finish(with error: FogError) {}
}

extension CloudOperation {
    /// How an operation runs (CloudKit's `CKOperation.Configuration`).
    public struct Configuration: Sendable, Hashable {
        /// The operation's quality of service; `nil` keeps the operation's own.
        public var qualityOfService: QualityOfService?
        /// Kept for source compatibility; FogKit uses no network.
        public var allowsCellularAccess = true
        /// Kept for source compatibility; FogKit operations end with the process.
        public var isLongLived = false
        /// Kept for source compatibility (an idle timeout for network requests).
        public var timeoutIntervalForRequest: TimeInterval = 60
        /// Kept for source compatibility; 7 days by default, as in CloudKit. A FogKit
        /// operation makes one storage request, which is never interrupted once made.
        public var timeoutIntervalForResource: TimeInterval = 604_800

        /// Creates a configuration with CloudKit's defaults.
        public init() {}
    }
}
