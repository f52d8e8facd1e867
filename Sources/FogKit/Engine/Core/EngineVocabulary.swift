import Foundation

// The engine's own request vocabulary. The public API layer (`Container`, `Database`, the
// operations) translates its types into these at the boundary, so the engine never names
// a type of the layer above it. Values, IDs, records and errors (`FieldValue`, `Record`,
// `Record.ID`, `RecordZone.ID`, `Database.Scope`, `FogError`) are the data model both layers
// share.

/// Who is asking, and in which database.
struct DatabaseContext: Sendable {
    let scope: Database.Scope
    /// The user record name of the container's user, or `nil` for nobody (and for an
    /// account that cannot be used: see ``accountProblem``).
    var user: String?
    /// Why the signed-in account cannot be used (restricted, temporarily unavailable), or
    /// `nil`; then ``user`` is `nil` and the access policy answers with the problem's error
    /// for everything but public reads.
    var accountProblem: AccountProblem? = nil
    /// How long deletions stay in the zone change logs.
    var tombstoneRetention: TimeInterval = EngineDefaults.tombstoneRetention
    /// How long notifications stay for their listeners.
    var notificationRetention: TimeInterval = EngineDefaults.notificationRetention
    /// Which zones have change feeds.
    var feeds: FeedZones = .customZones
    /// The environment's schema rules: just-in-time types and fields, or none.
    var schemaMode: SchemaMode = .development
    /// The container's fault plan, asked by every request (`nil`: none is ever set).
    var faults: FaultInjector?
    /// The storage quotas saves are checked against (`Engine/Usage`).
    var quotas = StorageQuotas()
}

/// Which zones keep change feeds readers may use.
enum FeedZones: Sendable, Hashable {
    /// CloudKit's: custom zones of private (and shared) databases only.
    case customZones
    /// Every zone, default zones and the public database included.
    case everyZone
}

/// How a save treats the stored version of a record.
enum SavePolicy: Sendable, Hashable {
    /// Fails with `serverRecordChanged` unless the client's change tag is the stored one.
    case ifServerRecordUnchanged
    /// Writes the changed keys over the stored record.
    case changedKeys
    /// Writes every key of the client's record over the stored record.
    case allKeys
}

/// The most items and bytes of record data one modify request may hold, and the largest
/// asset file it may save.
struct RequestLimits: Sendable, Hashable {
    var maximumItems: Int
    var maximumBytes: Int
    /// The largest asset file a save copies, in bytes.
    var maximumAssetSize: Int = EngineDefaults.maximumAssetSize
}

/// The schema rules of an environment.
enum SchemaMode: Sendable, Hashable {
    /// Saves create record types and fields (with default indexes) just in time; a query
    /// without the index it needs scans, and records the missing index as advice.
    case development
    /// Saves of unknown record types and fields fail, and so do queries without the index
    /// they need, as in CloudKit's production environment.
    case production
}

/// One batch of query results, and where the next batch starts (`nil` when none).
struct QueryBatch: Sendable {
    var records: [Record]
    var next: QueryCursorState?
}

/// The engine's defaults, which the public API documents as its own.
enum EngineDefaults {
    /// How long tombstones stay in a zone's change log: 30 days.
    static let tombstoneRetention: TimeInterval = 30 * 86_400
    /// How long notifications are kept for listeners by default: 7 days.
    static let notificationRetention: TimeInterval = 7 * 86_400
    /// The largest asset file a save copies: 50 MB (50,000,000 bytes), CloudKit Web Services'
    /// published limit per asset file.
    static let maximumAssetSize = 50_000_000
    /// The most tombstones (or zone deletion events) one request prunes, unless it deletes
    /// more than half as many itself (then twice its own); the rest wait for the next request
    /// that deletes in the zone (or database).
    static let pruneBatchSize = 1_000
    /// Records in a query batch when the caller asks for the maximum (0).
    static let queryBatchSize = 100
    /// Changes in a change-feed page when the caller sets no limit.
    static let changePageSize = 400
    /// The fewest stale entries a zone's change log holds before a compaction pass starts
    /// (``LogCompaction``); past it, a pass starts once they are as many as the live entries.
    static let compactionMinimum = 1_024
    /// The fewest log entries a request examines while a compaction pass is under way.
    static let compactionChunk = 64
}
