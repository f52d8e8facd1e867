import Foundation

/// What the evaluator and order keys read of a record (the engine's ``ViewFields``, a stored
/// record read in place).
protocol PredicateFields {
    /// A user field, or a queryable system field (see ``StoredRecord/value(forKey:)``).
    func value(forKey key: String) -> FieldValue?
    /// The values of the user fields `named`, or of every user field when `nil`.
    func values(named: [String]?) -> [FieldValue]
    /// The order of the string field `key` and `constant`, by UTF-8 bytes; `nil` when the
    /// field is missing or not a string.
    func compareString(forKey key: String, with constant: String) -> Int?
}

/// Decides whether a stored record matches a predicate: the meaning of every condition,
/// described in `Docs/Queries.md`.
///
/// Every record a query returns passes this check, whichever index found it, so the
/// indexes only have to find a superset of the matches — except when the index range read
/// holds exactly the matches (``PreparedQuery/indexDecides``), where the check would only
/// repeat what the range decided.
struct PredicateEvaluator {
    /// The time `now()` stands for.
    let now: Date
    /// The fields token search reads; `nil` for every string and string-list field.
    let searchFields: [String]?

    func matches(_ node: PredicateNode, _ record: some PredicateFields) -> Bool {
        switch node {
        case .value(let b):
            return b
        case .and(let nodes):
            return nodes.allSatisfy { matches($0, record) }
        case .not(let inner):
            return !matches(inner, record)
        case .comparison(let key, let op, let constant):
            let order: Int
            if case .constant(.string(let s)) = constant, let o = record.compareString(forKey: key.name, with: s) {
                // A stored string compared in place, without decoding it.
                order = o
            } else {
                guard let value = record.value(forKey: key.name) else { return op == .notEqual }
                guard let o = Self.compare(value, resolve(constant)) else { return op == .notEqual }
                order = o
            }
            switch op {
            case .equal: return order == 0
            case .notEqual: return order != 0
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            case .greaterOrEqual: return order >= 0
            }
        case .between(let key, let lower, let upper):
            guard let value = record.value(forKey: key.name),
                let low = Self.compare(value, resolve(lower)), let high = Self.compare(value, resolve(upper))
            else { return false }
            return low >= 0 && high <= 0
        case .in(let key, let constants):
            guard let value = record.value(forKey: key.name) else { return false }
            return constants.contains { Self.compare(value, resolve($0)) == 0 }
        case .listContains(let key, let constant):
            let wanted = resolve(constant)
            return Self.elements(record.value(forKey: key.name)).contains { Self.compare($0, wanted) == 0 }
        case .listContainsAny(let key, let constants):
            let wanted = constants.map(resolve)
            return Self.elements(record.value(forKey: key.name)).contains { element in
                wanted.contains { Self.compare(element, $0) == 0 }
            }
        case .listAnyBeginsWith(let key, let prefix):
            guard case .stringList(let list)? = record.value(forKey: key.name) else { return false }
            return list.contains { $0.utf8.starts(with: prefix.utf8) }
        case .beginsWith(let key, let prefix):
            guard case .string(let s)? = record.value(forKey: key.name) else { return false }
            return s.utf8.starts(with: prefix.utf8)
        case .tokenSearch(let text, let allTokens):
            let wanted = TextTokens.tokens(text)
            guard !wanted.isEmpty else { return false }
            let values = record.values(named: searchFields)
            let present = TextTokens.tokens(of: values)
            return allTokens ? wanted.allSatisfy(present.contains) : wanted.contains(where: present.contains)
        case .distance(let key, let center, let radius, let inclusive):
            guard case .location(let location)? = record.value(forKey: key.name) else { return false }
            let d = GeoGrid.distance(location, center)
            return inclusive ? d <= radius : d < radius
        }
    }

    func resolve(_ constant: PredicateValue) -> FieldValue {
        switch constant {
        case .now: return .date(now)
        case .constant(let value): return value
        }
    }

    /// The elements of a list value; nothing for a scalar or a missing value.
    static func elements(_ value: FieldValue?) -> [FieldValue] {
        switch value {
        case .stringList(let l)?: l.map { .string($0) }
        case .int64List(let l)?: l.map { .int64($0) }
        case .doubleList(let l)?: l.map { .double($0) }
        case .bytesList(let l)?: l.map { .bytes($0) }
        case .dateList(let l)?: l.map { .date($0) }
        case .referenceList(let l)?: l.map { .reference($0) }
        default: []
        }
    }

    /// The order of a stored scalar and a constant: negative, zero or positive; `nil` when
    /// they are of kinds that do not compare. Numbers compare by value, strings and
    /// references by UTF-8 bytes, dates by time, bytes lexicographically.
    static func compare(_ value: FieldValue, _ constant: FieldValue) -> Int? {
        switch (value, constant) {
        case (.string(let a), .string(let b)): return compareBytes(a.utf8, b.utf8)
        case (.int64(let a), .int64(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.int64(let a), .double(let b)): return compareDoubles(Double(a), b)
        case (.double(let a), .int64(let b)): return compareDoubles(a, Double(b))
        case (.double(let a), .double(let b)): return compareDoubles(a, b)
        case (.date(let a), .date(let b)):
            return compareDoubles(a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate)
        case (.bytes(let a), .bytes(let b)): return compareBytes(a, b)
        case (.reference(let a), .reference(let b)): return compareBytes(a.recordID.recordName.utf8, b.recordID.recordName.utf8)
        default: return nil
        }
    }

    /// The order of `a` and the UTF-8 bytes of `b`.
    static func compareUTF8(_ a: UnsafeRawBufferPointer, b: String) -> Int {
        var b = b
        return b.withUTF8 { other in
            let n = min(a.count, other.count)
            if n > 0, let x = a.baseAddress, let y = other.baseAddress {
                let c = memcmp(x, y, n)
                if c != 0 { return c < 0 ? -1 : 1 }
            }
            return a.count < other.count ? -1 : (a.count == other.count ? 0 : 1)
        }
    }

    private static func compareDoubles(_ a: Double, _ b: Double) -> Int? {
        if a < b { return -1 }
        if a > b { return 1 }
        return a == b ? 0 : nil
    }

    private static func compareBytes(_ a: some Sequence<UInt8>, _ b: some Sequence<UInt8>) -> Int {
        var i = a.makeIterator()
        var j = b.makeIterator()
        while true {
            switch (i.next(), j.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
            }
        }
    }
}
