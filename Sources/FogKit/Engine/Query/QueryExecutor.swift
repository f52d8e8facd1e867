import FogStorage
import Foundation
import HeapModule

/// Runs queries: ``prepare(_:fixedOrder:zone:desiredKeys:now:txn:names:)`` (in
/// `QueryPlanner.swift`) analyses the predicate and picks an access path, then a ``QueryRun``
/// reads the candidates, tests each against the whole predicate, and orders the matches.
final class QueryExecutor<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    let records: RecordStore<Store>
    let indexes: IndexStore<Store>
    let zones: ZoneDirectory<Store>

    init(core: EngineCore<Store>, records: RecordStore<Store>, indexes: IndexStore<Store>, zones: ZoneDirectory<Store>) {
        self.core = core
        self.records = records
        self.indexes = indexes
        self.zones = zones
    }

    /// Runs one batch of a query in one read snapshot.
    ///
    /// - Parameter after: The cursor to continue from, or `nil` for the first batch.
    func query(
        _ query: Query, zoneID: RecordZone.ID, after: QueryCursorState?, desiredKeys: [String]?, resultsLimit: Int,
        context: DatabaseContext, mode: SchemaMode
    ) throws -> QueryBatch {
        guard resultsLimit >= 0 else {
            throw FogError(.invalidArguments, message: "resultsLimit is \(resultsLimit); it must be positive, or maximumResults (0)")
        }
        try access.check(.query, in: context)
        try after?.checkHolder(user: context.user, scope: context.scope)
        _ = try context.injectFaults(.query, zones: [zoneID], recordTypes: [query.recordType])
        let limit = resultsLimit == 0 ? EngineDefaults.queryBatchSize : resultsLimit
        let now = Date()
        let (page, advice) = try read { txn, names -> (QueryBatch, [IndexAdvice]) in
            let found: ZoneMatches
            do {
                found = try zoneMatches(
                    query, zoneID: zoneID, order: after?.order, after: after.map { [UInt8]($0.position) }, desiredKeys: desiredKeys,
                    limit: limit, everyKey: false, context: context, mode: mode, now: now, txn: txn, names: &names)
            } catch let error as FogError where error.code == .zoneNotFound && after != nil && context.scope == .shared {
                // The share was revoked since the cursor was taken: the query goes on with no
                // records, as CloudKit's does.
                return (QueryBatch(records: [], next: nil), [])
            }
            var next: QueryCursorState?
            if found.more, let last = found.matches.last {
                next = QueryCursorState(
                    recordType: query.recordType, predicate: CursorPredicate(query.predicate), order: found.order,
                    zoneName: zoneID.zoneName, ownerName: zoneID.ownerName, position: Data(last.key), holder: context.user ?? "",
                    scope: context.scope.rawValue)
            }
            return (QueryBatch(records: found.matches.map(\.record), next: next), found.advice)
        }
        if mode == .development { indexes.advisor.record(advice) }
        return page
    }

    /// The matches of a query in one zone, inside a read snapshot: up to `limit` of them after
    /// `position`, in order, and whether more match.
    ///
    /// - Parameters:
    ///   - order: The order to follow (a cursor's, or every zone's of a query over all zones);
    ///     `nil` lets the planner choose when the query has no sort descriptors.
    ///   - everyKey: Whether every match gets its order key; otherwise only the last one does,
    ///     and only when more match (the key a cursor needs).
    func zoneMatches(
        _ query: Query, zoneID: RecordZone.ID, order: [Query.SortDescriptor]?, after position: [UInt8]?, desiredKeys: [String]?,
        limit: Int, everyKey: Bool, context: DatabaseContext, mode: SchemaMode, now: Date, txn: Store.ReadTransaction,
        names: inout NameResolver<Store>
    ) throws -> ZoneMatches {
        let (zone, shares) = try existingZone(zoneID, context: context, txn: txn, names: &names)
        let prepared = try prepare(query, fixedOrder: order, zone: zone?.id, desiredKeys: desiredKeys, now: now, txn: txn, names: &names)
        let advice = prepared.missing.map {
            IndexAdvice(recordType: query.recordType, field: $0.field, options: $0.options, queryCount: 1)
        }
        let none = ZoneMatches(matches: [], more: false, order: prepared.order, advice: advice)
        // Share records (`cloudkit.share`) are the system's, in every environment.
        if mode == .production, query.recordType != Record.SystemType.share {
            guard let typeID = prepared.typeID, try recordTypeIsKnown(typeID, txn: txn) else {
                throw FogError(.unknownItem, message: "Did not find record type: \(query.recordType)")
            }
            if let missing = prepared.missing.first {
                if missing.options == .searchable {
                    throw FogError(.invalidArguments, message: "no field of record type \(query.recordType) is marked searchable")
                }
                throw FogError(.invalidArguments, message: "Field '\(missing.field)' is not marked \(missing.word)")
            }
        }
        guard let zone, let typeID = prepared.typeID else { return none }
        let request = AccessRequest(
            caller: context.caller, scope: context.scope, zoneName: zoneID.zoneName, recordType: query.recordType,
            acceptedShares: shares)
        let candidates: CandidateCheck
        if context.scope == .public {
            // The security roles of the record type decide which records the query sees.
            var roles = try PublicReadRoles(core: core, caller: context.caller, txn: txn, names: &names)
            candidates = access.queryCandidates(
                request, grants: try roles.grants(ofType: typeID, names: &names), callerID: roles.callerID)
        } else {
            candidates = access.queryCandidates(request)
        }
        if case .nobody = candidates { return none }
        var run = try QueryRun(
            executor: self, prepared: prepared, zone: zone.id, type: typeID, zoneID: zoneID, desiredKeys: desiredKeys, txn: txn,
            names: names, limit: limit, candidates: candidates)
        var (matches, more) = try run.execute(limit: limit, after: position)
        if everyKey { try run.fillOrderKeys(&matches) }
        names = run.names
        return ZoneMatches(matches: matches, more: more, order: prepared.order, advice: advice)
    }

    /// Describes how a query would run, without running it.
    func explain(
        _ query: Query, zoneID: RecordZone.ID, desiredKeys: [String]?, resultsLimit: Int, context: DatabaseContext,
        mode: SchemaMode
    ) throws -> QueryPlan {
        guard resultsLimit >= 0 else {
            throw FogError(.invalidArguments, message: "resultsLimit is \(resultsLimit); it must be positive, or maximumResults (0)")
        }
        try access.check(.query, in: context)
        let limit = resultsLimit == 0 ? EngineDefaults.queryBatchSize : resultsLimit
        return try read { txn, names in
            let zone = try existingZone(zoneID, context: context, txn: txn, names: &names).zone
            let p = try prepare(query, fixedOrder: nil, zone: zone?.id, desiredKeys: desiredKeys, now: Date(), txn: txn, names: &names)
            let type = query.recordType
            let access: String
            var scans = false
            switch p.path {
            case .typeScan:
                access = "scan of every \(type) record in the zone"
                scans = true
            case .recordNames(let list):
                access = "record names (\(list.count) lookup\(list.count == 1 ? "" : "s"))"
            case .values(let field, _, let values):
                access =
                    "index \(type).\(field) == " + values.map(\.description).joined(separator: ", ")
                    + " (\(values.count) key\(values.count == 1 ? "" : "s"))"
            case .tokens(let tokens):
                access = "token index of \(type): " + tokens.joined(separator: ", ")
            case .cells(let field, _, let runs):
                access = "location index \(type).\(field), \(runs.count) runs of cells"
            case .range(let field, _, _, _, _, _, let describe, _):
                access =
                    "index \(type).\(field)" + (describe == "all" ? ", every entry" : ": \(describe)") + (p.reverse ? ", in reverse" : "")
                scans = describe == "all"
            }
            let orderText = p.order.isEmpty ? "row order" : p.order.map(\.description).joined(separator: ", ")
            let order =
                p.pathGivesOrder
                ? "\(orderText), as the access path reads (stops after \(limit))" : "\(orderText), in memory (best \(limit) kept)"
            return QueryPlan(
                access: access,
                filter: p.predicate == .value(true)
                    ? "none" : p.indexDecides ? "none, the index range is exact: \(p.predicate.formatted)" : p.predicate.formatted,
                order: order,
                fields: p.decodedFields.map { $0.isEmpty ? "none" : $0.sorted().joined(separator: ", ") } ?? "all",
                scansRecordType: scans,
                indexProvidesOrder: p.pathGivesOrder && !p.order.isEmpty,
                missingIndexes: p.missing.map { IndexAdvice(recordType: type, field: $0.field, options: $0.options, queryCount: 0) },
                header: "query \(type) in \(zoneID.zoneName) (\(mode))")
        }
    }

    /// The stored zone a query runs in: `nil` for a default zone nobody wrote to. In the
    /// shared database, the owner's zone and the shares of it the user accepted
    /// (`zoneNotFound` when none).
    func existingZone(
        _ zoneID: RecordZone.ID, context: DatabaseContext, txn: Store.ReadTransaction, names: inout NameResolver<Store>
    ) throws -> (zone: ZoneInfo?, shares: [AcceptedShare]?) {
        if context.scope == .shared, let user = context.user {
            let (info, shares) = try zones.sharedZone(zoneID, of: user, in: txn, names: &names)
            return (info, shares)
        }
        let address = try zones.address(of: zoneID, in: context)
        let zone = try zones.zoneInfo(at: address, in: txn)
        if zone == nil, !address.isDefault {
            throw zones.missingZoneError(zoneID, at: address, in: txn)
        }
        return (zone, nil)
    }

    /// Whether the record type is in the environment's schema catalog (a `"t"` entry).
    func recordTypeIsKnown(_ typeID: Int64, txn: Store.ReadTransaction) throws -> Bool {
        try txn.withValue(forKey: Layout.recordTypeKey(typeID), in: core.schema) { $0.isEmpty } ?? false
    }
}

