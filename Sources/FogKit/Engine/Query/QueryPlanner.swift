import FogStorage
import Foundation

/// Where a query's candidate records come from.
enum AccessPath {
    /// `recordID == …` / `recordID IN …`: lookups in the `names` table.
    case recordNames([String])
    /// Equality on an indexed field: the entries of each value (distinct, in key order).
    case values(field: String, id: Int64, values: [IndexValue])
    /// Token search: the entries of each token (every token for "any"; the rarest one for "all").
    case tokens([String])
    /// A distance search: runs of grid cells.
    case cells(field: String, id: Int64, runs: [(row: Int64, columns: ClosedRange<Int64>)])
    /// A range of a sortable field's entries, in (value, row) order. `prefixOnly` ranges
    /// (`ANY list BEGINSWITH`) hold several entries per record and give no order.
    case range(
        field: String, id: Int64, lower: [UInt8]?, lowerInclusive: Bool, upper: [UInt8]?, upperInclusive: Bool, describe: String,
        ordered: Bool)
    /// Every record of the type in the zone, in row order.
    case typeScan
}

/// A query ready to run: the checked predicate, the access path and the order.
struct PreparedQuery {
    let recordType: String
    /// The record type's name id; `nil` when the store never saw the name (no records).
    let typeID: Int64?
    let predicate: PredicateNode
    let evaluator: PredicateEvaluator
    let indexes: TypeIndexes
    let missing: [QueryAnalysis.Requirement]
    let path: AccessPath
    /// The order of the results; recorded in cursors.
    let order: [Query.SortDescriptor]
    /// Whether `path` yields records in `order` (then results stream).
    let pathGivesOrder: Bool
    /// Whether the path reads the field's entries from the end (a descending index order).
    let reverse: Bool
    /// Whether every entry the path reads is a match, so that candidates skip the evaluator
    /// (see ``QueryExecutor/indexDecides(_:path:typeID:names:)``).
    let indexDecides: Bool
    /// The fields to decode: `nil` for all.
    let decodedFields: Set<String>?
    /// The fields the predicate and the sort read: what candidates of an in-memory sort
    /// decode before the best are decoded in full (`nil` for all).
    let filterFields: Set<String>?
    /// The user fields the predicate, the token search and the sort read, even when
    /// ``filterFields`` is `nil`.
    let readFields: Set<String>
}

extension QueryExecutor {
    /// Checks a query against the schema and chooses how to run it.
    ///
    /// - Parameter fixedOrder: The order a cursor recorded; `nil` on a first batch, where
    ///   a query without sort descriptors lets the planner choose.
    func prepare(
        _ query: Query, fixedOrder: [Query.SortDescriptor]?, zone: Int64?, desiredKeys: [String]?, now: Date, txn: Store.ReadTransaction,
        names: inout NameResolver<Store>
    ) throws -> PreparedQuery {
        try Validation.recordType(query.recordType)
        if let rejection = query.predicate.rejection { throw FogError(.invalidArguments, message: rejection) }
        // CloudKit cannot query user records (reference §1.4): they are fetched by ID.
        guard query.recordType != Record.SystemType.userRecord else {
            throw FogError(
                .invalidArguments,
                message: "records of type Users cannot be queried; fetch a user record by its ID (Container.userRecordID())")
        }
        let requested = fixedOrder ?? (query.sortDescriptors ?? [])
        let typeID = try names.id(query.recordType)
        var resolver = names
        let analysis = try QueryAnalysis.analyze(query.predicate.node, order: requested) { field in
            guard let typeID else { return nil }
            if let fieldID = try resolver.id(field), let type = try resolver.fieldType(type: typeID, field: fieldID) { return type }
            // A field of no plain type may be an encrypted one, which is never indexed nor
            // compared (reference §3.7).
            if let encryptedID = try resolver.id(Record.encryptedKey(field)),
                try resolver.fieldType(type: typeID, field: encryptedID) != nil
            {
                throw FogError(
                    .invalidArguments,
                    message:
                        "field '\(field)' of record type \(query.recordType) is encrypted: encrypted fields cannot be used in predicates or sort descriptors"
                )
            }
            return nil
        }
        names = resolver
        // An index still being built is not used: the query runs as if it did not exist.
        let indexes = try indexes.definitions(of: query.recordType, txn: txn, names: &names).ready
        let missing = analysis.missing(in: indexes)
        let searchFields: [String]? = indexes.searchableFields.isEmpty ? nil : indexes.searchableFields
        let evaluator = PredicateEvaluator(now: now, searchFields: searchFields)

        var filter: Set<String>? = analysis.fields
        if analysis.searchesTokens { filter = searchFields.map { analysis.fields.union($0) } }
        let decoded = desiredKeys.flatMap { keys in filter.map { $0.union(keys) } }

        var path = AccessPath.typeScan
        if let typeID, let zone {
            path = try chooseAccess(
                query.predicate.node, typeID: typeID, zone: zone, indexes: indexes, evaluator: evaluator, txn: txn, names: &names)
        }
        // The order: the one requested, or without one the path's own.
        var order = requested
        var gives = false
        var reverse = false
        if fixedOrder == nil, requested.isEmpty, case .range(let field, _, _, _, _, _, _, true) = path {
            order = [Query.SortDescriptor(key: field, ascending: true)]
        }
        switch path {
        case .typeScan:
            if order.isEmpty {
                gives = true
            } else if order.count == 1, order[0].relativeLocation == nil, indexes.options(order[0].key).contains(.sortable),
                typeID != nil, zone != nil, let id = try names.id(order[0].key)
            {
                // No condition narrows the type, but the sort field's index holds every record
                // (nulls included) in order: read it instead of sorting the whole type.
                path = .range(
                    field: order[0].key, id: id, lower: nil, lowerInclusive: true, upper: nil, upperInclusive: false, describe: "all",
                    ordered: true)
                gives = true
                reverse = !order[0].ascending
            }
        case .values(_, _, let values):
            gives = order.isEmpty && values.count == 1
        case .range(let field, _, _, _, _, _, _, let ordered):
            if ordered, order.count == 1, order[0].key == field, order[0].relativeLocation == nil {
                gives = true
                reverse = !order[0].ascending
            }
        default:
            break
        }
        let decides = try indexDecides(query.predicate.node, path: path, typeID: typeID, names: &names)
        return PreparedQuery(
            recordType: query.recordType, typeID: typeID, predicate: query.predicate.node, evaluator: evaluator,
            indexes: indexes, missing: missing, path: path, order: order, pathGivesOrder: gives, reverse: reverse,
            indexDecides: decides, decodedFields: decoded, filterFields: filter,
            readFields: analysis.fields.union(order.map(\.key)).union(analysis.searchesTokens ? searchFields ?? [] : []))
    }

