import Foundation

/// The typed predicate builder: the same predicates as format strings, without strings.
///
/// ```swift
/// let p = try QueryPredicate.field("isCurrent") == 1
///     && .field("publishedAt") <= date
///     && .field("tags").contains("red")
///     && .recordID.notIn(seen)
/// ```
///
/// Builder and parser make equal predicates for equivalent input. What the types cannot
/// rule out — a malformed field name, a value of the wrong type for a system field, a
/// `NaN`, `!` over a condition CloudKit cannot negate — throws ``FogError`` with code
/// ``FogError/Code/invalidArguments`` when the predicate is built, so a single `try` in front
/// of the expression covers it. Distance searches have only `<` and `<=`, so "outside a
/// circle" does not type-check.
extension QueryPredicate {
    /// A field of the record, the left side of a condition the builder makes.
    ///
    /// Get one with ``QueryPredicate/field(_:)`` or a system field such as
    /// ``QueryPredicate/recordID``, then compare it (`==`, `!=`, `<`, `<=`, `>`, `>=`) or call
    /// one of its methods.
    public struct Field: Sendable {
        let key: PredicateKey

        /// The field's name.
        public var name: Record.FieldKey { key.name }

        /// The user field named `name`; the same as ``QueryPredicate/field(_:)``.
        ///
        /// - Throws: ``FogError`` (``FogError/Code/invalidArguments``) when `name` is not a
        ///   valid field key, is a key path such as `author.name`, or is a system property
        ///   that cannot be queried (`recordType`, `recordChangeTag`).
        public static func field(_ name: Record.FieldKey) throws -> Field {
            Field(key: try QueryPredicate.build { () throws(PredicateViolation) in try PredicateRules.key(name) })
        }

        /// The record ID (`recordID`); compares with ``Record/ID``s and ``Record/Reference``s.
        public static var recordID: Field { Field(key: PredicateKey(name: Record.SystemFieldKey.recordID)) }
        /// The creation date (`creationDate`).
        public static var creationDate: Field { Field(key: PredicateKey(name: Record.SystemFieldKey.creationDate)) }
        /// The modification date (`modificationDate`).
        public static var modificationDate: Field { Field(key: PredicateKey(name: Record.SystemFieldKey.modificationDate)) }
        /// The creator's user record ID (`creatorUserRecordID`).
        public static var creatorUserRecordID: Field {
            Field(key: PredicateKey(name: Record.SystemFieldKey.creatorUserRecordID))
        }
        /// The last modifier's user record ID (`lastModifiedUserRecordID`).
        public static var lastModifiedUserRecordID: Field {
            Field(key: PredicateKey(name: Record.SystemFieldKey.lastModifiedUserRecordID))
        }
        /// The parent reference (`parent`).
        public static var parent: Field { Field(key: PredicateKey(name: Record.SystemFieldKey.parent)) }
        /// The share reference (`share`).
        public static var share: Field { Field(key: PredicateKey(name: Record.SystemFieldKey.share)) }
    }

    /// The user field named `name`, to build a condition on.
    ///
    /// - Throws: ``FogError`` (``FogError/Code/invalidArguments``) when `name` is not a valid
    ///   field key or is a key path such as `author.name`.
    public static func field(_ name: Record.FieldKey) throws -> Field { try Field.field(name) }
    /// The record ID (`recordID`); compares with ``Record/ID``s and ``Record/Reference``s.
    public static var recordID: Field { .recordID }
    /// The creation date (`creationDate`).
    public static var creationDate: Field { .creationDate }
    /// The modification date (`modificationDate`).
    public static var modificationDate: Field { .modificationDate }
    /// The creator's user record ID (`creatorUserRecordID`).
    public static var creatorUserRecordID: Field { .creatorUserRecordID }
    /// The last modifier's user record ID (`lastModifiedUserRecordID`).
    public static var lastModifiedUserRecordID: Field { .lastModifiedUserRecordID }
    /// The parent reference (`parent`).
    public static var parent: Field { .parent }
    /// The share reference (`share`).
    public static var share: Field { .share }

    /// Token search: records whose searchable string fields contain any token of `text`
    /// (`self CONTAINS text`).
    public static func tokens(_ text: String) -> QueryPredicate {
        QueryPredicate(node: .tokenSearch(text, allTokens: false))
    }

    /// Token search: records whose searchable string fields contain every token of `text`
    /// (`allTokens TOKENMATCHES[cdl] text`).
    public static func allTokens(_ text: String) -> QueryPredicate {
        QueryPredicate(node: .tokenSearch(text, allTokens: true))
    }

    /// Both conditions (`lhs AND rhs`); nested `AND`s are flattened.
    public static func && (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        QueryPredicate(node: PredicateRules.and([lhs.node, rhs.node]))
    }

    /// The negation of a comparison, `IN`, `BEGINSWITH` or list membership (`NOT (predicate)`).
    ///
    /// - Throws: ``FogError`` (``FogError/Code/invalidArguments``) for what CloudKit cannot
    ///   negate: an `AND`, `BETWEEN`, a token search, a distance search, a `NOT`, or a
    ///   constant predicate.
    public static prefix func ! (predicate: QueryPredicate) throws -> QueryPredicate {
        QueryPredicate(node: try build { () throws(PredicateViolation) in try PredicateRules.not(predicate.node) })
    }

    /// `now()`, the time the query runs, for comparisons with date fields.
    public struct CurrentDate: Sendable, Hashable {
        /// The time the query runs.
        public static let now = CurrentDate()
    }

    /// The distance from a location field to a centre, compared with a radius in kilometres.
    ///
    /// Only `<` and `<=` exist: CloudKit finds records inside a circle, never outside.
    public struct Distance: Sendable {
        let key: PredicateKey
        let center: Location

        /// The user field named `name`; the same as ``QueryPredicate/field(_:)``. It lets
        /// `.field("location").distance(from: here) < 5` start with a leading dot inside a
        /// larger expression, where Swift looks the first member up on `Distance`.
        public static func field(_ name: Record.FieldKey) throws -> Field { try Field.field(name) }

        /// Records whose location is less than `radiusKilometres` from the centre.
        public static func < (lhs: Distance, radiusKilometres: Double) throws -> QueryPredicate {
            try lhs.within(radiusKilometres, inclusive: false)
        }

        /// Records whose location is at most `radiusKilometres` from the centre.
        public static func <= (lhs: Distance, radiusKilometres: Double) throws -> QueryPredicate {
            try lhs.within(radiusKilometres, inclusive: true)
        }

        private func within(_ radius: Double, inclusive: Bool) throws(FogError) -> QueryPredicate {
            QueryPredicate(
                node: try QueryPredicate.build { () throws(PredicateViolation) in
                    try PredicateRules.distance(key, center: center, radius: try PredicateRules.number(radius), inclusive: inclusive)
                })
        }
    }

    /// Runs a rule of ``PredicateRules``, reporting a violation as `invalidArguments`.
    static func build<T>(_ body: () throws(PredicateViolation) -> T) throws(FogError) -> T {
        do {
            return try body()
        } catch {
            throw FogError(.invalidArguments, message: "Invalid predicate: \(error.message)")
        }
    }
}
