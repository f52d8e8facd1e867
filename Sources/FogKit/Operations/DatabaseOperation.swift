import Foundation

/// An operation that works on one database (CloudKit's `CKDatabaseOperation`): fetching,
/// querying and changing records and zones, and reading change feeds.
///
/// Hand it to ``Database/add(_:)``, which sets ``database`` and runs it on the database's
/// queue, or to ``Container/add(_:)``, which runs it on the container's private database
/// unless ``database`` is set, as CloudKit does.
public class DatabaseOperation: CloudOperation, @unchecked Sendable {
    /// The database the operation works on; set by ``Database/add(_:)``.
    public var database: Database?

    override func run() {
        guard let database else {
            return finish(
                with: FogError(
                    .invalidArguments, message: "the operation has no database: add it with Database.add(_:) or set its database"))
        }
        guard !database.isClosed else {
            return finish(with: FogError(.internalError, message: "the container is closed"))
        }
        if keeper != nil { longLivedOperationWasPersistedBlock?() }
        execute(in: database)
    }

    /// Does the work and reports it through the callbacks. Subclasses override it.
    func execute(in database: Database) {}
}

extension Database {
    /// Runs `operation` on this database: sets its ``DatabaseOperation/database``
    /// and adds it to the database's operation queue.
    /// Inside `configuredWith(configuration:group:body:)`, the operation takes that call's
    /// configuration and group (see ``CloudOperation/effectiveConfiguration``).
    /// A long-lived operation (``CloudOperation/isLongLived``) is kept in the store before it
    /// is queued.
    public func add(_ operation: DatabaseOperation) {
        operation.database = self
        operation.prepareForAdding()
        operation.keepIfLongLived()
        operationQueue.addOperation(operation)
    }
}
