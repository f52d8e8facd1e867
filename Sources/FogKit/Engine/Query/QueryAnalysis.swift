import Foundation

/// What a query needs from the schema: its conditions checked against the fields' types,
/// the indexes each condition and sort key needs, and the fields to decode.
struct QueryAnalysis {
    /// An index a condition or sort key needs. `options` is what would serve it (any of them).
    struct Requirement: Hashable {
        let field: String
        let options: IndexOptions
        /// CloudKit's word for the option in error messages.
        let word: String
    }

    var requirements: [Requirement] = []
    /// The user fields the predicate and sort read (system fields are always decoded).
    var fields: Set<String> = []
    /// Whether a token search reads the searched fields.
    var searchesTokens = false

    /// The type of a field as predicates see it: system fields by their kind, user fields
    /// from the schema (`nil` when the field was never written).
    typealias FieldTypes = (String) throws -> FieldType?

    /// CloudKit's schema name of the record ID field, which advice and errors use.
    static let recordNameField = "recordName"

    /// Checks `node` and `order` against the field types and collects what they need.
    static func analyze(_ node: PredicateNode, order: [Query.SortDescriptor], types: FieldTypes) throws -> QueryAnalysis {
        var analysis = QueryAnalysis()
        var hasCondition = false
        try analysis.visit(node, types: types, hasCondition: &hasCondition)
        if !hasCondition {
            analysis.requirements.append(Requirement(field: recordNameField, options: .queryable, word: "queryable"))
        }
        for sort in order { try analysis.check(sort, types: types) }
        return analysis
    }

    private mutating func visit(_ node: PredicateNode, types: FieldTypes, hasCondition: inout Bool) throws {
        switch node {
        case .value: return
        case .and(let nodes): for n in nodes { try visit(n, types: types, hasCondition: &hasCondition) }
        case .not(let inner): try visit(inner, types: types, hasCondition: &hasCondition)
        case .comparison(let key, let op, let value):
            hasCondition = true
            try scalar(key, types: types, values: [value], ordering: op.isOrdering, what: "\(op.rawValue)")
            need(key.name, op.isOrdering ? .sortable : .queryable)
        case .between(let key, let lower, let upper):
            hasCondition = true
            try scalar(key, types: types, values: [lower, upper], ordering: true, what: "BETWEEN")
            need(key.name, .sortable)
        case .in(let key, let values):
            hasCondition = true
            try scalar(key, types: types, values: values, ordering: false, what: "IN")
            need(key.name, .queryable)
        case .listContains(let key, let value):
            hasCondition = true
            try list(key, types: types, values: [value])
            need(key.name, .queryable)
        case .listContainsAny(let key, let values):
            hasCondition = true
            try list(key, types: types, values: values)
            need(key.name, .queryable)
        case .listAnyBeginsWith(let key, _):
            hasCondition = true
            let type = try fieldType(key, types: types)
            if let type, type != .stringList {
                throw FogError(
                    .invalidArguments,
                    message: "ANY \(key.name) BEGINSWITH needs a list of strings; field '\(key.name)' holds \(type.name) values")
            }
            need(key.name, .sortable)
        case .beginsWith(let key, let prefix):
            hasCondition = true
            try scalar(key, types: types, values: [.constant(.string(prefix))], ordering: true, what: "BEGINSWITH")
            need(key.name, .sortable)
        case .tokenSearch:
            hasCondition = true
            searchesTokens = true
            requirements.append(Requirement(field: "self", options: .searchable, word: "searchable"))
        case .distance(let key, _, _, _):
            hasCondition = true
            let type = try fieldType(key, types: types)
            if let type, type != .location {
                throw FogError(
                    .invalidArguments,
                    message: "distanceToLocation:fromLocation: needs a location; field '\(key.name)' holds \(type.name) values")
            }
            requirements.append(Requirement(field: key.name, options: [.queryable, .sortable], word: "queryable"))
            fields.insert(key.name)
        }
    }

    private mutating func need(_ field: String, _ options: IndexOptions) {
        if !PredicateKey(name: field).isSystem { fields.insert(field) }
        let named = field == Record.SystemFieldKey.recordID ? Self.recordNameField : field
        requirements.append(Requirement(field: named, options: options, word: options == .sortable ? "sortable" : "queryable"))
    }

    private func fieldType(_ key: PredicateKey, types: FieldTypes) throws -> FieldType? {
        switch key.systemKind {
        case .reference?: return .reference
        case .date?: return .timestamp
        case nil: return try types(key.name)
        }
    }