    /// Whether the entries `path` reads are exactly the records that match `node`, so that the
    /// evaluator has nothing left to decide: a predicate that is one range condition
    /// (`<`, `<=`, `>`, `>=`, `BETWEEN`) on an INT64 field with INT64 constants, read from that
    /// field's sortable index. Integers are whole index elements (never truncated, hashed or
    /// widened: `rangeBounds` turns an exclusive bound into the next element and an
    /// inclusive one into its successor), the field holds INT64s only (saving another type
    /// fails), and a key between two integers' elements is an integer's, so the range holds
    /// the matches and nothing else. Other conditions (doubles, whose NaN the evaluator never
    /// matches; strings, cut when long; conjunctions) are still checked on every candidate.
    func indexDecides(_ node: PredicateNode, path: AccessPath, typeID: Int64?, names: inout NameResolver<Store>) throws -> Bool {
        guard case .range(let field, let id, _, _, _, _, let describe, true) = path, describe != "all", let typeID else { return false }
        let key: PredicateKey
        let constants: [PredicateValue]
        switch node {
        case .comparison(let k, let op, let c) where op.isOrdering: (key, constants) = (k, [c])
        case .between(let k, let lower, let upper): (key, constants) = (k, [lower, upper])
        default: return false
        }
        guard key.name == field, key.systemKind == nil, try names.fieldType(type: typeID, field: id) == .int64 else { return false }
        return constants.allSatisfy {
            if case .constant(.int64) = $0 { return true }
            return false
        }
    }

