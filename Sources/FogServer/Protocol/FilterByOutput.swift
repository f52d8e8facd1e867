import FogKit
import Foundation

/// Writes a FogKit predicate back as a query dictionary's `filterBy`: the reverse of
/// ``QueryDictionary/query(zone:)``, for the predicate shapes a filter list can express.
///
/// Each condition of the predicate's top-level `AND` becomes one filter, with the
/// comparator `records/query` reads into that condition (`NOT (…)` as the `NOT_`
/// comparator); values keep their wire `type`. Shapes no filter list expresses (`BETWEEN`,
/// `now()`, `FALSEPREDICATE`, a `<=` distance, a `NOT` around a comparison) give `nil`, so
/// that a response leaves `filterBy` out rather than answering a different query.
/// `LIST_CONTAINS_ALL` was an `AND` of `CONTAINS`, so it comes back as one
/// `LIST_CONTAINS` per item, and token searches name the field `allTokens`.
struct FilterByOutput {
    let output: RecordOutput

    /// The field name written for token searches (`CONTAINS_ANY_TOKENS`,
    /// `CONTAINS_ALL_TOKENS`), which search every string field and do not keep the name sent.
    static let tokenFieldName = "allTokens"

    /// The filters of `predicate`, or `nil` when a filter list cannot express it.
    func filters(_ predicate: QueryPredicate) -> [JSON]? {
        switch predicate.structure {
        case .value(true): return []
        case .and(let conditions):
            var filters: [JSON] = []
            for condition in conditions {
                guard let filter = filter(condition) else { return nil }
                filters.append(filter)
            }
            return filters
        case let condition:
            return filter(condition).map { [$0] }
        }
    }

    private func filter(_ condition: QueryPredicate.Structure) -> JSON? {
        switch condition {
        case .comparison(let key, let op, .value(let value)):
            let comparator =
                switch op {
                case .equal: "EQUALS"
                case .notEqual: "NOT_EQUALS"
                case .less: "LESS_THAN"
                case .lessOrEqual: "LESS_THAN_OR_EQUALS"
                case .greater: "GREATER_THAN"
                case .greaterOrEqual: "GREATER_THAN_OR_EQUALS"
                }
            return make(comparator, key: key, value: value)
        case .in(let key, let values): return list(values).flatMap { make("IN", key: key, value: $0) }
        case .listContains(let key, .value(let value)): return make("LIST_CONTAINS", key: key, value: value)
        case .listContainsAny(let key, let values): return list(values).flatMap { make("LIST_CONTAINS_ANY", key: key, value: $0) }
        case .listAnyBeginsWith(let key, let prefix): return make("LIST_MEMBER_BEGINS_WITH", key: key, value: .string(prefix))
        case .beginsWith(let key, let prefix): return make("BEGINS_WITH", key: key, value: .string(prefix))
        case .tokenSearch(let text, let allTokens):
            return make(allTokens ? "CONTAINS_ALL_TOKENS" : "CONTAINS_ANY_TOKENS", key: Self.tokenFieldName, value: .string(text))
        case .distance(let key, let center, let radius, false):
            return make("NEAR", key: key, value: .location(center), distance: radius * 1000)
        case .not(let inner):
            // Only the conditions records/query reads a NOT_ comparator into.
            let negated: String
            switch inner {
            case .in: negated = "NOT_IN"
            case .listContains: negated = "NOT_LIST_CONTAINS"
            case .listContainsAny: negated = "NOT_LIST_CONTAINS_ANY"
            case .listAnyBeginsWith: negated = "NOT_LIST_MEMBER_BEGINS_WITH"
            case .beginsWith: negated = "NOT_BEGINS_WITH"
            default: return nil
            }
            guard case .object(var members)? = filter(inner) else { return nil }
            members[0] = ("comparator", .string(negated))
            return .object(members)
        default:
            return nil
        }
    }

    /// The list value of `IN` and `ANY … IN`: the operands as one typed list, or `nil` when
    /// one is `now()` or they mix kinds.
    private func list(_ operands: [QueryPredicate.Operand]) -> FieldValue? {
        var values: [FieldValue] = []
        for operand in operands {
            guard case .value(let value) = operand else { return nil }
            values.append(value)
        }
        var strings: [String] = []
        var ints: [Int64] = []
        var doubles: [Double] = []
        var dates: [Date] = []
        var bytes: [Data] = []
        var references: [Record.Reference] = []
        for value in values {
            switch value {
            case .string(let s): strings.append(s)
            case .int64(let i):
                ints.append(i)
                doubles.append(Double(i))
            case .double(let d): doubles.append(d)
            case .date(let d): dates.append(d)
            case .bytes(let b): bytes.append(b)
            case .reference(let r): references.append(r)
            default: return nil
            }
        }
        let count = values.count
        if strings.count == count { return .stringList(strings) }
        if ints.count == count { return .int64List(ints) }
        if doubles.count == count { return .doubleList(doubles) }
        if dates.count == count { return .dateList(dates) }
        if bytes.count == count { return .bytesList(bytes) }
        if references.count == count { return .referenceList(references) }
        return nil
    }

    private func make(_ comparator: String, key: String, value: FieldValue, distance: Double? = nil) -> JSON? {
        guard let fieldValue = fieldValue(value) else { return nil }
        var members: [(String, JSON)] = [("comparator", .string(comparator))]
        if let system = Self.systemFieldName(key) {
            members.append(("systemFieldName", .string(system)))
        } else {
            members.append(("fieldName", .string(key)))
        }
        members.append(("fieldValue", fieldValue))
        if let distance { members.append(("distance", .double(distance))) }
        return .object(members)
    }

    /// A typed field-value dictionary; references carry the zone ID as responses write it.
    private func fieldValue(_ value: FieldValue) -> JSON? {
        func reference(_ r: Record.Reference) -> JSON {
            .object([
                ("recordName", .string(r.recordID.recordName)), ("zoneID", output.zoneIDJSON(r.recordID.zoneID)),
                ("action", .string(r.action == .deleteSelf ? "DELETE_SELF" : "NONE")),
            ])
        }
        switch value {
        case .reference(let r): return .object([("value", reference(r)), ("type", .string("REFERENCE"))])
        case .referenceList(let l): return .object([("value", .array(l.map(reference))), ("type", .string("REFERENCE_LIST"))])
        default:
            guard let dictionary = try? WebServices.FieldValueDictionary(value), let data = try? JSONEncoder().encode(dictionary)
            else { return nil }
            return .raw(Array(data))
        }
    }

    /// The Web Services name of a FogKit system field key, or `nil` for a user field.
    static func systemFieldName(_ key: String) -> String? {
        switch key {
        case Record.SystemFieldKey.recordID: "recordName"
        case Record.SystemFieldKey.creationDate: "createdTimestamp"
        case Record.SystemFieldKey.modificationDate: "modifiedTimestamp"
        case Record.SystemFieldKey.creatorUserRecordID: "createdUserRecordName"
        case Record.SystemFieldKey.lastModifiedUserRecordID: "modifiedUserRecordName"
        case Record.SystemFieldKey.share: "share"
        case Record.SystemFieldKey.parent: "parent"
        default: nil
        }
    }
}
