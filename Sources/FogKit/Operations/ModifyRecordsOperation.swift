import Foundation

/// Saves and deletes records (CloudKit's `CKModifyRecordsOperation`).
///
/// Callbacks, in order: for each record to save, ``perRecordProgressBlock`` (1.0),
/// then ``perRecordSaveBlock`` and the older ``perRecordCompletionBlock``; for each
/// ID to delete, ``perRecordDeleteBlock``; then ``modifyRecordsResultBlock`` and the
/// older ``modifyRecordsCompletionBlock``. Any failed item makes the final result
/// ``FogError/Code/partialFailure`` with the item errors in
/// ``FogError/partialErrorsByItemID``. A whole-request failure (no user, more than
/// the limits allow, cancellation) is reported to every per-item block and to the
/// final blocks.
public final class ModifyRecordsOperation: DatabaseOperation, @unchecked Sendable {
    /// The save policy (CloudKit's `CKModifyRecordsOperation.RecordSavePolicy`).
    public typealias RecordSavePolicy = FogKit.RecordSavePolicy

    /// The records to save.
    public var recordsToSave: [Record]?
    /// The IDs of the records to delete.
    public var recordIDsToDelete: [Record.ID]?
    /// How saves treat stored versions; ``RecordSavePolicy/ifServerRecordUnchanged`` by default.
    public var savePolicy: RecordSavePolicy = .ifServerRecordUnchanged
    /// Whether each atomic zone's changes apply all or nothing; `true` by default.
    public var isAtomic = true
    /// An opaque token the store keeps per zone and echoes in change feeds; at most
    /// ``maximumClientChangeTokenDataSize`` bytes, or the operation fails with
    /// ``FogError/Code/limitExceeded``.
    public var clientChangeTokenData: Data?

    /// The largest ``clientChangeTokenData``: 65,536 bytes. CloudKit documents no limit; a
    /// token is meant to be small (a counter or an identifier), and the store keeps one per zone.
    public static let maximumClientChangeTokenDataSize = Validation.maximumClientChangeTokenDataSize

    /// Called with each record to save and its progress (FogKit reports 1.0 once the record is processed).
    public var perRecordProgressBlock: ((Record, Double) -> Void)?
    /// Called for each record to save with the stored record or the item's error.
    public var perRecordSaveBlock: ((Record.ID, Result<Record, any Error>) -> Void)?
    /// Called for each record ID to delete with the item's outcome.
    public var perRecordDeleteBlock: ((Record.ID, Result<Void, any Error>) -> Void)?
    /// Called once at the end.
    public var modifyRecordsResultBlock: ((Result<Void, any Error>) -> Void)?
    /// The older per-record callback: the record (stored copy on success) and its error.
    @available(*, deprecated, renamed: "perRecordSaveBlock")
    public var perRecordCompletionBlock: ((Record, (any Error)?) -> Void)? {
        get { legacyPerRecord }
        set { legacyPerRecord = newValue }
    }
    /// The older final callback: saved records, deleted IDs and the operation's error.
    @available(*, deprecated, renamed: "modifyRecordsResultBlock")
    public var modifyRecordsCompletionBlock: (([Record]?, [Record.ID]?, (any Error)?) -> Void)? {
        get { legacyCompletion }
        set { legacyCompletion = newValue }
    }

    private var legacyPerRecord: ((Record, (any Error)?) -> Void)?
    private var legacyCompletion: (([Record]?, [Record.ID]?, (any Error)?) -> Void)?

    /// Creates an operation that saves `recordsToSave` and deletes `recordIDsToDelete`.
    public convenience init(recordsToSave: [Record]? = nil, recordIDsToDelete: [Record.ID]? = nil) {
        self.init()
        self.recordsToSave = recordsToSave
        self.recordIDsToDelete = recordIDsToDelete
    }

    override func execute(in database: Database) {
        let saves = recordsToSave ?? []
        let deletes = recordIDsToDelete ?? []
        let outcome: ModifyOutcome
        do {
            if let keeper, let kept = try keeper.stored(operationID)?.outcome {
                // Long-lived, and its work committed before: deliver that outcome, do not redo it.
                outcome = try LongLivedOperationCodec.decodeOutcome(kept)
            } else {
                // Long-lived: the outcome is kept in the transaction that commits the work.
                let keepOutcome = keeper.map {
                    $0.engine.operations.outcomeWriter(operationID: operationID, user: $0.user, encode: LongLivedOperationCodec.encode)
                }
                outcome = try database.engine.writer.modifyAndWait(
                    saving: saves, deleting: deletes, policy: savePolicy.savePolicy, atomic: isAtomic, limits: database.limits,
                    context: database.context, clientChangeTokenData: clientChangeTokenData, alsoWrite: keepOutcome)
            }
        } catch {
            return finish(with: FogError.wrapping(error))
        }
        var partial: [AnyHashable: any Error] = [:]
        var saved: [Record] = []
        for (record, (id, result)) in zip(saves, outcome.saveResults) {
            perRecordProgressBlock?(record, 1.0)
            switch result {
            case .success(let stored):
                saved.append(stored)
                perRecordSaveBlock?(id, .success(stored))
                legacyPerRecord?(stored, nil)
            case .failure(let error):
                partial[id] = error
                perRecordSaveBlock?(id, .failure(error))
                legacyPerRecord?(record, error)
            }
        }
        var deleted: [Record.ID] = []
        for (id, result) in outcome.deleteResults {
            switch result {
            case .success: deleted.append(id)
            case .failure(let error): partial[id] = error
            }
            perRecordDeleteBlock?(id, result.mapError { $0 })
        }
        let error: FogError? =
            partial.isEmpty
            ? nil
            : FogError(
                .partialFailure, message: "\(partial.count) of \(saves.count + deletes.count) changes failed",
                partialErrorsByItemID: partial)
        modifyRecordsResultBlock?(error.map { .failure($0) } ?? .success(()))
        legacyCompletion?(saved, deleted, error)
    }

    override func finish(with error: FogError) {
        for record in recordsToSave ?? [] {
            perRecordSaveBlock?(record.recordID, .failure(error))
            legacyPerRecord?(record, error)
        }
        for id in recordIDsToDelete ?? [] { perRecordDeleteBlock?(id, .failure(error)) }
        modifyRecordsResultBlock?(.failure(error))
        legacyCompletion?(nil, nil, error)
    }
}
