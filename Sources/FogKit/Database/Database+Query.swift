import Foundation

/// One batch of query results.
struct QueryPage: Sendable {
    var records: [Record]
    var cursor: QueryOperation.Cursor?

    /// The page of an engine batch: its records, and a cursor where it continues.
    init(_ batch: QueryBatch) {
        records = batch.records
        cursor = batch.next.map { QueryOperation.Cursor(state: $0) }
    }
}

extension Database {
    /// Runs a query and returns the first batch of matching records, in order, with a
    /// cursor for the next batch (`nil` when no more records match).
    ///
    /// - Parameters:
    ///   - query: The record type, predicate and sort order.
    ///   - zoneID: The zone to search; `nil` for every zone of the database, as in CloudKit:
    ///     in a private database the user's zones, merged into one result sequence in the
    ///     query's order (without sort descriptors, the order in which records were first
    ///     saved); the public database has only its default zone. The shared database needs
    ///     a zone.
    ///   - desiredKeys: The fields to fetch: `nil` for all, `[]` for none.
    ///   - resultsLimit: The most records to return;
    ///     ``QueryOperation/maximumResults`` lets FogKit choose
    ///     (``QueryOperation/defaultBatchSize``).
    /// - Returns: The matches as an ordered array of pairs (each result is a success in
    ///   FogKit) and the cursor.
    /// - Throws: ``FogError`` — `invalidArguments` for a predicate or sort that does not
    ///   fit the schema (a field of another type, a list compared with `==`, …) or that
    ///   needs an index the production environment lacks, and for a `nil` zone in the shared
    ///   database; `zoneNotFound`;
    ///   `unknownItem` for an unknown record type in production.
    public func records(
        matching query: Query, inZoneWith zoneID: RecordZone.ID? = nil, desiredKeys: [Record.FieldKey]? = nil,
        resultsLimit: Int = QueryOperation.maximumResults
    ) async throws -> (matchResults: [(Record.ID, Result<Record, any Error>)], queryCursor: QueryOperation.Cursor?) {
        let page = try runQuery(query, zoneID: zoneID, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        return (page.records.map { ($0.recordID, .success($0)) }, page.cursor)
    }

    /// Returns the next batch of a query from a cursor an earlier batch returned.
    ///
    /// - Throws: ``FogError`` as ``records(matching:inZoneWith:desiredKeys:resultsLimit:)``.
    public func records(
        continuingMatchFrom queryCursor: QueryOperation.Cursor, desiredKeys: [Record.FieldKey]? = nil,
        resultsLimit: Int = QueryOperation.maximumResults
    ) async throws -> (matchResults: [(Record.ID, Result<Record, any Error>)], queryCursor: QueryOperation.Cursor?) {
        let page = try runQuery(continuing: queryCursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
        return (page.records.map { ($0.recordID, .success($0)) }, page.cursor)
    }

    /// Runs a query and returns its first batch of records (CloudKit's deprecated
    /// `perform(_:inZoneWith:)`).
    @available(*, deprecated, renamed: "records(matching:inZoneWith:desiredKeys:resultsLimit:)")
    public func perform(_ query: Query, inZoneWith zoneID: RecordZone.ID?) async throws -> [Record] {
        try runQuery(query, zoneID: zoneID, desiredKeys: nil, resultsLimit: QueryOperation.maximumResults).records
    }

    /// How FogKit would run a query: the index or scan it reads, the conditions it checks
    /// on each record, how it orders the results, and the indexes it lacks.
    ///
    /// Explaining reads nothing but the schema and never fails for a missing index, so
    /// it also shows why a production query would fail. With no zone it explains the query
    /// in the default zone (a private database's query with no zone reads each of its zones
    /// that way, ordered by the sort descriptors or else by first save).
    ///
    /// - Throws: ``FogError`` with ``FogError/Code/invalidArguments`` when the predicate or
    ///   sort does not fit the schema; `zoneNotFound`.
    public func explain(
        _ query: Query, inZoneWith zoneID: RecordZone.ID? = nil, desiredKeys: [Record.FieldKey]? = nil,
        resultsLimit: Int = QueryOperation.maximumResults
    ) throws -> QueryPlan {
        try checkOpen()
        return try engine.queries.explain(
            query, zoneID: zoneID ?? .default, desiredKeys: desiredKeys, resultsLimit: resultsLimit, context: context,
            mode: environment.schemaMode)
    }

    func runQuery(_ query: Query, zoneID: RecordZone.ID?, desiredKeys: [Record.FieldKey]?, resultsLimit: Int) throws -> QueryPage {
        try checkOpen()
        // No zone: every zone. The public database has one, so its query stays a zone's query.
        if zoneID == nil, databaseScope != .public {
            return QueryPage(
                try engine.queries.queryAllZones(
                    query, after: nil, desiredKeys: desiredKeys, resultsLimit: resultsLimit, context: context,
                    mode: environment.schemaMode))
        }
        return QueryPage(
            try engine.queries.query(
                query, zoneID: zoneID ?? .default, after: nil, desiredKeys: desiredKeys, resultsLimit: resultsLimit,
                context: context, mode: environment.schemaMode))
    }

    func runQuery(continuing cursor: QueryOperation.Cursor, desiredKeys: [Record.FieldKey]?, resultsLimit: Int) throws -> QueryPage {
        try checkOpen()
        let query = try cursor.state.validated()
        if cursor.state.allZones == true {
            return QueryPage(
                try engine.queries.queryAllZones(
                    query, after: cursor.state, desiredKeys: desiredKeys, resultsLimit: resultsLimit, context: context,
                    mode: environment.schemaMode))
        }
        return QueryPage(
            try engine.queries.query(
                query, zoneID: cursor.state.zoneID, after: cursor.state, desiredKeys: desiredKeys, resultsLimit: resultsLimit,
                context: context, mode: environment.schemaMode))
    }
}
