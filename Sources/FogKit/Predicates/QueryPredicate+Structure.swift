import Foundation

extension QueryPredicate {
    /// A predicate's syntax tree, read-only, for code that translates predicates into another
    /// query language (FogServer writes a query subscription's predicate back as CloudKit Web
    /// Services' `filterBy`).
    ///
    /// The tree is the canonical one that equality compares: `AND`s are flattened, spellings
    /// folded, booleans are integers, and a `Double` constant that is a whole number is an
    /// `int64` (as the parser reads `3.0`).
    public indirect enum Structure: Sendable, Hashable {
        /// `TRUEPREDICATE` or `FALSEPREDICATE`.
        case value(Bool)
        /// `key op value`.
        case comparison(key: String, operator: Operator, value: Operand)
        /// `key BETWEEN {lower, upper}` (inclusive).
        case between(key: String, lower: Operand, upper: Operand)
        /// `key IN {values}`: a scalar field equals one of the values.
        case `in`(key: String, values: [Operand])
        /// `key CONTAINS value`: a list field has the element.
        case listContains(key: String, value: Operand)
        /// `ANY key IN {values}`: a list field has at least one of the values.
        case listContainsAny(key: String, values: [Operand])
        /// `ANY key BEGINSWITH prefix`: an element of a string list starts with the prefix.
        case listAnyBeginsWith(key: String, prefix: String)
        /// `key BEGINSWITH prefix`: a string field starts with the prefix.
        case beginsWith(key: String, prefix: String)
        /// `self CONTAINS text` (any token) or `allTokens TOKENMATCHES[cdl] text` (every token).
        case tokenSearch(text: String, allTokens: Bool)
        /// `distanceToLocation:fromLocation:(key, center) < radius` (`<=` when `inclusive`).
        case distance(key: String, center: Location, radiusKilometres: Double, inclusive: Bool)
        /// `NOT (predicate)`.
        case not(Structure)
        /// `a AND b AND …`, at least two.
        case and([Structure])
    }

    /// A comparison operator of ``Structure/comparison(key:operator:value:)``.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        /// `==`.
        case equal = "=="
        /// `!=`.
        case notEqual = "!="
        /// `<`.
        case less = "<"
        /// `<=`.
        case lessOrEqual = "<="
        /// `>`.
        case greater = ">"
        /// `>=`.
        case greaterOrEqual = ">="
    }

    /// A constant on the right of a condition.
    public enum Operand: Sendable, Hashable {
        /// A scalar value: `.string`, `.int64`, `.double`, `.bytes`, `.date` or `.reference`
        /// (a record ID, compared as a reference with action `.none`).
        case value(FieldValue)
        /// `now()`: the time the query runs.
        case now
    }

    /// The predicate's syntax tree. A predicate converted from an `NSPredicate` outside
    /// CloudKit's language (see ``init(_:)``) is `.value(false)`, the nothing it matches.
    public var structure: Structure { Structure(node) }
}

extension QueryPredicate.Structure {
    init(_ node: PredicateNode) {
        func operand(_ value: PredicateValue) -> QueryPredicate.Operand {
            switch value {
            case .constant(let v): .value(v)
            case .now: .now
            }
        }
        switch node {
        case .value(let b): self = .value(b)
        case .comparison(let key, let op, let value):
            self = .comparison(key: key.name, operator: op, value: operand(value))
        case .between(let key, let lower, let upper): self = .between(key: key.name, lower: operand(lower), upper: operand(upper))
        case .in(let key, let values): self = .in(key: key.name, values: values.map(operand))
        case .listContains(let key, let value): self = .listContains(key: key.name, value: operand(value))
        case .listContainsAny(let key, let values): self = .listContainsAny(key: key.name, values: values.map(operand))
        case .listAnyBeginsWith(let key, let prefix): self = .listAnyBeginsWith(key: key.name, prefix: prefix)
        case .beginsWith(let key, let prefix): self = .beginsWith(key: key.name, prefix: prefix)
        case .tokenSearch(let text, let allTokens): self = .tokenSearch(text: text, allTokens: allTokens)
        case .distance(let key, let center, let radius, let inclusive):
            self = .distance(key: key.name, center: center, radiusKilometres: radius, inclusive: inclusive)
        case .not(let inner): self = .not(Self(inner))
        case .and(let nodes): self = .and(nodes.map(Self.init))
        }
    }
}
