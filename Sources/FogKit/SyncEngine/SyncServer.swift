import Foundation

/// The server side a ``SyncEngine`` talks to: the few requests it makes, in FogKit's public
/// vocabulary. The engine knows nothing else of where the database is.
///
/// ``LocalSyncServer`` answers them from a ``Database`` of a container in this process,
/// through its public API only. The HTTP server issue gives the engine a transport by
/// implementing this protocol over CloudKit Web Services' requests (`changes/database`,
/// `changes/zone`, `records/modify`, `zones/modify`, `subscriptions/modify`, the
/// notification long poll, `users/current`): nothing in the engine changes.
protocol SyncServer: Sendable {
    /// The scope of the database the engine syncs.
    var databaseScope: Database.Scope { get }

    /// The account's status.
    func accountStatus() async throws -> AccountStatus
    /// The signed-in user's record ID.
    func userRecordID() async throws -> Record.ID
    /// The statuses after each change of the signed-in account, from now on.
    func accountChanges() -> AsyncStream<AccountStatus>

    /// One page of the database's zone changes since `token`.
    func databaseChanges(
        since token: ServerChangeToken?, group: OperationGroup
    ) async throws -> (
        modifications: [Database.DatabaseChange.Modification], deletions: [Database.DatabaseChange.Deletion],
        changeToken: ServerChangeToken, moreComing: Bool
    )
    /// One page of a zone's record changes since `token`.
    func recordZoneChanges(
        in zoneID: RecordZone.ID, since token: ServerChangeToken?, group: OperationGroup
    ) async throws -> (
        modifications: [Database.RecordZoneChange.Modification], deletions: [Database.RecordZoneChange.Deletion],
        changeToken: ServerChangeToken, moreComing: Bool
    )
    /// Saves and deletes zones, each with its own result.
    func modifyRecordZones(
        saving zones: [RecordZone], deleting zoneIDs: [RecordZone.ID], group: OperationGroup
    ) async throws -> (saveResults: [RecordZone.ID: Result<RecordZone, FogError>], deleteResults: [RecordZone.ID: Result<Void, FogError>])
    /// Saves (under `ifServerRecordUnchanged`) and deletes records, each with its own result;
    /// with `atomicByZone` the changes of each zone are applied all or nothing.
    func modifyRecords(
        saving records: [Record], deleting recordIDs: [Record.ID], atomicByZone: Bool, group: OperationGroup
    ) async throws -> (saveResults: [Record.ID: Result<Record, FogError>], deleteResults: [Record.ID: Result<Void, FogError>])
    /// Makes sure the database subscription exists: `id`, or an existing database
    /// subscription, or a new one named `defaultID`. Returns its ID.
    func ensureDatabaseSubscription(id: Subscription.ID?, defaultID: Subscription.ID) async throws -> Subscription.ID
    /// The user's notifications for `listener`, as they arrive.
    func notifications(listener: String) throws -> Container.Notifications
    /// Records that `listener` handled every notification through `id`.
    func acknowledgeNotifications(through id: CloudNotification.ID, listener: String) async throws
}

/// A ``SyncServer`` over a ``Database`` of a container in this process, using its public
/// API only (the container's, for the account and the notifications).
struct LocalSyncServer: SyncServer {
    let database: Database

    var databaseScope: Database.Scope { database.databaseScope }

    /// The container that made the database.
    private func container() throws -> Container {
        guard let container = database.link.container else {
            throw FogError(.internalError, message: "the container of the sync engine's database was released")
        }
        return container
    }

    func accountStatus() async throws -> AccountStatus { try await container().accountStatus() }

    func userRecordID() async throws -> Record.ID { try await container().userRecordID() }

    func accountChanges() -> AsyncStream<AccountStatus> {
        guard let container = database.link.container else { return AsyncStream { $0.finish() } }
        return container.accountChanges
    }

    func databaseChanges(
        since token: ServerChangeToken?, group: OperationGroup
    ) async throws -> (
        modifications: [Database.DatabaseChange.Modification], deletions: [Database.DatabaseChange.Deletion],
        changeToken: ServerChangeToken, moreComing: Bool
    ) {
        try await database.configuredWith(group: group) { try await $0.databaseChanges(since: token) }
    }

