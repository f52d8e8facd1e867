import Foundation

/// Runs a query, or continues one from a cursor (CloudKit's `CKQueryOperation`).
///
/// Callbacks, in order: ``recordMatchedBlock`` (and the older ``recordFetchedBlock``) for
/// each matching record, in the query's sort order; then ``queryResultBlock`` (and the older
/// ``queryCompletionBlock``) with a cursor when more records may match, or `nil` when the
/// query is done. Fewer than ``resultsLimit`` records does not by itself mean the end: only
/// a `nil` cursor does.
///
/// ```swift
/// let operation = QueryOperation(query: query)
/// operation.desiredKeys = ["title"]
/// operation.resultsLimit = 50
/// operation.recordMatchedBlock = { id, result in … }
/// operation.queryResultBlock = { result in … }
/// database.add(operation)
/// ```
public final class QueryOperation: DatabaseOperation, @unchecked Sendable {
    /// The sentinel ``resultsLimit`` that lets FogKit choose the batch size (CloudKit's
    /// `CKQueryOperation.maximumResults`, `0`). FogKit returns up to
    /// ``defaultBatchSize`` records per batch for it.
    public static let maximumResults = 0

    /// The number of records a batch holds when ``resultsLimit`` is ``maximumResults``: 100,
    /// as developers observe from CloudKit.
    public static let defaultBatchSize = EngineDefaults.queryBatchSize

    /// The query to run; ignored when ``cursor`` is set.
    public var query: Query?
    /// The cursor to continue from; when set, the query and zone come from it.
    public var cursor: Cursor?
    /// The zone to search; `nil` for every zone of the database (the shared database needs
    /// a zone), as ``Database/records(matching:inZoneWith:desiredKeys:resultsLimit:)``
    /// describes. Ignored for cursors.
    public var zoneID: RecordZone.ID?
    /// The fields to fetch: `nil` for all, `[]` for none (system fields only).
    public var desiredKeys: [Record.FieldKey]?
    /// The most records to return in this batch; ``maximumResults`` lets FogKit choose.
    public var resultsLimit: Int = QueryOperation.maximumResults

    /// Called for each matching record, in order.
    public var recordMatchedBlock: ((Record.ID, Result<Record, any Error>) -> Void)?
    /// Called once at the end with the cursor for the next batch (`nil` when done) or the
    /// operation's error.
    public var queryResultBlock: ((Result<Cursor?, any Error>) -> Void)?
    /// The older per-record callback.
    @available(*, deprecated, renamed: "recordMatchedBlock")
    public var recordFetchedBlock: ((Record) -> Void)? {
        get { legacyFetched }
        set { legacyFetched = newValue }
    }
    /// The older final callback.
    @available(*, deprecated, renamed: "queryResultBlock")
    public var queryCompletionBlock: ((Cursor?, (any Error)?) -> Void)? {
        get { legacyCompletion }
        set { legacyCompletion = newValue }
    }

    private var legacyFetched: ((Record) -> Void)?
    private var legacyCompletion: ((Cursor?, (any Error)?) -> Void)?

    /// Creates an operation that runs `query`.
    public convenience init(query: Query) {
        self.init()
        self.query = query
    }

    /// Creates an operation that continues from `cursor`.
    public convenience init(cursor: Cursor) {
        self.init()
        self.cursor = cursor
    }

    override func execute(in database: Database) {
        let page: QueryPage
        do {
            if let cursor {
                page = try database.runQuery(continuing: cursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
            } else if let query {
                page = try database.runQuery(query, zoneID: zoneID, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
            } else {
                return finish(with: FogError(.invalidArguments, message: "the query operation has neither a query nor a cursor"))
            }
        } catch {
            return finish(with: FogError.wrapping(error))
        }
        for record in page.records {
            if isCancelled { return finish(with: cancellationError()) }
            recordMatchedBlock?(record.recordID, .success(record))
            legacyFetched?(record)
        }
        queryResultBlock?(.success(page.cursor))
        legacyCompletion?(page.cursor, nil)
    }

    override func finish(with error: FogError) {
        queryResultBlock?(.failure(error))
        legacyCompletion?(nil, error)
    }
}
