import Foundation

extension Container {
    /// The IDs of the signed-in user's long-lived operations whose results have not been
    /// delivered yet, across restarts (CloudKit's `allLongLivedOperationIDs()`).
    ///
    /// An operation is listed from the moment it is added with
    /// ``CloudOperation/isLongLived`` set until its result blocks have run. FogKit keeps
    /// ``ModifyRecordsOperation``, ``FetchRecordsOperation`` and ``QueryOperation``.
    ///
    /// - Throws: ``FogError`` — `notAuthenticated` for a container opened on behalf of nobody.
    public func allLongLivedOperationIDs() async throws -> [CloudOperation.ID] {
        try storedOperationIDs()
    }

    /// The completion-handler form of ``allLongLivedOperationIDs()``.
    public func fetchAllLongLivedOperationIDs(
        completionHandler: @escaping @Sendable ([CloudOperation.ID]?, (any Error)?) -> Void
    ) {
        completeLater({ try self.storedOperationIDs() }, pair: completionHandler)
    }

    /// A new instance of the long-lived operation `operationID`, of its original class, with
    /// its parameters, its ID and its database (CloudKit's `longLivedOperation(for:)`).
    ///
    /// Set its callbacks and add it (``Container/add(_:)`` or ``Database/add(_:)``) to get its
    /// result. A ``ModifyRecordsOperation`` whose work had committed delivers the outcome it
    /// committed — the records as they were saved and the per-item errors — without saving
    /// again; one that had not committed does its work. Fetch and query operations run again.
    ///
    /// - Throws: ``FogError`` — `unknownItem` when no such operation is listed for the user
    ///   (another user's included); `notAuthenticated` for a container opened on behalf of
    ///   nobody.
    public func longLivedOperation(for operationID: CloudOperation.ID) async throws -> CloudOperation {
        try storedOperation(operationID)
    }

    /// The completion-handler form of ``longLivedOperation(for:)`` (CloudKit's
    /// `fetchLongLivedOperation(withID:completionHandler:)`).
    public func fetchLongLivedOperation(
        withID operationID: CloudOperation.ID, completionHandler: @escaping @Sendable (CloudOperation?, (any Error)?) -> Void
    ) {
        completeLater(
            { try self.storedOperation(operationID) },
            { result in
                switch result {
                case .success(let operation): completionHandler(operation, nil)
                case .failure(let error): completionHandler(nil, error)
                }
            })
    }

    private func longLivedUser() throws -> String {
        try privateCloudDatabase.checkOpen()
        let context = privateCloudDatabase.context
        try engine.access.check(.longLivedOperations, in: context)
        guard let user = context.user else {
            throw FogError(.internalError, message: "the access policy let nobody have long-lived operations")
        }
        return user
    }

    private func storedOperationIDs() throws -> [CloudOperation.ID] {
        try engine.operations.operationIDs(user: try longLivedUser())
    }

    private func storedOperation(_ operationID: CloudOperation.ID) throws -> CloudOperation {
        guard let stored = try engine.operations.operation(operationID, user: try longLivedUser()) else {
            throw FogError(.unknownItem, message: "no long-lived operation \(operationID) is listed for this user")
        }
        let operation: DatabaseOperation?
        do {
            operation = try LongLivedOperationCodec.operation(stored, operationID: operationID, container: self)
        } catch {
            throw FogError(
                .internalError, message: "long-lived operation \(operationID) does not decode: \(FogError.wrapping(error).message)")
        }
        // A kind this FogKit does not know (written by a newer one) cannot be rebuilt.
        guard let operation else {
            throw FogError(.unknownItem, message: "long-lived operation \(operationID) is of a kind this FogKit does not know")
        }
        return operation
    }
}
