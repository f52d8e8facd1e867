import Foundation

/// Where a long-lived operation is kept: the store and the user it belongs to
/// (``CloudOperation/isLongLived``).
struct LongLivedKeeper: Sendable {
    let engine: StoreEngine
    let user: String
    /// Set when the container closes: a closed store keeps the operation as it is.
    let closed: ClosedFlag

    /// The stored form of the operation `operationID`, or `nil`.
    func stored(_ operationID: String) throws -> StoredOperation? {
        if closed.isSet { throw FogError(.internalError, message: "the container is closed") }
        return try engine.operations.operation(operationID, user: user)
    }

    /// Forgets the operation `operationID`: its result was delivered.
    func forget(_ operationID: String) throws {
        if closed.isSet { throw FogError(.internalError, message: "the container is closed") }
        try engine.operations.remove(operationID, user: user)
    }
}

extension DatabaseOperation {
    /// Keeps the operation in the store when it is long-lived (its
    /// ``CloudOperation/effectiveConfiguration`` says so) and of a kind FogKit keeps; called
    /// when it is added, before it runs. An operation that cannot be kept (no signed-in user,
    /// a closed store) runs as an ordinary one, as CloudKit runs one that has no account.
    func keepIfLongLived() {
        guard keeper == nil, effectiveConfiguration.isLongLived, let database, !database.isClosed,
            let (kind, parameters) = try? LongLivedOperationCodec.parameters(of: self)
        else { return }
        do {
            try database.engine.access.check(.longLivedOperations, in: database.context)
            guard let user = database.context.user else { return }
            let stored = StoredOperation(kind: kind, scope: database.databaseScope.rawValue, parameters: parameters)
            try database.engine.operations.persist(stored, operationID: operationID, user: user)
            keeper = LongLivedKeeper(engine: database.engine, user: user, closed: database.closedFlag)
        } catch {
            return
        }
    }
}