    private func scalar(_ key: PredicateKey, types: FieldTypes, values: [PredicateValue], ordering: Bool, what: String) throws {
        guard let type = try fieldType(key, types: types) else { return }
        let name = key.name
        if type.isList {
            throw FogError(
                .invalidArguments,
                message:
                    "field '\(name)' is a list (\(type.name)); use '\(name) CONTAINS x', 'ANY \(name) = x' or 'ANY \(name) IN {…}' instead of \(what)"
            )
        }
        switch type {
        case .location:
            throw FogError(
                .invalidArguments, message: "field '\(name)' is a location; query it with distanceToLocation:fromLocation:, not \(what)")
        case .asset:
            throw FogError(.invalidArguments, message: "field '\(name)' holds assets, which cannot be queried")
        case .reference where ordering:
            throw FogError(
                .invalidArguments, message: "field '\(name)' holds references, which compare only with ==, != and IN, not \(what)")
        default: break
        }
        for value in values { try Self.checkKind(value.kind, of: type, field: name) }
    }

    private func list(_ key: PredicateKey, types: FieldTypes, values: [PredicateValue]) throws {
        guard let type = try fieldType(key, types: types) else { return }
        guard type.isList else {
            throw FogError(
                .invalidArguments,
                message:
                    "field '\(key.name)' is not a list (\(type.name)); CONTAINS, ANY and 'x IN field' test list membership — use == or IN {…}"
            )
        }
        guard let element = Self.elementType(of: type), element != .location, element != .asset else {
            throw FogError(.invalidArguments, message: "field '\(key.name)' (\(type.name)) cannot be searched by element")
        }
        for value in values { try Self.checkKind(value.kind, of: element, field: key.name) }
    }

    static func elementType(of list: FieldType) -> FieldType? { FieldType(rawValue: list.rawValue & 0x0F) }

    static func checkKind(_ kind: PredicateValue.Kind, of type: FieldType, field: String) throws {
        let fits: Bool
        switch type {
        case .string: fits = kind == .string
        case .int64, .double: fits = kind == .number
        case .timestamp: fits = kind == .date
        case .bytes: fits = kind == .bytes
        case .reference: fits = kind == .reference
        default: fits = false
        }
        guard fits else {
            throw FogError(.invalidArguments, message: "field '\(field)' holds \(type.name) values; cannot compare it with \(kind)")
        }
    }

    private mutating func check(_ sort: Query.SortDescriptor, types: FieldTypes) throws {
        let key = sort.key
        guard Validation.isIdentifier(key) else {
            throw FogError(.invalidArguments, message: "sort key \(Validation.quoted(key)) is not a field name")
        }
        let system = PredicateKey(name: key)
        if system.systemKind == .reference {
            throw FogError(.invalidArguments, message: "cannot sort by \(key); sort by a field, creationDate or modificationDate")
        }
        if ["recordType", "recordChangeTag"].contains(key) {
            throw FogError(.invalidArguments, message: "cannot sort by \(key)")
        }
        let type = try fieldType(system, types: types)
        if let center = sort.relativeLocation {
            guard center.isValid else {
                throw FogError(
                    .invalidArguments,
                    message:
                        "the sort by distance on '\(key)' has relative location <\(center.latitude),\(center.longitude)>, which is out of range or not finite"
                )
            }
            if let type, type != .location {
                throw FogError(.invalidArguments, message: "a location sort needs a location field; '\(key)' holds \(type.name) values")
            }
            requirements.append(Requirement(field: key, options: [.queryable, .sortable], word: "sortable"))
            fields.insert(key)
            return
        }
        if let type {
            switch type {
            case .string, .int64, .double, .timestamp, .bytes: break
            case .location:
                throw FogError(
                    .invalidArguments, message: "field '\(key)' is a location; sort it with LocationSortDescriptor(key:relativeLocation:)")
            default:
                throw FogError(.invalidArguments, message: "cannot sort by field '\(key)', which holds \(type.name) values")
            }
        }
        need(key, .sortable)
    }

    /// The requirements `indexes` do not meet.
    func missing(in indexes: TypeIndexes) -> [Requirement] {
        var seen: Set<Requirement> = []
        return requirements.filter { r in
            let met: Bool
            if r.options == .searchable {
                met = !indexes.searchableFields.isEmpty
            } else {
                let field = r.field == Self.recordNameField ? Record.SystemFieldKey.recordID : r.field
                met = !indexes.options(field).isDisjoint(with: r.options)
            }
            return !met && seen.insert(r).inserted
        }
    }
}
