import FogKit
import Foundation

/// A `records/query` request's `query`: `{recordType, filterBy, sortBy}`.
struct QueryDictionary: Decodable, Sendable {
    var recordType: String
    var filterBy: [Filter]?
    var sortBy: [Sort]?

    /// A filter: `{comparator, fieldName | systemFieldName, fieldValue, distance}`.
    struct Filter: Decodable, Sendable {
        var comparator: String
        var fieldName: String?
        var systemFieldName: String?
        var fieldValue: WebServices.FieldValueDictionary
        /// A radius in metres, for `NEAR`.
        var distance: Double?
    }

    /// A sort descriptor: `{fieldName | systemFieldName, ascending, relativeLocation}`.
    struct Sort: Decodable, Sendable {
        var fieldName: String?
        var systemFieldName: String?
        var ascending: Bool?
        var relativeLocation: WebServices.FieldValueDictionary?
    }

    /// The FogKit query: the filters joined with AND, the sort descriptors in order.
    func query(zone: RecordZone.ID) throws -> Query {
        var predicates: [QueryPredicate] = []
        for (i, filter) in (filterBy ?? []).enumerated() {
            predicates.append(try filter.predicate(zone: zone, path: "query.filterBy[\(i)]"))
        }
        let query = Query(recordType: recordType, predicate: predicates.isEmpty ? QueryPredicate(value: true) : .and(predicates))
        if let sortBy, !sortBy.isEmpty {
            query.sortDescriptors = try sortBy.enumerated().map { i, sort in try sort.descriptor(zone: zone, path: "query.sortBy[\(i)]") }
        }
        return query
    }

    /// FogKit's name of a Web Services system field.
    static func systemKey(_ name: String, path: String) throws(ServerError) -> String {
        switch name {
        case "recordName": Record.SystemFieldKey.recordID
        case "createdTimestamp": Record.SystemFieldKey.creationDate
        case "modifiedTimestamp": Record.SystemFieldKey.modificationDate
        case "createdUserRecordName": Record.SystemFieldKey.creatorUserRecordID
        case "modifiedUserRecordName": Record.SystemFieldKey.lastModifiedUserRecordID
        case "share": Record.SystemFieldKey.share
        case "parent": Record.SystemFieldKey.parent
        default: throw ServerError(.badRequest, "\(path).systemFieldName: unknown system field \"\(name)\"")
        }
    }

    static func key(fieldName: String?, systemFieldName: String?, path: String) throws(ServerError) -> (key: String, system: Bool) {
        if let systemFieldName { return (try systemKey(systemFieldName, path: path), true) }
        guard let fieldName, !fieldName.isEmpty else { throw ServerError(.badRequest, "\(path): needs fieldName or systemFieldName") }
        return (fieldName, false)
    }
}

