import Foundation

/// The key on the left of a predicate: a user field or one of CloudKit's system fields.
///
/// Keys are plain names (`[A-Za-z][A-Za-z0-9_]*`); CloudKit allows no key paths into
/// related records. User fields cannot be named like a system field (the store reserves
/// those names), so the name alone tells which kind of field a key is.
struct PredicateKey: Hashable, Sendable {
    /// The field's name.
    let name: String

    /// What a system key holds, which fixes what it can be compared with.
    enum SystemKind: Sendable {
        /// `recordID`, `creatorUserRecordID`, `lastModifiedUserRecordID`, `parent`, `share`:
        /// compared by record ID, with `==`, `!=` and `IN`.
        case reference
        /// `creationDate`, `modificationDate`: compared with dates.
        case date
    }

    /// System keys that compare by record ID.
    static let referenceSystemKeys: Set<String> = [
        Record.SystemFieldKey.recordID, Record.SystemFieldKey.creatorUserRecordID,
        Record.SystemFieldKey.lastModifiedUserRecordID, Record.SystemFieldKey.parent,
        Record.SystemFieldKey.share,
    ]
    /// System keys that hold dates.
    static let dateSystemKeys: Set<String> = [
        Record.SystemFieldKey.creationDate, Record.SystemFieldKey.modificationDate,
    ]

    /// The system field this key names, if any.
    var systemKind: SystemKind? {
        if Self.referenceSystemKeys.contains(name) { return .reference }
        if Self.dateSystemKeys.contains(name) { return .date }
        return nil
    }

    /// Whether the key names a system field rather than a user field.
    var isSystem: Bool { systemKind != nil }

    /// The key as written in canonical predicate text: reserved words get NSPredicate's `#` escape.
    var formatted: String {
        PredicateLexer.reservedWords.contains(name.uppercased()) ? "#" + name : name
    }
}

/// A constant on the right of a predicate.
enum PredicateValue: Hashable, Sendable {
    /// A scalar constant: `.string`, `.int64`, `.double` (finite, not integral), `.bytes`,
    /// `.date` or `.reference` (always with action `.none`: references compare by record ID).
    case constant(FieldValue)
    /// The `now()` function: the time the query runs.
    case now

    /// The broad kind of a value, which decides the operators it may be used with.
    enum Kind: Sendable, CustomStringConvertible {
        case string, number, date, bytes, reference

        var description: String {
            switch self {
            case .string: "a string"
            case .number: "a number"
            case .date: "a date"
            case .bytes: "bytes"
            case .reference: "a reference"
            }
        }
    }

    var kind: Kind {
        switch self {
        case .now: return .date
        case .constant(let value):
            switch value {
            case .string: return .string
            case .int64, .double: return .number
            case .date: return .date
            case .bytes: return .bytes
            default: return .reference
            }
        }
    }

    /// The value as written in canonical predicate text.
    var formatted: String {
        switch self {
        case .now: return "now()"
        case .constant(let value):
            switch value {
            case .string(let s): return PredicateValue.quoted(s)
            case .int64(let n): return String(n)
            case .double(let d): return d.description
            case .bytes(let data):
                let hex = data.map { byte in
                    let digits = String(byte, radix: 16)
                    return digits.count == 1 ? "0" + digits : digits
                }.joined()
                return "CAST(\"\(hex)\", \"NSData\")"
            case .date(let date):
                return "CAST(\(date.timeIntervalSinceReferenceDate.description), \"NSDate\")"
            case .reference(let reference):
                let id = reference.recordID
                if id.zoneID == .default { return "CAST(\(Self.quoted(id.recordName)), \"CKReference\")" }
                let parts = [id.recordName, id.zoneID.zoneName, id.zoneID.ownerName].map(Self.quoted)
                return "CAST({\(parts.joined(separator: ", "))}, \"CKReference\")"
            default:
                preconditionFailure("predicate constants are scalars, never \(value.fieldType)")
            }
        }
    }

    /// `s` in double quotes, with backslash escapes for quotes, backslashes and control characters.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// The canonical text of a location used as the centre of a distance search.
    static func formatted(_ location: Location) -> String {
        "CAST({\(location.latitude.description), \(location.longitude.description)}, \"CLLocation\")"
    }
}

