import Foundation

/// Fetches records by ID (CloudKit's `CKFetchRecordsOperation`).
///
/// Callbacks, in order: for each ID, ``perRecordProgressBlock`` (1.0), then
/// ``perRecordResultBlock`` and the older ``perRecordCompletionBlock``; then
/// ``fetchRecordsResultBlock`` and the older ``fetchRecordsCompletionBlock``.
/// Missing records fail with ``FogError/Code/unknownItem`` each, and the
/// operation with ``FogError/Code/partialFailure``.
public final class FetchRecordsOperation: DatabaseOperation, @unchecked Sendable {
    /// The IDs of the records to fetch.
    public var recordIDs: [Record.ID]?
    /// The fields to fetch: `nil` for all, `[]` for none (system fields only).
    public var desiredKeys: [Record.FieldKey]?

    /// Called for each ID with its progress (FogKit reports 1.0 once the record is read).
    public var perRecordProgressBlock: ((Record.ID, Double) -> Void)?
    /// Called for each ID with the record or the item's error.
    public var perRecordResultBlock: ((Record.ID, Result<Record, any Error>) -> Void)?
    /// Called once at the end.
    public var fetchRecordsResultBlock: ((Result<Void, any Error>) -> Void)?
    /// The older per-record callback.
    @available(*, deprecated, renamed: "perRecordResultBlock")
    public var perRecordCompletionBlock: ((Record?, Record.ID?, (any Error)?) -> Void)? {
        get { legacyPerRecord }
        set { legacyPerRecord = newValue }
    }
    /// The older final callback: the fetched records by ID and the operation's error.
    @available(*, deprecated, renamed: "fetchRecordsResultBlock")
    public var fetchRecordsCompletionBlock: (([Record.ID: Record]?, (any Error)?) -> Void)? {
        get { legacyCompletion }
        set { legacyCompletion = newValue }
    }

    private var legacyPerRecord: ((Record?, Record.ID?, (any Error)?) -> Void)?
    private var legacyCompletion: (([Record.ID: Record]?, (any Error)?) -> Void)?

    /// Whether the operation fetches the current user's record instead of ``recordIDs``.
    private var fetchesCurrentUserRecord = false

    /// An operation that fetches the current user's record (type `Users`) from its
    /// database. Fails with ``FogError/Code/notAuthenticated`` for nobody.
    public static func fetchCurrentUserRecordOperation() -> FetchRecordsOperation {
        let operation = FetchRecordsOperation()
        operation.fetchesCurrentUserRecord = true
        return operation
    }

    /// Creates an operation that fetches the records with `recordIDs`.
    public convenience init(recordIDs: [Record.ID]) {
        self.init()
        self.recordIDs = recordIDs
    }

    override func execute(in database: Database) {
        let context = database.context
        if fetchesCurrentUserRecord {
            do {
                try database.engine.access.check(.currentUser, in: context)
            } catch {
                return finish(with: error)
            }
            recordIDs = context.user.map { [Record.ID(recordName: $0)] } ?? []
        }
        let ids = recordIDs ?? []
        let results: [(Record.ID, Result<Record, FogError>)]
        do {
            results = try database.engine.reader.fetch(ids, desiredKeys: desiredKeys, context: context)
        } catch {
            return finish(with: FogError.wrapping(error))
        }
        var partial: [AnyHashable: any Error] = [:]
        var fetched: [Record.ID: Record] = [:]
        for (id, result) in results {
            perRecordProgressBlock?(id, 1.0)
            switch result {
            case .success(let record):
                fetched[id] = record
                legacyPerRecord?(record, id, nil)
            case .failure(let error):
                partial[id] = error
                legacyPerRecord?(nil, id, error)
            }
            perRecordResultBlock?(id, result.mapError { $0 })
        }
        let error: FogError? =
            partial.isEmpty
            ? nil
            : FogError(
                .partialFailure, message: "\(partial.count) of \(ids.count) records could not be fetched", partialErrorsByItemID: partial)
        fetchRecordsResultBlock?(error.map { .failure($0) } ?? .success(()))
        legacyCompletion?(fetched, error)
    }

    override func finish(with error: FogError) {
        for id in recordIDs ?? [] {
            perRecordResultBlock?(id, .failure(error))
            legacyPerRecord?(nil, id, error)
        }
        fetchRecordsResultBlock?(.failure(error))
        legacyCompletion?(nil, error)
    }
}