/// The matches of a query in one zone (``QueryExecutor/zoneMatches(_:zoneID:order:after:desiredKeys:limit:everyKey:context:mode:now:txn:names:)``).
struct ZoneMatches {
    var matches: [QueryMatch]
    /// Whether more records of the zone match after the last one.
    var more: Bool
    /// The order the matches follow, which a cursor records.
    var order: [Query.SortDescriptor]
    /// The indexes the query lacked, for the development environment's advice.
    var advice: [IndexAdvice]
}

/// A record that matched, as the client gets it, and its order key (computed only where
/// needed: for the last record of a batch, whose key becomes the cursor's position).
struct QueryMatch {
    let row: Int64
    var record: Record
    var key: [UInt8]
}

/// One batch of a prepared query inside a read transaction.
///
/// Candidates are tested on ``RecordView``s, in place: a candidate that does not match costs
/// no allocation, and one that an in-memory sort drops none beyond its order key (and the copy
/// of its bytes while the heap held it). Only the records returned are copied out
/// (``EncodedFields``).
struct QueryRun<Store: KeyValueStore> {
    let executor: QueryExecutor<Store>
    let prepared: PreparedQuery
    let zone: Int64
    let type: Int64
    let txn: Store.ReadTransaction
    var names: NameResolver<Store>
    /// The names and desired keys of the returned records, and their bytes' memory.
    private let table: FieldNameTable
    private var arena: FieldArenaWriter
    /// The name ids of ``PreparedQuery/readFields``.
    private let fieldIDs: FieldIDs
    /// Whether the predicate or the sort reads the creator or the last modifier.
    private let readsUsers: Bool
    /// The name id of each sort key (`nil` for a name the store never saw) when every sort
    /// key is a user field: order keys then read the values straight from the view.
    private let sortFieldIDs: [Int64?]?
    /// The fields whose payloads a candidate's view checks: those the query reads and returns.
    private let checking: FieldSelection
    /// The fields a candidate of an in-memory sort checks: those the predicate and the sort
    /// read. The records returned are viewed again, checking the returned fields.
    private let filtering: FieldSelection
    /// Which candidates the caller may see (the access policy's answer for the query).
    private let candidates: CandidateCheck
    /// Whether each record name the shared coverage walked is covered (``CandidateCheck/sharedRecords(_:)``).
    private var coveredNames: [String: Bool] = [:]
    /// Whether a candidate that belongs to the query's zone, type and caller matches with
    /// nothing evaluated: the path decides the predicate, or it is `TRUEPREDICATE`.
    private let matchesUnevaluated: Bool

