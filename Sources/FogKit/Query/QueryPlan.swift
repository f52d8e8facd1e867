/// How FogKit runs a query, from ``Database/explain(_:inZoneWith:desiredKeys:resultsLimit:)``
/// and `fog query --explain`.
///
/// ```
/// query Post in _defaultZone (development)
///   access: index Post.author == "a17" (1 key)
///   filter: author == "a17"
///   order:  -createdAt, in memory (best 50 kept)
///   fields: author, createdAt, title
/// ```
public struct QueryPlan: Sendable, Hashable, CustomStringConvertible {
    /// How the records are found: the index and keys read, or a scan of the record type.
    public let access: String
    /// The conditions checked on each record read: the whole predicate, so results never
    /// depend on which index was chosen — or none when the index range read holds exactly
    /// the matches (one range condition on an INT64 field with INT64 bounds, read from that
    /// field's sortable index).
    public let filter: String
    /// How the results are ordered: by the index read, or in memory (with a top-K heap when
    /// the batch is limited).
    public let order: String
    /// The fields decoded for each record: the predicate's, the sort's and the desired keys.
    public let fields: String
    /// Whether the plan reads every record of the type in the zone.
    public let scansRecordType: Bool
    /// Whether an index delivers the records in the requested order.
    public let indexProvidesOrder: Bool
    /// The indexes the query lacks: what the production environment would refuse and the
    /// development environment counts in ``Container/Administrator/indexAdvice()``.
    public let missingIndexes: [IndexAdvice]
    /// The first line: the record type and zone.
    public let header: String

    /// The plan as indented lines, as `fog query --explain` prints it.
    public var description: String {
        var lines = [header, "  access: \(access)", "  filter: \(filter)", "  order:  \(order)", "  fields: \(fields)"]
        for missing in missingIndexes {
            lines.append("  missing index: \(missing.recordType).\(missing.field) \(missing.options)")
        }
        return lines.joined(separator: "\n")
    }
}
