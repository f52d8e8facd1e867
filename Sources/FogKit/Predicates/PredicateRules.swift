import Foundation

/// A predicate that breaks one of CloudKit's rules; the parser adds the column, the
/// builder reports it as is. Both become ``FogError/Code/invalidArguments``.
struct PredicateViolation: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// An operand after argument substitution: a scalar constant, a location, or a list.
enum PredicateOperand: Sendable {
    case scalar(PredicateValue)
    case location(Location)
    case list([PredicateOperand])

    /// What the operand is, for messages.
    var kindDescription: String {
        switch self {
        case .scalar(let value): value.kind.description
        case .location: "a location"
        case .list: "a list"
        }
    }
}

/// CloudKit's rules for predicates (reference §5.2–5.4), shared by the parser and the
/// builder so that both make the same ``PredicateNode``s and reject the same things.
enum PredicateRules {
    /// Property names that are reserved field keys but cannot be queried.
    static let unqueryableKeys: Set<String> = ["recordType", "recordChangeTag", "allTokens", "self"]

    // MARK: - Keys and values

    /// A field key: a letter, then letters, digits and `_`; no key paths.
    static func key(_ name: String) throws(PredicateViolation) -> PredicateKey {
        if name.contains(".") {
            throw PredicateViolation(
                "key path '\(name)' is not supported: CloudKit keys name a field of the record itself, not of related records")
        }
        guard Validation.isIdentifier(name) else {
            throw PredicateViolation(
                "key '\(name)' is not a valid field key: it must start with a letter and contain only letters, digits and '_' (at most 255)"
            )
        }
        if unqueryableKeys.contains(name) {
            throw PredicateViolation("key '\(name)' cannot be used in a predicate")
        }
        return PredicateKey(name: name)
    }

    /// A number: integral values that fit in 64 bits become `.int64`, others `.double`.
    static func number(_ d: Double) throws(PredicateViolation) -> PredicateValue {
        guard d.isFinite else { throw PredicateViolation("the number \(d) is not finite") }
        if d.rounded(.towardZero) == d, d >= -9_223_372_036_854_775_808.0, d < 9_223_372_036_854_775_808.0 {
            return .constant(.int64(Int64(d)))
        }
        return .constant(.double(d))
    }

    /// A stored value as a predicate operand: scalars become constants (numbers normalised,
    /// references reduced to their record ID), lists become lists; assets are refused.
    static func operand(_ value: FieldValue) throws(PredicateViolation) -> PredicateOperand {
        switch value {
        case .string, .int64, .bytes: return .scalar(.constant(value))
        case .double(let d): return .scalar(try number(d))
        case .date(let date):
            let seconds = date.timeIntervalSinceReferenceDate
            // (Not `\(date)`: Foundation traps when it prints a NaN date.)
            guard seconds.isFinite else { throw PredicateViolation("the date \(seconds) seconds since 2001 is not finite") }
            // -0.0 is the same instant as 0.0; keep one spelling so the canonical text is stable.
            return .scalar(.constant(.date(seconds == 0 ? Date(timeIntervalSinceReferenceDate: 0) : date)))
        case .reference(let reference): return .scalar(self.reference(reference.recordID))
        case .location(let location): return .location(try self.location(location))
        case .asset: throw PredicateViolation("assets cannot be used in a predicate")
        case .stringList(let list): return .list(list.map { .scalar(.constant(.string($0))) })
        case .int64List(let list): return .list(list.map { .scalar(.constant(.int64($0))) })
        case .doubleList(let list): return .list(try list.map { (d) throws(PredicateViolation) in .scalar(try number(d)) })
        case .bytesList(let list): return .list(list.map { .scalar(.constant(.bytes($0))) })
        case .dateList(let list):
            return .list(try list.map { (d) throws(PredicateViolation) in try operand(.date(d)) })
        case .locationList(let list):
            return .list(try list.map { (l) throws(PredicateViolation) in .location(try location(l)) })
        case .referenceList(let list): return .list(list.map { .scalar(reference($0.recordID)) })
        case .assetList: throw PredicateViolation("assets cannot be used in a predicate")
        }
    }

    /// A location operand: finite, in range (see ``Validation/locationProblem(_:)``).
    static func location(_ location: Location) throws(PredicateViolation) -> Location {
        if let problem = Validation.locationProblem(location) { throw PredicateViolation(problem) }
        return location
    }

    /// A record ID as a constant: a reference with action `.none`.
    static func reference(_ id: Record.ID) -> PredicateValue {
        .constant(.reference(Record.Reference(recordID: id, action: .none)))
    }