extension QueryDictionary.Filter {
    func predicate(zone: RecordZone.ID, path: String) throws -> QueryPredicate {
        let (key, system) = try QueryDictionary.key(fieldName: fieldName, systemFieldName: systemFieldName, path: path)
        guard var value = try fieldValue.fieldValue(defaultZone: zone, field: "\(path).fieldValue") else {
            throw ServerError(.badRequest, "\(path).fieldValue: has no value")
        }
        var argument: Any = value
        if system, key == Record.SystemFieldKey.recordID || key.hasSuffix("UserRecordID") {
            // Record names may come as strings or as references.
            argument = try Self.recordIDs(value, zone: zone, path: path)
        } else if case .referenceList = value {
            argument = value
        } else if comparator == "IN" || comparator == "NOT_IN" {
            value = try Self.list(value, path: path)
            argument = value
        }
        func format(_ text: String) throws -> QueryPredicate { try QueryPredicate(format: text, argumentArray: [key, argument]) }
        do {
            switch comparator {
            case "EQUALS": return try format("%K == %@")
            case "NOT_EQUALS": return try format("%K != %@")
            case "LESS_THAN": return try format("%K < %@")
            case "LESS_THAN_OR_EQUALS": return try format("%K <= %@")
            case "GREATER_THAN": return try format("%K > %@")
            case "GREATER_THAN_OR_EQUALS": return try format("%K >= %@")
            case "IN": return try format("%K IN %@")
            case "NOT_IN": return try format("NOT (%K IN %@)")
            case "BEGINS_WITH": return try format("%K BEGINSWITH %@")
            case "NOT_BEGINS_WITH": return try format("NOT (%K BEGINSWITH %@)")
            case "LIST_CONTAINS": return try format("%K CONTAINS %@")
            case "NOT_LIST_CONTAINS": return try format("NOT (%K CONTAINS %@)")
            case "LIST_CONTAINS_ANY": return try format("ANY %K IN %@")
            case "NOT_LIST_CONTAINS_ANY": return try format("NOT (ANY %K IN %@)")
            case "LIST_CONTAINS_ALL":
                return .and(
                    try Self.items(value, path: path).map { try QueryPredicate(format: "%K CONTAINS %@", argumentArray: [key, $0]) })
            case "NOT_LIST_CONTAINS_ALL":
                // "Some item is missing" is an OR of NOT CONTAINS, which CloudKit's predicates lack.
                throw ServerError(
                    .badRequest, "\(path).comparator: NOT_LIST_CONTAINS_ALL is not supported: CloudKit's queries have no OR")
            case "LIST_MEMBER_BEGINS_WITH": return try format("ANY %K BEGINSWITH %@")
            case "NOT_LIST_MEMBER_BEGINS_WITH": return try format("NOT (ANY %K BEGINSWITH %@)")
            case "CONTAINS_ANY_TOKENS":
                return try QueryPredicate(format: "self CONTAINS %@", argumentArray: [try Self.text(value, path: path)])
            case "CONTAINS_ALL_TOKENS":
                return try QueryPredicate(format: "allTokens TOKENMATCHES[cdl] %@", argumentArray: [try Self.text(value, path: path)])
            case "NEAR":
                guard case .location(let center) = value else {
                    throw ServerError(.badRequest, "\(path).fieldValue: NEAR needs a LOCATION value")
                }
                guard let distance, distance.isFinite, distance >= 0 else {
                    throw ServerError(.badRequest, "\(path).distance: NEAR needs a distance in metres")
                }
                return try QueryPredicate(
                    format: "distanceToLocation:fromLocation:(%K, %@) < %@", argumentArray: [key, center, distance / 1000])
            default:
                throw ServerError(.badRequest, "\(path).comparator: unknown comparator \"\(comparator)\"")
            }
        } catch let error as FogError {
            throw ServerError(.badRequest, "\(path): \(error.message)")
        }
    }

    private static func items(_ value: FieldValue, path: String) throws(ServerError) -> [FieldValue] {
        switch value {
        case .stringList(let l): l.map(FieldValue.string)
        case .int64List(let l): l.map(FieldValue.int64)
        case .doubleList(let l): l.map(FieldValue.double)
        case .dateList(let l): l.map(FieldValue.date)
        case .referenceList(let l): l.map(FieldValue.reference)
        case .bytesList(let l): l.map(FieldValue.bytes)
        case .locationList(let l): l.map(FieldValue.location)
        default: [value]
        }
    }

    private static func list(_ value: FieldValue, path: String) throws(ServerError) -> FieldValue {
        switch value {
        case .string(let s): .stringList([s])
        case .int64(let i): .int64List([i])
        case .double(let d): .doubleList([d])
        case .date(let d): .dateList([d])
        case .reference(let r): .referenceList([r])
        default: value
        }
    }

    private static func text(_ value: FieldValue, path: String) throws(ServerError) -> String {
        guard case .string(let s) = value else { throw ServerError(.badRequest, "\(path).fieldValue: token search needs a STRING") }
        return s
    }

    /// Record IDs from names given as strings or references (one, or a list).
    private static func recordIDs(_ value: FieldValue, zone: RecordZone.ID, path: String) throws(ServerError) -> Any {
        func id(_ name: String) -> Record.ID { Record.ID(recordName: name, zoneID: zone) }
        switch value {
        case .string(let s): return id(s)
        case .reference(let r): return r.recordID
        case .stringList(let l): return l.map(id)
        case .referenceList(let l): return l.map(\.recordID)
        default: throw ServerError(.badRequest, "\(path).fieldValue: a record name is a STRING or a REFERENCE")
        }
    }
}

extension QueryDictionary.Sort {
    func descriptor(zone: RecordZone.ID, path: String) throws -> Query.SortDescriptor {
        let (key, _) = try QueryDictionary.key(fieldName: fieldName, systemFieldName: systemFieldName, path: path)
        if let relativeLocation {
            guard case .location(let location)? = try relativeLocation.fieldValue(defaultZone: zone, field: "\(path).relativeLocation")
            else { throw ServerError(.badRequest, "\(path).relativeLocation: is not a LOCATION") }
            return Query.SortDescriptor(key: key, relativeLocation: location)
        }
        return Query.SortDescriptor(key: key, ascending: ascending ?? true)
    }
}
