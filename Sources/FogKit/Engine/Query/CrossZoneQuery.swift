import FogStorage
import Foundation

extension QueryExecutor {
    /// Runs one batch of a query over every zone of the database (a query with no zone), in
    /// one read snapshot: CloudKit's rule for the public and private databases.
    ///
    /// Each zone's matches after the position are found as a query of that zone finds them
    /// (at most `limit`, in order, each with its order key), then the runs are merged by
    /// order key and the first `limit` kept. Order keys end with the row id, which is unique
    /// in the store, so the merged order is total and one position — the order key of the
    /// last record returned — continues every zone, including zones created since. A zone
    /// deleted since simply has no more records.
    ///
    /// The order is the query's sort descriptors (or the cursor's); without them it is the
    /// row order, the order in which records were first saved, across zones: the planner's
    /// own choice of order depends on each zone's data, so it cannot order several.
    ///
    /// - Throws: `invalidArguments` in the shared database, where a query needs a zone, and
    ///   as ``query(_:zoneID:after:desiredKeys:resultsLimit:context:mode:)``.
    func queryAllZones(
        _ query: Query, after: QueryCursorState?, desiredKeys: [String]?, resultsLimit: Int, context: DatabaseContext,
        mode: SchemaMode
    ) throws -> QueryBatch {
        guard resultsLimit >= 0 else {
            throw FogError(.invalidArguments, message: "resultsLimit is \(resultsLimit); it must be positive, or maximumResults (0)")
        }
        try access.check(.query, in: context)
        guard context.scope != .shared else {
            throw FogError(
                .invalidArguments,
                message: "a query in the shared database needs a zone: pass the ID of a zone shared with the user (inZoneWith:)")
        }
        try after?.checkHolder(user: context.user, scope: context.scope)
        _ = try context.injectFaults(
            .query, zones: (try? self.read { txn, _ in try self.zones.queryableZoneIDs(context: context, in: txn) }) ?? [],
            recordTypes: [query.recordType])
        let limit = resultsLimit == 0 ? EngineDefaults.queryBatchSize : resultsLimit
        let now = Date()
        let order = after?.order ?? (query.sortDescriptors ?? [])
        let position = after.map { [UInt8]($0.position) }
        let (page, advice) = try read { txn, names -> (QueryBatch, [IndexAdvice]) in
            var merged: [(match: QueryMatch, zoneID: RecordZone.ID)] = []
            var more = false
            var advice: [IndexAdvice] = []
            for (index, zoneID) in try zones.queryableZoneIDs(context: context, in: txn).enumerated() {
                let found = try zoneMatches(
                    query, zoneID: zoneID, order: order, after: position, desiredKeys: desiredKeys, limit: limit, everyKey: true,
                    context: context, mode: mode, now: now, txn: txn, names: &names)
                // One query: the indexes it lacks are counted once, not once per zone.
                if index == 0 { advice = found.advice }
                more = more || found.more
                merged += found.matches.map { ($0, zoneID) }
            }
            // Each zone's run is in order; keys are distinct (they end with the row id).
            merged.sort { $0.match.key.lexicographicallyPrecedes($1.match.key) }
            if merged.count > limit {
                more = true
                merged.removeLast(merged.count - limit)
            }
            var next: QueryCursorState?
            if more, let last = merged.last {
                next = QueryCursorState(
                    recordType: query.recordType, predicate: CursorPredicate(query.predicate), order: order,
                    zoneName: last.zoneID.zoneName, ownerName: last.zoneID.ownerName, position: Data(last.match.key),
                    holder: context.user ?? "", scope: context.scope.rawValue, allZones: true)
            }
            return (QueryBatch(records: merged.map(\.match.record), next: next), advice)
        }
        if mode == .development { indexes.advisor.record(advice) }
        return page
    }
}