/// A comparison operator, after folding CloudKit's spellings (`=` is `==`, `<>` is `!=`,
/// `=<` is `<=`, `=>` is `>=`): the public ``QueryPredicate/Operator`` itself, so
/// ``QueryPredicate/structure`` needs no mapping that a new case could break.
typealias ComparisonOperator = QueryPredicate.Operator

extension QueryPredicate.Operator {
    /// Whether the operator orders values (`<`, `<=`, `>`, `>=`) rather than testing equality.
    var isOrdering: Bool { self != .equal && self != .notEqual }
}

/// The syntax tree of a ``QueryPredicate``, already checked against CloudKit's rules.
///
/// Every node is valid by construction: ``PredicateRules`` builds them for the parser and
/// the builder alike, so both produce equal trees for equivalent input. `and` is flattened
/// and never has fewer than two children; `not` wraps only a node CloudKit lets you negate.
indirect enum PredicateNode: Hashable, Sendable {
    /// `TRUEPREDICATE` or `FALSEPREDICATE`.
    case value(Bool)
    /// `key op value`.
    case comparison(PredicateKey, ComparisonOperator, PredicateValue)
    /// `key BETWEEN {lower, upper}` (inclusive).
    case between(PredicateKey, lower: PredicateValue, upper: PredicateValue)
    /// `key IN {values}`: a scalar field equals one of the values.
    case `in`(PredicateKey, [PredicateValue])
    /// `key CONTAINS value`, `ANY key = value`, `value IN key`: a list field has the element.
    case listContains(PredicateKey, PredicateValue)
    /// `ANY key IN {values}`: a list field has at least one of the values.
    case listContainsAny(PredicateKey, [PredicateValue])
    /// `ANY key BEGINSWITH prefix`: an element of a string list starts with the prefix.
    case listAnyBeginsWith(PredicateKey, String)
    /// `key BEGINSWITH prefix`: a string field starts with the prefix.
    case beginsWith(PredicateKey, String)
    /// `self CONTAINS text` (any token, `allTokens == false`) or
    /// `allTokens TOKENMATCHES[cdl] text` (every token).
    case tokenSearch(String, allTokens: Bool)
    /// `distanceToLocation:fromLocation:(key, center) < radius` (`<=` when inclusive).
    case distance(PredicateKey, center: Location, radiusKilometres: Double, inclusive: Bool)
    /// `NOT (node)`.
    case not(PredicateNode)
    /// `a AND b AND …`.
    case and([PredicateNode])

    /// The node as canonical predicate text, which parses back to an equal node.
    var formatted: String {
        switch self {
        case .value(let value):
            return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let key, let op, let value):
            return "\(key.formatted) \(op.rawValue) \(value.formatted)"
        case .between(let key, let lower, let upper):
            return "\(key.formatted) BETWEEN {\(lower.formatted), \(upper.formatted)}"
        case .in(let key, let values):
            return "\(key.formatted) IN \(Self.formatted(values))"
        case .listContains(let key, let value):
            return "\(key.formatted) CONTAINS \(value.formatted)"
        case .listContainsAny(let key, let values):
            return "ANY \(key.formatted) IN \(Self.formatted(values))"
        case .listAnyBeginsWith(let key, let prefix):
            return "ANY \(key.formatted) BEGINSWITH \(PredicateValue.quoted(prefix))"
        case .beginsWith(let key, let prefix):
            return "\(key.formatted) BEGINSWITH \(PredicateValue.quoted(prefix))"
        case .tokenSearch(let text, let allTokens):
            return allTokens
                ? "allTokens TOKENMATCHES[cdl] \(PredicateValue.quoted(text))"
                : "self CONTAINS \(PredicateValue.quoted(text))"
        case .distance(let key, let center, let radius, let inclusive):
            return "distanceToLocation:fromLocation:(\(key.formatted), \(PredicateValue.formatted(center))) "
                + "\(inclusive ? "<=" : "<") \(radius.description)"
        case .not(let node):
            return "NOT (\(node.formatted))"
        case .and(let nodes):
            return nodes.map(\.formatted).joined(separator: " AND ")
        }
    }

    private static func formatted(_ values: [PredicateValue]) -> String {
        "{" + values.map(\.formatted).joined(separator: ", ") + "}"
    }
}