    init(
        executor: QueryExecutor<Store>, prepared: PreparedQuery, zone: Int64, type: Int64, zoneID: RecordZone.ID, desiredKeys: [String]?,
        txn: Store.ReadTransaction, names: NameResolver<Store>, limit: Int, candidates: CandidateCheck
    ) throws {
        self.executor = executor
        self.candidates = candidates
        self.prepared = prepared
        matchesUnevaluated = prepared.indexDecides || prepared.predicate == .value(true)
        self.zone = zone
        self.type = type
        self.txn = txn
        self.names = names
        table = FieldNameTable(
            zoneID: zoneID, assetDirectory: executor.assetDirectory,
            selection: try FieldSelection(desiredKeys.map(Set.init), names: &self.names), cipher: executor.core.cipher)
        arena = FieldArenaWriter(expectedRecords: limit)
        var ids: [String: Int64] = [:]
        for field in prepared.readFields {
            if let id = try self.names.id(field) { ids[field] = id }
        }
        fieldIDs = FieldIDs(ids)
        // A token search over every field reads them all.
        filtering = prepared.filterFields == nil ? .all : FieldSelection(ids: Array(ids.values))
        checking = table.selection.union(filtering)
        let keys = prepared.order.map(\.key) + Self.keys(of: prepared.predicate)
        readsUsers = keys.contains {
            $0 == Record.SystemFieldKey.creatorUserRecordID || $0 == Record.SystemFieldKey.lastModifiedUserRecordID
        }
        let userSort = prepared.order.allSatisfy { PredicateKey(name: $0.key).systemKind == nil }
        sortFieldIDs = userSort ? prepared.order.map { ids[$0.key] } : nil
    }