    /// The centre of a distance search, reduced to its coordinates so that equal
    /// coordinates make equal predicates (`+ 0` turns -0.0 into 0.0).
    static func center(_ location: Location) throws(PredicateViolation) -> Location {
        guard location.isValid else {
            throw PredicateViolation(
                "location (\(location.latitude), \(location.longitude)) is not a valid coordinate")
        }
        return Location(
            latitude: location.latitude + 0, longitude: location.longitude + 0, altitude: 0,
            horizontalAccuracy: 0, verticalAccuracy: -1, course: -1, speed: -1,
            timestamp: Date(timeIntervalSinceReferenceDate: 0))
    }

    /// An operand that must be a single constant.
    static func scalar(_ operand: PredicateOperand, for construct: String) throws(PredicateViolation) -> PredicateValue {
        switch operand {
        case .scalar(let value): return value
        case .location:
            throw PredicateViolation(
                "a location cannot be used with \(construct): locations are only searched with distanceToLocation:fromLocation:")
        case .list: throw PredicateViolation("\(construct) takes a single value, not a list")
        }
    }

    /// An operand that must be a list of constants.
    static func list(_ operand: PredicateOperand, for construct: String) throws(PredicateViolation) -> [PredicateValue] {
        guard case .list(let elements) = operand else {
            throw PredicateViolation("\(construct) needs a list, not \(operand.kindDescription)")
        }
        return try elements.map { (element) throws(PredicateViolation) in try scalar(element, for: construct) }
    }

    // MARK: - Nodes

    /// `key op value`.
    static func comparison(
        _ key: PredicateKey, _ op: ComparisonOperator, _ value: PredicateValue
    ) throws(PredicateViolation) -> PredicateNode {
        try check(key, accepts: value, in: op.rawValue)
        if op.isOrdering, value.kind == .reference || value.kind == .bytes {
            throw PredicateViolation("\(op.rawValue) cannot compare \(value.kind): use ==, != or IN")
        }
        return .comparison(key, op, value)
    }

    /// `key BETWEEN {lower, upper}`.
    static func between(_ key: PredicateKey, _ lower: PredicateValue, _ upper: PredicateValue) throws(PredicateViolation) -> PredicateNode {
        for bound in [lower, upper] {
            try check(key, accepts: bound, in: "BETWEEN")
            if bound.kind == .reference || bound.kind == .bytes {
                throw PredicateViolation("BETWEEN cannot compare \(bound.kind): it needs numbers, strings or dates")
            }
        }
        guard lower.kind == upper.kind else {
            throw PredicateViolation("BETWEEN bounds must have the same type, not \(lower.kind) and \(upper.kind)")
        }
        return .between(key, lower: lower, upper: upper)
    }

    /// `key IN {values}` on a scalar field.
    static func `in`(_ key: PredicateKey, _ values: [PredicateValue]) throws(PredicateViolation) -> PredicateNode {
        for value in values { try check(key, accepts: value, in: "IN") }
        try sameKind(values, in: "IN")
        return .in(key, values)
    }

    /// `list CONTAINS value`.
    static func listContains(_ key: PredicateKey, _ value: PredicateValue) throws(PredicateViolation) -> PredicateNode {
        try checkList(key, in: "list membership (CONTAINS, ANY, value IN list)")
        return .listContains(key, value)
    }

    /// `ANY list IN {values}`.
    static func listContainsAny(_ key: PredicateKey, _ values: [PredicateValue]) throws(PredicateViolation) -> PredicateNode {
        try checkList(key, in: "ANY … IN")
        try sameKind(values, in: "ANY … IN")
        return .listContainsAny(key, values)
    }

    /// `key BEGINSWITH prefix`.
    static func beginsWith(_ key: PredicateKey, _ prefix: PredicateValue) throws(PredicateViolation) -> PredicateNode {
        if key.isSystem { throw PredicateViolation("BEGINSWITH cannot be used on system field '\(key.name)'") }
        return .beginsWith(key, try string(prefix, for: "BEGINSWITH"))
    }

    /// `ANY list BEGINSWITH prefix`.
    static func listAnyBeginsWith(_ key: PredicateKey, _ prefix: PredicateValue) throws(PredicateViolation) -> PredicateNode {
        try checkList(key, in: "ANY … BEGINSWITH")
        return .listAnyBeginsWith(key, try string(prefix, for: "ANY … BEGINSWITH"))
    }