    /// The cheapest access path the declared indexes allow for the predicate's conditions.
    private func chooseAccess(
        _ node: PredicateNode, typeID: Int64, zone: Int64, indexes: TypeIndexes, evaluator: PredicateEvaluator,
        txn: Store.ReadTransaction, names: inout NameResolver<Store>
    ) throws -> AccessPath {
        let conditions: [PredicateNode]
        if case .and(let nodes) = node { conditions = nodes } else { conditions = [node] }

        // 1. Record IDs.
        for condition in conditions {
            switch condition {
            case .comparison(let key, .equal, let value) where key.name == Record.SystemFieldKey.recordID:
                return .recordNames(Self.recordNames([value]))
            case .in(let key, let values) where key.name == Record.SystemFieldKey.recordID:
                return .recordNames(Self.recordNames(values))
            default: continue
            }
        }

        func fieldInfo(_ key: PredicateKey, _ option: IndexOptions) throws -> (id: Int64, type: FieldType?)? {
            guard key.name != Record.SystemFieldKey.recordID, indexes.options(key.name).contains(option),
                let id = try names.id(key.name)
            else { return nil }
            switch key.systemKind {
            case .reference?: return (id, .reference)
            case .date?: return (id, .timestamp)
            case nil: return (id, try names.fieldType(type: typeID, field: id))
            }
        }

        // 2. Equality: the candidate with the fewest entries (counted only when there is a
        // choice to make: the number of rows under each value's key).
        var equalities: [AccessPath] = []
        for condition in conditions {
            let key: PredicateKey
            let constants: [PredicateValue]
            switch condition {
            case .comparison(let k, .equal, let v): (key, constants) = (k, [v])
            case .in(let k, let vs): (key, constants) = (k, vs)
            case .listContains(let k, let v): (key, constants) = (k, [v])
            case .listContainsAny(let k, let vs): (key, constants) = (k, vs)
            default: continue
            }
            guard let (id, type) = try fieldInfo(key, .queryable) else { continue }
            let element = type.flatMap { $0.isList ? QueryAnalysis.elementType(of: $0) : $0 }
            guard constants.allSatisfy({ Self.exactlyIndexable(evaluator.resolve($0), as: element) }) else { continue }
            var values = Set<IndexValue>()
            for c in constants {
                if let v = Self.indexValue(evaluator.resolve(c), as: element) { values.insert(v.keyed(for: indexes.options(key.name))) }
            }
            let sorted = values.sorted { $0.encoded.lexicographicallyPrecedes($1.encoded) }
            equalities.append(.values(field: key.name, id: id, values: sorted))
        }
        if equalities.count == 1 { return equalities[0] }
        var best: (path: AccessPath, count: Int)?
        for path in equalities {
            guard case .values(_, let id, let values) = path else { continue }
            var count = 0
            for v in values {
                count += try txn.valueCount(
                    forKey: Layout.valuePrefix(zone: zone, type: typeID, field: id) + v.encoded, in: self.indexes.indexTable)
            }
            if best == nil || count < best!.count { best = (path, count) }
        }
        if let best { return best.path }

        // 3. Tokens.
        if !indexes.searchableFields.isEmpty {
            for condition in conditions {
                guard case .tokenSearch(let text, let all) = condition else { continue }
                let tokens = TextTokens.tokens(text)
                if !all || tokens.count <= 1 { return .tokens(tokens) }
                // Every token must match: reading the rarest one is enough.
                var rarest: (String, Int)?
                for token in tokens {
                    let count = try txn.valueCount(
                        forKey: Layout.tokenPrefix(zone: zone, type: typeID) + IndexValue.string(token).encoded, in: self.indexes.indexTable
                    )
                    if rarest == nil || count < rarest!.1 { rarest = (token, count) }
                }
                return .tokens([rarest!.0])
            }
        }

        // 4. Distance.
        for condition in conditions {
            guard case .distance(let key, let center, let radius, _) = condition, indexes.hasLocationIndex(key.name),
                let id = try names.id(key.name)
            else { continue }
            return .cells(field: key.name, id: id, runs: GeoGrid.runs(around: center, radius: radius))
        }

        // 5. Ranges.
        for condition in conditions {
            if case .listAnyBeginsWith(let key, let prefix) = condition, let (id, _) = try fieldInfo(key, .sortable) {
                let bytes = Self.stringPrefix(prefix)
                return .range(
                    field: key.name, id: id, lower: bytes, lowerInclusive: true, upper: ScanRange.successor(ofPrefix: bytes),
                    upperInclusive: false, describe: "ANY \(key.name) BEGINSWITH \(PredicateValue.quoted(prefix))", ordered: false)
            }
            guard let range = try rangeBounds(condition, evaluator: evaluator, info: { try fieldInfo($0, .sortable) }) else { continue }
            return range
        }
        return .typeScan
    }

