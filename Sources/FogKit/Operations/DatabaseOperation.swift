import Foundation

/// The base of FogKit's operations: a Foundation `Operation` that works on one
/// database (CloudKit's `CKDatabaseOperation`, with `CKOperation`'s configuration).
///
/// Configure an operation's properties and callbacks, then hand it to
/// ``Database/add(_:)``, which sets ``database`` and runs it on the database's
/// queue. Operations also run on any `OperationQueue` once ``database`` is set,
/// and honour dependencies, cancellation and `completionBlock` as Foundation
/// operations do.
///
/// Callbacks run one after another on the thread that runs the operation,
/// after the store has committed (or failed) the work and with no storage
/// transaction open, so a callback may call FogKit again. The `completionBlock`
/// of `Operation` runs last. A cancelled operation reports
/// ``FogError/Code/operationCancelled`` through its result blocks.
public class DatabaseOperation: Operation, @unchecked Sendable {
    /// The database the operation works on; set by ``Database/add(_:)``.
    public var database: Database?
    /// How the operation runs.
    public var configuration = Configuration()
    /// A unique identifier of the operation, for logs.
    public let operationID: String = UUID().uuidString

    /// Creates an operation.
    override public init() {
        super.init()
    }

    /// Starts the operation; a cancelled operation reports
    /// ``FogError/Code/operationCancelled`` to its result blocks and finishes.
    override public func start() {
        if let qos = configuration.qualityOfService { qualityOfService = qos }
        if isCancelled { finish(with: cancellationError()) }
        super.start()
    }

    /// Runs the operation's work. Called by `start()`; do not call it directly.
    override public func main() {
        guard !isCancelled else { return finish(with: cancellationError()) }
        guard let database else {
            return finish(
                with: FogError(
                    .invalidArguments, message: "the operation has no database: add it with Database.add(_:) or set its database"))
        }
        guard !database.isClosed else {
            return finish(with: FogError(.internalError, message: "the container is closed"))
        }
        execute(in: database)
    }

    /// The error a cancelled operation reports.
    func cancellationError() -> FogError {
        FogError(.operationCancelled, message: "the operation was cancelled")
    }

    /// Does the work and reports it through the callbacks. Subclasses override it.
    func execute(in database: Database) {}

    /// Reports a failure of the whole operation through the callbacks. Subclasses override it.
    func finish(with error: FogError) {}
}

extension DatabaseOperation {
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

extension Database {
    /// Runs `operation` on this database: sets its ``DatabaseOperation/database``
    /// and adds it to the database's operation queue.
    public func add(_ operation: DatabaseOperation) {
        operation.database = self
        operationQueue.addOperation(operation)
    }
}