    /// `self CONTAINS text` or `allTokens TOKENMATCHES[cdl] text`.
    static func tokenSearch(_ text: PredicateValue, allTokens: Bool) throws(PredicateViolation) -> PredicateNode {
        let construct = allTokens ? "allTokens TOKENMATCHES[cdl]" : "self CONTAINS"
        return .tokenSearch(try string(text, for: construct), allTokens: allTokens)
    }

    /// `distanceToLocation:fromLocation:(key, center) < radius`.
    static func distance(
        _ key: PredicateKey, center: Location, radius: PredicateValue, inclusive: Bool
    ) throws(PredicateViolation) -> PredicateNode {
        if key.isSystem {
            throw PredicateViolation("distanceToLocation:fromLocation: cannot be used on system field '\(key.name)'")
        }
        let kilometres: Double
        switch radius {
        case .constant(.int64(let n)): kilometres = Double(n)
        case .constant(.double(let d)): kilometres = d
        default:
            throw PredicateViolation("the radius of distanceToLocation:fromLocation: must be a number of kilometres, not \(radius.kind)")
        }
        guard kilometres >= 0 else {
            throw PredicateViolation("the radius of distanceToLocation:fromLocation: must not be negative")
        }
        return .distance(key, center: try self.center(center), radiusKilometres: kilometres + 0, inclusive: inclusive)
    }

    /// `NOT node`, for the nodes CloudKit lets you negate.
    static func not(_ node: PredicateNode) throws(PredicateViolation) -> PredicateNode {
        switch node {
        case .comparison, .in, .listContains, .listContainsAny, .beginsWith, .listAnyBeginsWith:
            return .not(node)
        case .and: throw PredicateViolation("NOT over an AND compound is not supported by CloudKit")
        case .between: throw PredicateViolation("NOT over BETWEEN is not supported by CloudKit")
        case .tokenSearch(_, let allTokens):
            throw PredicateViolation(
                "NOT over \(allTokens ? "allTokens TOKENMATCHES" : "self CONTAINS") (token search) is not supported by CloudKit")
        case .distance: throw PredicateViolation("NOT over distanceToLocation:fromLocation: is not supported by CloudKit")
        case .not: throw PredicateViolation("NOT over NOT is not supported: drop both")
        case .value(let value):
            throw PredicateViolation(
                "NOT over \(value ? "TRUEPREDICATE" : "FALSEPREDICATE") is not supported: use \(value ? "FALSEPREDICATE" : "TRUEPREDICATE")"
            )
        }
    }

    /// `a AND b AND …`, flattened: no AND inside an AND; one node is itself; none is TRUEPREDICATE.
    static func and(_ nodes: [PredicateNode]) -> PredicateNode {
        var flat: [PredicateNode] = []
        for node in nodes {
            if case .and(let children) = node { flat += children } else { flat.append(node) }
        }
        switch flat.count {
        case 0: return .value(true)
        case 1: return flat[0]
        default: return .and(flat)
        }
    }

    // MARK: - Checks

    private static func string(_ value: PredicateValue, for construct: String) throws(PredicateViolation) -> String {
        guard case .constant(.string(let s)) = value else {
            throw PredicateViolation("\(construct) needs a string, not \(value.kind)")
        }
        return s
    }

    /// System keys take only values of their own type.
    private static func check(_ key: PredicateKey, accepts value: PredicateValue, in construct: String) throws(PredicateViolation) {
        switch key.systemKind {
        case .reference?:
            guard value.kind == .reference else {
                throw PredicateViolation(
                    "system field '\(key.name)' compares with a Record.ID or Record.Reference, not \(value.kind)")
            }
            if construct == "BETWEEN" { throw PredicateViolation("BETWEEN cannot be used on system field '\(key.name)'") }
        case .date?:
            guard value.kind == .date else {
                throw PredicateViolation("system field '\(key.name)' compares with a date, not \(value.kind)")
            }
        case nil:
            break
        }
    }

    private static func checkList(_ key: PredicateKey, in construct: String) throws(PredicateViolation) {
        if key.isSystem {
            throw PredicateViolation("\(construct) needs a list field; system field '\(key.name)' is not a list")
        }
    }

    private static func sameKind(_ values: [PredicateValue], in construct: String) throws(PredicateViolation) {
        guard let first = values.first?.kind else { return }
        if let other = values.first(where: { $0.kind != first }) {
            throw PredicateViolation("the \(construct) list mixes \(first) and \(other.kind)")
        }
    }
}