    /// The fields a predicate reads, system fields included.
    private static func keys(of node: PredicateNode) -> [String] {
        switch node {
        case .value, .tokenSearch: []
        case .and(let nodes): nodes.flatMap(keys)
        case .not(let inner): keys(of: inner)
        case .comparison(let key, _, _), .between(let key, _, _), .in(let key, _), .listContains(let key, _),
            .listContainsAny(let key, _), .listAnyBeginsWith(let key, _), .beginsWith(let key, _), .distance(let key, _, _, _):
            [key.name]
        }
    }

    /// The matches of the batch, in order, and whether more match after them.
    mutating func execute(limit: Int, after position: [UInt8]?) throws -> ([QueryMatch], Bool) {
        let orderKey = OrderKey(order: prepared.order)
        if prepared.pathGivesOrder {
            var matches: [QueryMatch] = []
            var more = false
            // Counts matches before making their records: the one past the limit only says
            // "more" (false). The matches are passed in, not captured: a variable a nested
            // function captures and changes is checked for exclusive access at run time, on
            // every candidate.
            func take(_ row: Int64, _ buffer: UnsafeRawBufferPointer, into matches: inout [QueryMatch]) throws -> Bool {
                guard let view = try matchingView(buffer) else { return true }
                if matches.count == limit { return false }
                matches.append(QueryMatch(row: row, record: try makeRecord(view), key: []))
                return true
            }
            if case .typeScan = prepared.path {
                // Row order: the records table itself, read in order from the position.
                let after = try position.map { try OrderKey.row(ofPosition: $0) }
                try executor.records.scanRecords(zone: zone, type: type, after: after, txn: txn) { row, buffer in
                    more = !(try take(row, buffer, into: &matches))
                    return !more
                }
            } else {
                // The order key of a candidate that matches: how rows sharing a truncated index
                // key (long values) are put in order.
                func keyIfMatching(_ row: Int64) throws -> [UInt8]? {
                    let key = try executor.records.withRecord(row, in: txn) { buffer -> [UInt8]? in
                        guard let fields = try matchesView(buffer) else { return nil }
                        return orderKey.key(for: fields, row: row)
                    }
                    return key ?? nil
                }
                try streamInOrder(after: position, keyIfMatching: keyIfMatching) { row in
                    try executor.records.withRecord(row, in: txn) { buffer in
                        more = !(try take(row, buffer, into: &matches))
                        return !more
                    } ?? true
                }
            }
            if more, let last = matches.last {
                let key =
                    try executor.records.withRecord(last.row, in: txn) { buffer in
                        orderKey.key(for: try matchesView(buffer, check: false)!, row: last.row)
                    } ?? []
                // The position comes from the record, the order from its index entries: in a
                // sound store they agree, so each batch ends after the position it continued
                // from. A damaged index entry (a value its record does not hold) could end a
                // batch at or before it, and a cursor would then repeat batches for ever.
                if let position, !HeapItem.precedes(position, key) {
                    throw FormatError(
                        message: "the index entries of \(prepared.recordType) disagree with record row \(last.row): "
                            + "a batch ended at or before the position it continued from (fog check names the damage)")
                }
                matches[matches.count - 1].key = key
            }
            return (matches, more)
        }
        // Gather the candidates, keep the best `limit + 1` matches after the position. A
        // candidate's view checks only what the predicate and the sort read; one the heap keeps
        // keeps a copy of its bytes (when small), so that the winners are not read again.
        var heap = Heap<HeapItem>()
        let keep = limit == .max ? limit : limit + 1
        let sortFieldIDs = sortFieldIDs
        // The candidate as the heap keeps it; `nil` when it does not match, comes before the
        // position or after `worst` (the heap's last when full). The heap is changed by the
        // callers, not here: a variable a nested function captures and changes is checked for
        // exclusive access at run time, on every candidate (a closure passed as an argument
        // is checked when compiled).
        func candidate(_ row: Int64, _ buffer: UnsafeRawBufferPointer, worst: [UInt8]?) throws -> HeapItem? {
            guard let fields = try matchesView(buffer, checking: filtering) else { return nil }
            let key = Self.key(orderKey, fields, row: row, sortFieldIDs: sortFieldIDs)
            // Continuing: only what comes after the cursor's position.
            if let position, !HeapItem.precedes(position, key) { return nil }
            if let worst, !HeapItem.precedes(key, worst) { return nil }
            let bytes = buffer.count <= HeapItem.largestCopy ? [UInt8](buffer) : nil
            return HeapItem(row: row, key: key, bytes: bytes)
        }
        if case .typeScan = prepared.path {
            try executor.records.scanRecords(zone: zone, type: type, txn: txn) { row, buffer in
                if let item = try candidate(row, buffer, worst: heap.worstKey(keeping: keep)) { heap.insert(item, keeping: keep) }
                return true
            }
        } else {
            var rows: [Int64] = []
            try candidates { rows.append($0) }
            rows.sort()
            var previous: Int64?
            for row in rows where row != previous {
                previous = row
                let worst = heap.worstKey(keeping: keep)
                guard let item = try executor.records.withRecord(row, in: txn, { try candidate(row, $0, worst: worst) }) ?? nil else {
                    continue
                }
                heap.insert(item, keeping: keep)
            }
        }
        var best: [HeapItem] = []
        best.reserveCapacity(heap.count)
        while let item = heap.popMin() { best.append(item) }
        let more = best.count > limit
        if more { best.removeLast(best.count - limit) }
        // Only the batch's records are made, as they are returned: from the bytes kept (read
        // in this snapshot), or read again.
        let matches = try best.map { item in
            let made: Record?
            if let bytes = item.bytes {
                made = try bytes.withUnsafeBytes { try makeRecord(RecordView($0, checking: table.selection)) }
            } else {
                made = try executor.records.withRecord(item.row, in: txn) { try makeRecord(RecordView($0, checking: table.selection)) }
            }
            guard let record = made else { throw FormatError(message: "row \(item.row) vanished inside a snapshot") }
            return QueryMatch(row: item.row, record: record, key: item.key)
        }
        return (matches, more)
    }

