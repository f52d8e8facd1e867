/// The indexes a field of a record type has: CloudKit's `QUERYABLE`, `SORTABLE` and
/// `SEARCHABLE` field options.
///
/// Declare them with ``Container/Administrator/setIndexes(_:forField:ofRecordType:)``. Which index a query
/// needs follows CloudKit:
///
/// | option | serves |
/// |---|---|
/// | ``queryable`` | `==`, `!=`, `IN`, list membership (`CONTAINS`, `ANY … =`), references |
/// | ``sortable`` | `<`, `<=`, `>`, `>=`, `BETWEEN`, `BEGINSWITH`, sort descriptors |
/// | ``searchable`` | token search (`self CONTAINS`, `allTokens TOKENMATCHES[cdl]`), string fields |
///
/// A location field with either ``queryable`` or ``sortable`` gets a location index, which
/// serves `distanceToLocation:fromLocation:` and location sort descriptors.
///
/// In the ``Container/Environment/development`` environment a query on a field without the
/// index it needs still runs, as a scan, and is counted by ``Container/Administrator/indexAdvice()``; in
/// ``Container/Environment/production`` it fails with ``FogError/Code/invalidArguments``.
public struct IndexOptions: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The raw bits (1 queryable, 2 sortable, 4 searchable); stored on disk.
    public let rawValue: UInt8

    /// Creates options from their raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// An equality index (`QUERYABLE`).
    public static let queryable = IndexOptions(rawValue: 1)
    /// An ordered index for ranges and sorting (`SORTABLE`).
    public static let sortable = IndexOptions(rawValue: 2)
    /// A full-text token index for strings (`SEARCHABLE`).
    public static let searchable = IndexOptions(rawValue: 4)

    /// The options as CloudKit's schema language writes them, such as `QUERYABLE SORTABLE`
    /// (empty for none).
    public var description: String {
        var words: [String] = []
        if contains(.queryable) { words.append("QUERYABLE") }
        if contains(.sortable) { words.append("SORTABLE") }
        if contains(.searchable) { words.append("SEARCHABLE") }
        return words.joined(separator: " ")
    }
}

/// A query that ran without the index it needed, counted in the development environment.
///
/// ``Container/Administrator/indexAdvice()`` lists them, most frequent first, so you can declare the
/// indexes before switching to the production environment.
public struct IndexAdvice: Sendable, Hashable, CustomStringConvertible {
    /// The record type queried.
    public let recordType: Record.RecordType
    /// The field to pass to ``Container/Administrator/setIndexes(_:forField:ofRecordType:)``: a field,
    /// `recordName` for the record ID (which queries without a condition, and conditions on
    /// `recordID`, need), or `self` for a token search when no field of the type is
    /// searchable (mark a string field ``IndexOptions/searchable``).
    public let field: Record.FieldKey
    /// The options the field lacked.
    public let options: IndexOptions
    /// How many queries ran without it since the container opened.
    public let queryCount: Int

    /// Creates advice (for tests and tools).
    public init(recordType: Record.RecordType, field: Record.FieldKey, options: IndexOptions, queryCount: Int) {
        self.recordType = recordType
        self.field = field
        self.options = options
        self.queryCount = queryCount
    }

    /// `Post.score: QUERYABLE (12 queries)`.
    public var description: String { "\(recordType).\(field): \(options) (\(queryCount) queries)" }
}

/// Whether a declared index can serve queries yet
/// (``Container/Administrator/indexStates(ofRecordType:)``).
///
/// An index declared on a record type that already has records is built for them in
/// chunks. Until the build is complete, a query that needs the index is answered as if the
/// index did not exist: in ``Container/Environment/production`` it fails with
/// ``FogError/Code/invalidArguments``, never with partial results.
public enum IndexState: Sendable, Hashable, CustomStringConvertible {
    /// The entries of every record are there; queries use the index.
    case ready
    /// The index is being built: the records up to the row `lastRowDone` (an internal,
    /// increasing position) have their entries; queries do not use it yet.
    case building(lastRowDone: Int64)

    public var description: String {
        switch self {
        case .ready: "ready"
        case .building(let row): "building (row \(row) done)"
        }
    }
}
