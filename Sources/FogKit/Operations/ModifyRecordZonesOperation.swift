import Foundation

/// Saves and deletes record zones (CloudKit's `CKModifyRecordZonesOperation`).
///
/// Callbacks, in order: ``perRecordZoneSaveBlock`` for each zone to save,
/// ``perRecordZoneDeleteBlock`` for each zone ID to delete, then
/// ``modifyRecordZonesResultBlock`` and the older ``modifyRecordZonesCompletionBlock``.
/// Any failed item makes the final result ``FogError/Code/partialFailure``.
public final class ModifyRecordZonesOperation: DatabaseOperation, @unchecked Sendable {
    /// The zones to save.
    public var recordZonesToSave: [RecordZone]?
    /// The IDs of the zones to delete, with all their records.
    public var recordZoneIDsToDelete: [RecordZone.ID]?

    /// Called for each zone to save with the stored zone or the item's error.
    public var perRecordZoneSaveBlock: ((RecordZone.ID, Result<RecordZone, any Error>) -> Void)?
    /// Called for each zone ID to delete with the item's outcome.
    public var perRecordZoneDeleteBlock: ((RecordZone.ID, Result<Void, any Error>) -> Void)?
    /// Called once at the end.
    public var modifyRecordZonesResultBlock: ((Result<Void, any Error>) -> Void)?
    /// The older final callback: saved zones, deleted zone IDs and the operation's error.
    @available(*, deprecated, renamed: "modifyRecordZonesResultBlock")
    public var modifyRecordZonesCompletionBlock: (([RecordZone]?, [RecordZone.ID]?, (any Error)?) -> Void)? {
        get { legacyCompletion }
        set { legacyCompletion = newValue }
    }

    private var legacyCompletion: (([RecordZone]?, [RecordZone.ID]?, (any Error)?) -> Void)?

    /// Creates an operation that saves and deletes zones.
    public convenience init(recordZonesToSave: [RecordZone]? = nil, recordZoneIDsToDelete: [RecordZone.ID]? = nil) {
        self.init()
        self.recordZonesToSave = recordZonesToSave
        self.recordZoneIDsToDelete = recordZoneIDsToDelete
    }

    override func execute(in database: Database) {
        let outcome: ZoneOutcome
        do {
            outcome = try database.engine.zones.modifyZonesAndWait(
                saving: recordZonesToSave ?? [], deleting: recordZoneIDsToDelete ?? [], context: database.context)
        } catch {
            return finish(with: FogError.wrapping(error))
        }
        var partial: [AnyHashable: any Error] = [:]
        var saved: [RecordZone] = []
        var deleted: [RecordZone.ID] = []
        for (id, result) in outcome.saves {
            switch result {
            case .success(let zone): saved.append(zone)
            case .failure(let error): partial[id] = error
            }
            perRecordZoneSaveBlock?(id, result.mapError { $0 })
        }
        for (id, result) in outcome.deletes {
            switch result {
            case .success: deleted.append(id)
            case .failure(let error): partial[id] = error
            }
            perRecordZoneDeleteBlock?(id, result.mapError { $0 })
        }
        let error: FogError? =
            partial.isEmpty
            ? nil : FogError(.partialFailure, message: "\(partial.count) zone changes failed", partialErrorsByItemID: partial)
        modifyRecordZonesResultBlock?(error.map { .failure($0) } ?? .success(()))
        legacyCompletion?(saved, deleted, error)
    }

    override func finish(with error: FogError) {
        for zone in recordZonesToSave ?? [] { perRecordZoneSaveBlock?(zone.zoneID, .failure(error)) }
        for id in recordZoneIDsToDelete ?? [] { perRecordZoneDeleteBlock?(id, .failure(error)) }
        modifyRecordZonesResultBlock?(.failure(error))
        legacyCompletion?(nil, nil, error)
    }
}