    /// Gives every match without an order key its key (streamed matches get one only at the
    /// end of a batch), reading its record again: what merging the matches of several zones
    /// compares.
    mutating func fillOrderKeys(_ matches: inout [QueryMatch]) throws {
        let orderKey = OrderKey(order: prepared.order)
        for index in matches.indices where matches[index].key.isEmpty {
            let row = matches[index].row
            let key = try executor.records.withRecord(row, in: txn) { buffer in
                orderKey.key(for: try matchesView(buffer, checking: filtering, check: false)!, row: row)
            }
            guard let key else { throw FormatError(message: "row \(row) vanished inside a snapshot") }
            matches[index].key = key
        }
    }

    /// The fields of the encoded record `buffer` when it belongs to the query's zone and
    /// type and matches the predicate (or, with `check` false, whatever it holds).
    ///
    /// A predicate the access path decides (``PreparedQuery/indexDecides``) is not evaluated.
    private mutating func matchesView(_ buffer: UnsafeRawBufferPointer, check: Bool = true) throws -> ViewFields? {
        try matchesView(buffer, checking: checking, check: check)
    }

    /// ``matchesView(_:check:)`` with a view that checks the payloads of `checking`.
    private mutating func matchesView(
        _ buffer: UnsafeRawBufferPointer, checking: FieldSelection, check: Bool = true
    ) throws -> ViewFields? {
        let view = try RecordView(buffer, checking: checking)
        guard try !check || admits(view) else { return nil }
        let fields = ViewFields(
            view: view, ids: fieldIDs, creator: readsUsers ? try names.name(view.creator) : nil,
            modifier: readsUsers ? try names.name(view.modifier) : nil)
        guard !check || prepared.indexDecides || prepared.evaluator.matches(prepared.predicate, fields) else { return nil }
        return fields
    }