    func recordZoneChanges(
        in zoneID: RecordZone.ID, since token: ServerChangeToken?, group: OperationGroup
    ) async throws -> (
        modifications: [Database.RecordZoneChange.Modification], deletions: [Database.RecordZoneChange.Deletion],
        changeToken: ServerChangeToken, moreComing: Bool
    ) {
        let page = try await database.configuredWith(group: group) { try await $0.recordZoneChanges(inZoneWith: zoneID, since: token) }
        var modifications: [Database.RecordZoneChange.Modification] = []
        for (_, result) in page.modificationResultsByID {
            // A record the feed could not read is fetched again next time.
            if case .success(let modification) = result { modifications.append(modification) }
        }
        // Oldest first, as CloudKit usually delivers them.
        modifications.sort { ($0.record.modificationDate ?? .distantPast) < ($1.record.modificationDate ?? .distantPast) }
        return (modifications, page.deletions, page.changeToken, page.moreComing)
    }

    func modifyRecordZones(
        saving zones: [RecordZone], deleting zoneIDs: [RecordZone.ID], group: OperationGroup
    ) async throws -> (saveResults: [RecordZone.ID: Result<RecordZone, FogError>], deleteResults: [RecordZone.ID: Result<Void, FogError>]) {
        let result = try await database.configuredWith(group: group) { try await $0.modifyRecordZones(saving: zones, deleting: zoneIDs) }
        return (
            result.saveResults.mapValues { $0.mapError(FogError.wrapping) },
            result.deleteResults.mapValues { $0.mapError(FogError.wrapping) }
        )
    }

    func modifyRecords(
        saving records: [Record], deleting recordIDs: [Record.ID], atomicByZone: Bool, group: OperationGroup
    ) async throws -> (saveResults: [Record.ID: Result<Record, FogError>], deleteResults: [Record.ID: Result<Void, FogError>]) {
        do {
            let result = try await database.configuredWith(group: group) {
                try await $0.modifyRecords(
                    saving: records, deleting: recordIDs, savePolicy: .ifServerRecordUnchanged, atomically: atomicByZone)
            }
            return (
                result.saveResults.mapValues { $0.mapError(FogError.wrapping) },
                result.deleteResults.mapValues { $0.mapError(FogError.wrapping) }
            )
        } catch let error as FogError where error.code == .partialFailure {
            // An atomic request reports only the failures: the other changes were applied
            // (in the zones where nothing failed); read back what was saved.
            let failures = error.partialErrorsByItemID ?? [:]
            var saves: [Record.ID: Result<Record, FogError>] = [:]
            var deletes: [Record.ID: Result<Void, FogError>] = [:]
            var saved: [Record.ID] = []
            for record in records {
                if let failure = failures[record.recordID] {
                    saves[record.recordID] = .failure(FogError.wrapping(failure))
                } else {
                    saved.append(record.recordID)
                }
            }
            for id in recordIDs {
                deletes[id] = failures[id].map { .failure(FogError.wrapping($0)) } ?? .success(())
            }
            if !saved.isEmpty {
                for (id, result) in try await database.records(for: saved) { saves[id] = result.mapError(FogError.wrapping) }
            }
            return (saves, deletes)
        }
    }

    func ensureDatabaseSubscription(id: Subscription.ID?, defaultID: Subscription.ID) async throws -> Subscription.ID {
        if let id {
            if (try? await database.subscription(for: id)) != nil { return id }
            return try await database.save(DatabaseSubscription(subscriptionID: id)).subscriptionID
        }
        if let existing = try await database.allSubscriptions().first(where: { $0.subscriptionType == .database }) {
            return existing.subscriptionID
        }
        return try await database.save(DatabaseSubscription(subscriptionID: defaultID)).subscriptionID
    }

    func notifications(listener: String) throws -> Container.Notifications { try container().notifications(listener: listener) }

    func acknowledgeNotifications(through id: CloudNotification.ID, listener: String) async throws {
        try await container().acknowledgeNotifications(through: id, listener: listener)
    }
}