    /// The bounds (relative to the field's value prefix) of a range condition.
    private func rangeBounds(
        _ condition: PredicateNode, evaluator: PredicateEvaluator, info: (PredicateKey) throws -> (id: Int64, type: FieldType?)?
    ) throws -> AccessPath? {
        var lower: [UInt8]? = nil
        var lowerInclusive = true
        var upper: [UInt8]? = nil
        var upperInclusive = false
        let key: PredicateKey
        let type: FieldType?
        let id: Int64
        func bound(_ c: PredicateValue, up: Bool) -> [UInt8]? {
            Self.rangeValue(evaluator.resolve(c), as: type, roundingUp: up).map(\.encoded)
        }
        switch condition {
        case .comparison(let k, let op, let c) where op.isOrdering:
            guard let i = try info(k) else { return nil }
            (key, id, type) = (k, i.id, i.type)
            guard let b = bound(c, up: op == .less || op == .lessOrEqual) else { return nil }
            switch op {
            case .greater: (lower, lowerInclusive) = (b, false)
            case .greaterOrEqual: (lower, lowerInclusive) = (b, true)
            case .less: (upper, upperInclusive) = (b, false)
            default: (upper, upperInclusive) = (b, true)
            }
        case .between(let k, let lo, let hi):
            guard let i = try info(k) else { return nil }
            (key, id, type) = (k, i.id, i.type)
            guard let l = bound(lo, up: false), let h = bound(hi, up: true) else { return nil }
            (lower, lowerInclusive, upper, upperInclusive) = (l, true, h, true)
        case .beginsWith(let k, let prefix):
            guard let i = try info(k) else { return nil }
            (key, id, type) = (k, i.id, i.type)
            let bytes = Self.stringPrefix(prefix)
            return .range(
                field: key.name, id: id, lower: bytes, lowerInclusive: true, upper: ScanRange.successor(ofPrefix: bytes),
                upperInclusive: false, describe: "\(key.name) BEGINSWITH \(PredicateValue.quoted(prefix))", ordered: true)
        default:
            return nil
        }
        // Missing values (null entries) are below every range.
        if lower == nil { (lower, lowerInclusive) = ([0x01], true) }
        // Widen to whole entries: an exclusive lower bound skips every row of that value;
        // an inclusive upper bound takes them all.
        // (`l FF` is above every row of `l`, whose next byte is an Int64 tag, and below the
        // values that continue `l` with an escaped NUL, `l 00 FF …`, which are greater.)
        // A truncated bound (a long value, `IndexValue.maximumKeptLength`) stands for every
        // value that shares its prefix, some above and some below the constant: the range
        // takes its whole key, exclusive or not, and the evaluator decides.
        if let l = lower, !lowerInclusive {
            lower = IndexValue.isTruncatedElement(l) ? l : l + [0xFF]
            lowerInclusive = true
        }
        if let u = upper, !upperInclusive, IndexValue.isTruncatedElement(u) {
            upperInclusive = true
        }
        if let u = upper, upperInclusive {
            upper = ScanRange.successor(ofPrefix: u)
            upperInclusive = false
        }
        return .range(
            field: key.name, id: id, lower: lower, lowerInclusive: lowerInclusive, upper: upper, upperInclusive: upperInclusive,
            describe: condition.formatted, ordered: true)
    }

    /// The tuple bytes every string starting with `prefix` starts with: its element without
    /// the terminator, or for a long prefix the truncated element without its marker (every
    /// string that starts with a long prefix has that truncated element).
    static func stringPrefix(_ prefix: String) -> [UInt8] {
        var bytes = IndexValue.string(prefix).encoded
        bytes.removeLast()  // the terminator, or the truncation marker
        return bytes
    }

    static func recordNames(_ values: [PredicateValue]) -> [String] {
        var seen: Set<String> = []
        var names: [String] = []
        for v in values {
            if case .constant(.reference(let r)) = v, seen.insert(r.recordID.recordName).inserted { names.append(r.recordID.recordName) }
        }
        return names
    }

    /// The index value equal to a constant in a field of `type`, or `nil` when no value of
    /// the field can equal it (a fraction in an INT64 field).
    static func indexValue(_ constant: FieldValue, as type: FieldType?) -> IndexValue? {
        switch (constant, type) {
        case (.int64(let i), .double?): return .double(Double(i))
        case (.double(let d), .int64?):
            guard d.rounded() == d, let i = Int64(exactly: d) else { return nil }
            return .int(i)
        default: return IndexValue(constant)
        }
    }

    /// Beyond 2^53 an INT64 compared with a Double (as the evaluator compares them) can equal
    /// several integers; the index cannot answer that exactly, so such conditions scan.
    static func exactlyIndexable(_ constant: FieldValue, as type: FieldType?) -> Bool {
        if case .double(let d) = constant, type == .int64 { return abs(d) < 9_007_199_254_740_992 }
        return true
    }

    /// A range bound for a constant in a field of `type`, widened so that the range holds
    /// every match (the evaluator checks the exact condition).
    static func rangeValue(_ constant: FieldValue, as type: FieldType?, roundingUp: Bool) -> IndexValue? {
        switch (constant, type) {
        case (.int64(let i), .double?):
            let d = Double(i)
            return .double(roundingUp ? d.nextUp : d.nextDown)
        case (.double(let d), .int64?):
            guard exactlyIndexable(constant, as: type) else { return nil }
            return .int(Int64(roundingUp ? d.rounded(.up) : d.rounded(.down)))
        default: return IndexValue(constant)
        }
    }
}