    /// The view of the encoded record `buffer` when it matches, as ``matchesView(_:check:)``
    /// decides. When nothing is left to evaluate (the path decides the predicate, or it is
    /// `TRUEPREDICATE`), no ``ViewFields`` is built: a scan of every record saves their copies
    /// of the view and the evaluator's call.
    private mutating func matchingView(_ buffer: UnsafeRawBufferPointer) throws -> RecordView? {
        guard matchesUnevaluated else { return try matchesView(buffer)?.view }
        let view = try RecordView(buffer, checking: checking)
        return try admits(view) ? view : nil
    }

    /// Whether the candidate `view` belongs to the query's zone and type and to the
    /// records the caller may see (its creator, the shares that cover it).
    @inline(__always)
    private mutating func admits(_ view: RecordView) throws -> Bool {
        guard view.zone == zone && view.type == type, candidates.allows(creator: view.creator) else { return false }
        if case .sharedRecords(let coverage) = candidates, !(try isCovered(view, coverage)) { return false }
        return true
    }

    /// Whether the shares cover the candidate `view` (the shared database), walking its
    /// `parent` chain in the zone; the answers for the records walked are remembered.
    private mutating func isCovered(_ view: RecordView, _ coverage: SharedCoverage) throws -> Bool {
        let (records, txn, zone) = (executor.records, txn, zone)
        return try coverage.covers(
            view.recordName, share: view.shareRange.map(view.string), parent: view.parentRange.map(view.string), memo: &coveredNames
        ) { name in
            guard let row = try records.rowID(zone: zone, name: name, in: txn) else { return nil }
            return try records.withRecord(row, in: txn) { buffer in
                let ancestor = try RecordView(buffer, checking: FieldSelection(ids: []))
                return (ancestor.shareRange.map(ancestor.string), ancestor.parentRange.map(ancestor.string))
            }
        }
    }

    /// The order key of a candidate: user fields' values read from the view by name id (as
    /// ``ViewFields/value(forKey:)`` reads them, without matching the key against the
    /// system fields' names).
    /// (Static: a method would copy the run, names and all, for every candidate.)
    @inline(__always)
    private static func key(_ orderKey: OrderKey, _ fields: ViewFields, row: Int64, sortFieldIDs: [Int64?]?) -> [UInt8] {
        guard let ids = sortFieldIDs else { return orderKey.key(for: fields, row: row) }
        return orderKey.key(row: row) { i in ids[i].flatMap { fields.view.payload(of: $0) } }
    }

    /// The client's record for the encoded record `view`, with the desired fields.
    private mutating func makeRecord(_ view: RecordView) throws -> Record {
        try view.makeRecord(id: nil, table: table, arena: &arena, names: &names)
    }

