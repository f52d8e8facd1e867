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
    /// How the operation runs: the values set here win over those of ``group``'s
    /// ``OperationGroup/defaultConfiguration`` (see ``effectiveConfiguration``).
    public var configuration = Configuration()
    /// The group the operation belongs to (CloudKit's `CKOperationGroup`); its
    /// ``OperationGroup/defaultConfiguration`` supplies what ``configuration`` does not set.
    /// `configuredWith(configuration:group:body:)` sets it on operations added in its body
    /// that have none.
    public var group: OperationGroup?
    /// The configuration of the `configuredWith` call the operation was added in, if any.
    var scopeConfiguration: Configuration?

    /// The configuration the operation runs with, merged as CloudKit merges it: each value
    /// set on ``configuration`` wins; then a value set by the enclosing
    /// `configuredWith(configuration:group:body:)` call it was added in; then a value set on
    /// ``group``'s ``OperationGroup/defaultConfiguration``; otherwise CloudKit's default. A
    /// FogKit addition, to see the outcome of the merge.
    public var effectiveConfiguration: Configuration {
        configuration.merged(over: scopeConfiguration).merged(over: group?.defaultConfiguration)
    }
    /// The operation's identifier (CloudKit's `CKOperation.ID`, a string).
    public typealias ID = String

    /// The operation's unique identifier, set when it is created, as in CloudKit. A
    /// long-lived operation is listed and fetched by it
    /// (``Container/allLongLivedOperationIDs()``); an operation fetched with
    /// ``Container/longLivedOperation(for:)`` has the original's.
    public internal(set) var operationID: ID = UUID().uuidString

    /// Whether the operation is long-lived: the same as ``Configuration/isLongLived`` of its
    /// ``configuration`` (CloudKit's older `CKOperation.isLongLived`). A long-lived
    /// ``ModifyRecordsOperation``, ``FetchRecordsOperation`` or ``QueryOperation`` is kept in
    /// the store from the moment it is added until its result has been delivered, across
    /// restarts; see ``Container/allLongLivedOperationIDs()``.
    public var isLongLived: Bool {
        get { configuration.isLongLived }
        set { configuration.isLongLived = newValue }
    }

    /// Called once a long-lived operation has been kept in the store, before it does its
    /// work (CloudKit's `longLivedOperationWasPersistedBlock`).
    public var longLivedOperationWasPersistedBlock: (() -> Void)?

    /// Where a long-lived operation is kept, once it is; `nil` for other operations.
    var keeper: LongLivedKeeper?

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
        applyQualityOfService()
        let cancelledBeforeStart = lifecycle.withLock {
            phase = .starting
            return super.isCancelled
        }
        // Foundation will not call `main()`: report the cancellation now, before the
        // operation finishes.
        if cancelledBeforeStart {
            finish(with: cancellationError())
            didDeliver()
        }
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
            didDeliver()
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
        if isCancelled {
            finish(with: cancellationError())
        } else {
            run()
        }
        didDeliver()
    }

    /// Forgets a long-lived operation once its result has been delivered (a store closed
    /// meanwhile keeps it, to be fetched again after a restart).
    func didDeliver() {
        guard let keeper else { return }
        self.keeper = nil
        try? keeper.forget(operationID)
    }

    /// Gives the operation the quality of service its ``effectiveConfiguration`` sets, if any.
    func applyQualityOfService() {
        let effective = effectiveConfiguration
        if effective.setsQualityOfService { qualityOfService = effective.qualityOfService }
    }

    /// Takes the configuration and group of the `configuredWith` call in progress, if any, and
    /// the quality of service of the merged configuration; called when the operation is added.
    func prepareForAdding() {
        if let scope = OperationScope.current {
            scopeConfiguration = scope.configuration
            if group == nil { group = scope.group }
        }
        applyQualityOfService()
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
    ///
    /// A configuration remembers which of its properties were set. When an operation runs,
    /// the values set on its own ``CloudOperation/configuration`` win; a property it did not
    /// set comes from the configuration of the enclosing `configuredWith` call, then from its
    /// ``CloudOperation/group``'s ``OperationGroup/defaultConfiguration``, and otherwise is
    /// CloudKit's default — the merge CloudKit documents
    /// (``CloudOperation/effectiveConfiguration`` is the result). Two configurations are
    /// equal when they set the same properties to the same values.
    public struct Configuration: Sendable, Hashable {
        private var explicitQualityOfService: QualityOfService?
        private var explicitAllowsCellularAccess: Bool?
        private var explicitIsLongLived: Bool?
        private var explicitTimeoutIntervalForRequest: TimeInterval?
        private var explicitTimeoutIntervalForResource: TimeInterval?

        /// The operation's quality of service; `.default` unless set. The operation (and the
        /// queue thread that runs it) gets it when it is added.
        public var qualityOfService: QualityOfService {
            get { explicitQualityOfService ?? .default }
            set { explicitQualityOfService = newValue }
        }
        /// Kept for source compatibility (`true` unless set); FogKit uses no network.
        public var allowsCellularAccess: Bool {
            get { explicitAllowsCellularAccess ?? true }
            set { explicitAllowsCellularAccess = newValue }
        }
        /// Whether the operation is long-lived (`false` unless set): kept in the store until
        /// its result has been delivered, across restarts (``CloudOperation/isLongLived``).
        public var isLongLived: Bool {
            get { explicitIsLongLived ?? false }
            set { explicitIsLongLived = newValue }
        }
        /// Kept for source compatibility (an idle timeout for network requests; 60 seconds
        /// unless set).
        public var timeoutIntervalForRequest: TimeInterval {
            get { explicitTimeoutIntervalForRequest ?? 60 }
            set { explicitTimeoutIntervalForRequest = newValue }
        }
        /// Kept for source compatibility; 7 days unless set, as in CloudKit. A FogKit
        /// operation makes one storage request, which is never interrupted once made.
        public var timeoutIntervalForResource: TimeInterval {
            get { explicitTimeoutIntervalForResource ?? 604_800 }
            set { explicitTimeoutIntervalForResource = newValue }
        }

        /// Creates a configuration that sets nothing: every property has CloudKit's default.
        public init() {}

        /// Whether the quality of service was set.
        var setsQualityOfService: Bool { explicitQualityOfService != nil }

        /// This configuration's set values, and where it sets none, those `defaults` sets.
        func merged(over defaults: Configuration?) -> Configuration {
            guard let defaults else { return self }
            var merged = self
            merged.explicitQualityOfService = explicitQualityOfService ?? defaults.explicitQualityOfService
            merged.explicitAllowsCellularAccess = explicitAllowsCellularAccess ?? defaults.explicitAllowsCellularAccess
            merged.explicitIsLongLived = explicitIsLongLived ?? defaults.explicitIsLongLived
            merged.explicitTimeoutIntervalForRequest = explicitTimeoutIntervalForRequest ?? defaults.explicitTimeoutIntervalForRequest
            merged.explicitTimeoutIntervalForResource = explicitTimeoutIntervalForResource ?? defaults.explicitTimeoutIntervalForResource
            return merged
        }
    }
}
