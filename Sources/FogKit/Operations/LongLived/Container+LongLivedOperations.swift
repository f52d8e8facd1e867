import Foundation

extension Container {
    /// The IDs of the signed-in user's long-lived operations whose results have not been
    /// delivered yet, across restarts (CloudKit's `fetchAllLongLivedOperationIDs`).
    ///
    /// An operation is listed from the moment it is added with
    /// ``CloudOperation/isLongLived`` set until its result blocks have run. FogKit keeps
    /// ``ModifyRecordsOperation``, ``FetchRecordsOperation`` and ``QueryOperation``.
    ///
    /// - Throws: ``FogError`` — `notAuthenticated` for a container opened on behalf of nobody.
    public func fetchAllLongLivedOperationIDs() async throws -> [CloudOperation.ID] {
        try longLivedOperationIDs()
    }

    /// The completion-handler form of ``fetchAllLongLivedOperationIDs()``.
    public func fetchAllLongLivedOperationIDs(
        completionHandler: @escaping @Sendable ([CloudOperation.ID]?, (any Error)?) -> Void
    ) {
        completeLater({ try self.longLivedOperationIDs() }, pair: completionHandler)
    }

    /// A new instance of the long-lived operation `operationID`, of its original class, with
    /// its parameters, its ID and its database, or `nil` when no such operation is listed
    /// (CloudKit's `fetchLongLivedOperation(withID:)`).
    ///
    /// Set its callbacks and add it (``Container/add(_:)`` or ``Database/add(_:)``) to get its
    /// result. A ``ModifyRecordsOperation`` whose work had committed delivers the outcome it
    /// committed — the records as they were saved and the per-item errors — without saving
    /// again; one that had not committed does its work. Fetch and query operations run again.
    ///
    /// - Throws: ``FogError`` — `notAuthenticated` for a container opened on behalf of nobody.
    public func fetchLongLivedOperation(withID operationID: CloudOperation.ID) async throws -> CloudOperation? {
        try longLivedOperation(operationID)
    }

    /// The completion-handler form of ``fetchLongLivedOperation(withID:)``.
    public func fetchLongLivedOperation(
        withID operationID: CloudOperation.ID, completionHandler: @escaping @Sendable (CloudOperation?, (any Error)?) -> Void
    ) {
        completeLater(
            { try self.longLivedOperation(operationID) },
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

    private func longLivedOperationIDs() throws -> [CloudOperation.ID] {
        try engine.operations.operationIDs(user: try longLivedUser())
    }

    private func longLivedOperation(_ operationID: CloudOperation.ID) throws -> CloudOperation? {
        guard let stored = try engine.operations.operation(operationID, user: try longLivedUser()) else { return nil }
        do {
            return try LongLivedOperationCodec.operation(stored, operationID: operationID, container: self)
        } catch {
            throw FogError(
                .internalError, message: "long-lived operation \(operationID) does not decode: \(FogError.wrapping(error).message)")
        }
    }
}