    /// Visits the rows of an ordered path after `position`, in order, until `body` returns false.
    ///
    /// A position is an order key: for an equality on one value (row order), the row; for
    /// one field's range, the value's tuple element then the row (complemented when
    /// descending). Either becomes an entry of the index, (key, row), to resume after.
    ///
    /// Rows under a truncated key (long values that share a prefix, see
    /// `IndexValue.maximumKeptLength`) are in row order in the index, not in value order: such
    /// a group is read whole, its matches ordered by their order keys (`keyIfMatching`), and
    /// handed on in that order. A position inside a group resumes after it in the group.
    private func streamInOrder(
        after position: [UInt8]?, keyIfMatching: (Int64) throws -> [UInt8]?, _ body: (Int64) throws -> Bool
    ) throws {
        switch prepared.path {
        case .values(_, let id, let values):
            let key = Layout.valuePrefix(zone: zone, type: type, field: id) + values[0].encoded
            let after = try position.map { (key: key, value: bigEndianKey(try OrderKey.row(ofPosition: $0))) }
            try scanRows(.exactly(key), after: after, body)
        case .range(_, let id, let lower, let lowerInclusive, let upper, let upperInclusive, _, _):
            let reverse = prepared.reverse
            let (range, prefix) = valueRange(field: id, lower, lowerInclusive, upper, upperInclusive)
            // Past every row of a key, in the scan's direction.
            let pastRows = [UInt8](repeating: reverse ? 0x00 : 0xFF, count: 8)
            // The matches of a group after `position`, in order; false when `body` stopped.
            func group(_ key: [UInt8], after position: [UInt8]?) throws -> Bool {
                var members: [(key: [UInt8], row: Int64)] = []
                try scanRows(.exactly(key)) { row in
                    if let order = try keyIfMatching(row), position.map({ $0.lexicographicallyPrecedes(order) }) ?? true {
                        members.append((order, row))
                    }
                    return true
                }
                members.sort { $0.key.lexicographicallyPrecedes($1.key) }
                for member in members where !(try body(member.row)) { return false }
                return true
            }
            var after: (key: [UInt8], value: [UInt8])?
            if let position {
                let (value, row) = try OrderKey.valueAndRow(ofPosition: reverse ? OrderKey.complement(position) : position)
                guard let element = IndexValue.indexElement(ofOrdered: value) else {
                    throw FogError(.invalidArguments, message: "the query cursor is corrupt: its position holds no index value")
                }
                if IndexValue.isTruncatedElement(element) {
                    guard try group(prefix + element, after: position) else { return }
                    after = (key: prefix + element, value: pastRows)
                } else {
                    after = (key: prefix + element, value: bigEndianKey(row))
                }
            }
            while true {
                var truncated: [UInt8]?
                var stopped = false
                // The closure is passed, not stored: its captures stay on the stack, unchecked.
                try scanEntries(range, after: after, reverse: reverse) { key, row in
                    if IndexValue.isTruncatedElement(key[prefix.count...]) {
                        truncated = Array(key)
                        return false
                    }
                    stopped = !(try body(try readBigEndianKey(row)))
                    return !stopped
                }
                guard !stopped, let key = truncated, try group(key, after: nil) else { return }
                after = (key: key, value: pastRows)
            }
        default:
            preconditionFailure("QueryRun: \(prepared.path) gives no order")
        }
    }

    /// Visits every candidate row of the path (rows may repeat).
    private func candidates(_ body: (Int64) throws -> Void) throws {
        let visit: (Int64) throws -> Bool = {
            try body($0)
            return true
        }
        switch prepared.path {
        case .recordNames(let list):
            for name in list {
                if let row = try executor.records.rowID(zone: zone, name: name, in: txn) { try body(row) }
            }
        case .values(_, let id, let values):
            for value in values {
                try scanRows(.exactly(Layout.valuePrefix(zone: zone, type: type, field: id) + value.encoded), visit)
            }
        case .tokens(let tokens):
            for token in tokens {
                try scanRows(.exactly(Layout.tokenPrefix(zone: zone, type: type) + IndexValue.string(token).encoded), visit)
            }
        case .cells(_, let id, let runs):
            let prefix = Layout.cellPrefix(zone: zone, type: type, field: id)
            for run in runs {
                var low = KeyWriter(capacity: 24)
                low.append(run.row)
                low.append(run.columns.lowerBound)
                var high = KeyWriter(capacity: 24)
                high.append(run.row)
                high.append(run.columns.upperBound)
                try scanRows(ScanRange(lower: prefix + low.bytes, upper: prefix + high.bytes, upperInclusive: true), visit)
            }
        case .range(_, let id, let lower, let lowerInclusive, let upper, let upperInclusive, _, _):
            let (range, _) = valueRange(field: id, lower, lowerInclusive, upper, upperInclusive)
            try scanRows(range, visit)
        case .typeScan:
            preconditionFailure("QueryRun: whole-type scans read the records table")
        }
    }

    /// The scan of a field's value entries between bounds given relative to the field's
    /// prefix (`nil`: from the first entry, nulls included / to the last), and the prefix.
    private func valueRange(
        field id: Int64, _ lower: [UInt8]?, _ lowerInclusive: Bool, _ upper: [UInt8]?, _ upperInclusive: Bool
    ) -> (ScanRange, prefix: [UInt8]) {
        let prefix = Layout.valuePrefix(zone: zone, type: type, field: id)
        let range = ScanRange(
            lower: prefix + (lower ?? []), lowerInclusive: lowerInclusive,
            upper: upper.map { prefix + $0 } ?? ScanRange.successor(ofPrefix: prefix), upperInclusive: upperInclusive)
        return (range, prefix)
    }

    /// Scans the index entries whose keys are in `range`, strictly after the entry `after`
    /// when given, and hands `body` each entry's row: the key's values, in row order
    /// (descending when `reverse`).
    private func scanRows(
        _ range: ScanRange, after: (key: [UInt8], value: [UInt8])? = nil, reverse: Bool = false, _ body: (Int64) throws -> Bool
    ) throws {
        try scanEntries(range, after: after, reverse: reverse) { _, row in try body(try readBigEndianKey(row)) }
    }

    /// Scans the index entries whose keys are in `range`, strictly after the entry `after`
    /// when given, handing `body` each key and row (valid during the call).
    @inline(__always)
    private func scanEntries(
        _ range: ScanRange, after: (key: [UInt8], value: [UInt8])?, reverse: Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        if let after {
            try txn.scan(executor.indexes.indexTable, range: range, reverse: reverse, after: after, body)
        } else {
            try txn.scan(executor.indexes.indexTable, range: range, reverse: reverse, body)
        }
    }
}

/// A candidate in the heap, ordered by its order key, with a copy of its encoded record
/// when that is at most ``largestCopy`` bytes.
extension Heap<HeapItem> {
    /// The key a candidate must come before to enter a heap that keeps `keep` items: its last
    /// item's when full, `nil` while there is room.
    @inline(__always)
    fileprivate func worstKey(keeping keep: Int) -> [UInt8]? { count == keep ? max?.key : nil }

    /// Inserts `item`, then drops the last item when there are more than `keep`.
    @inline(__always)
    fileprivate mutating func insert(_ item: HeapItem, keeping keep: Int) {
        insert(item)
        if count > keep { _ = removeMax() }
    }
}

private struct HeapItem: Comparable {
    let row: Int64
    let key: [UInt8]
    let bytes: [UInt8]?

    /// The largest record a candidate keeps a copy of (a larger one is read again if it wins),
    /// which bounds the heap's memory by the limit.
    static let largestCopy = 8 * 1024

    static func < (a: HeapItem, b: HeapItem) -> Bool { precedes(a.key, b.key) }
    static func == (a: HeapItem, b: HeapItem) -> Bool { a.key == b.key }

    /// Whether `a` comes before `b` byte by byte (a prefix first), with `memcmp`.
    @inline(__always)
    static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBufferPointer { x in
            b.withUnsafeBufferPointer { y in
                let n = min(x.count, y.count)
                if n > 0, let p = x.baseAddress, let q = y.baseAddress {
                    let c = memcmp(p, q, n)
                    if c != 0 { return c < 0 }
                }
                return x.count < y.count
            }
        }
    }
}

extension IndexValue: CustomStringConvertible {
    var description: String {
        switch self {
        case .null: "null"
        case .string(let s): PredicateValue.quoted(s)
        case .int(let i): String(i)
        case .double(let d): d.description
        case .date(let d): Date(timeIntervalSinceReferenceDate: d).description
        case .bytes(let b): "<\(b.count) bytes>"
        case .hash(let h): "#\(String(UInt64(bitPattern: h), radix: 16))"
        }
    }
}
