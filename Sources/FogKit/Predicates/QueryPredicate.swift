import Foundation

/// A condition on records, in CloudKit's predicate language — FogKit's counterpart of the
/// `NSPredicate` a `CKQuery` takes.
///
/// Linux Foundation cannot parse `NSPredicate(format:)`, so FogKit reads CloudKit's subset
/// of the format itself. Create a predicate from a format string with `%@` (values) and `%K`
/// (keys) placeholders, exactly as with `NSPredicate`:
///
/// ```swift
/// let current = try QueryPredicate(format: "isCurrent == 1 AND publishedAt <= %@", Date())
/// let byAuthor = try QueryPredicate(format: "%K == %@", "author", authorReference)
/// let tagged = try QueryPredicate(format: "ANY tags = 'red'")
/// let nearby = try QueryPredicate(format: "distanceToLocation:fromLocation:(location, %@) < 5", here)
/// ```
///
/// or with the typed builder, which makes the same predicates without strings:
///
/// ```swift
/// let current = try QueryPredicate.field("isCurrent") == 1 && .field("publishedAt") <= Date()
/// ```
///
/// Everything CloudKit refuses — `OR`, key paths such as `author.name`, `ALL`, `NOT` over
/// `AND`, `ENDSWITH`, `LIKE`, `nil`, … — is refused when the predicate is created, with a
/// ``FogError`` whose code is ``FogError/Code/invalidArguments`` and whose message names the
/// construct and its 1-based column. See <doc:Predicates> for the language.
///
/// Predicates are values: two predicates are equal when they have the same syntax tree,
/// whatever spelling made them (`=` and `==`, `AND` and `&&`, keyword case, `%@` or a
/// literal). ``description`` is a canonical format string that parses back to an equal
/// predicate.
///
/// The type is called `QueryPredicate`, not `Predicate`, so that it does not clash with
/// Foundation's `Predicate` in files that import both.
public struct QueryPredicate: Sendable, Hashable, CustomStringConvertible {
    /// The syntax tree, valid by construction.
    let node: PredicateNode
    /// Why a query or subscription with this predicate is refused (`invalidArguments`), for a
    /// predicate converted from an `NSPredicate` outside CloudKit's language (see
    /// ``init(_:)``); `nil` for every other predicate. Such a predicate's node matches nothing.
    let rejection: String?

    init(node: PredicateNode) {
        self.node = node
        self.rejection = nil
    }

    /// Parses a predicate in CloudKit's format, substituting `arguments` for its
    /// placeholders in order, like `NSPredicate(format:_:)`.
    ///
    /// `%@` takes a value: `String`, any integer type, `Bool`, `Double`, `Float`, `NSNumber`,
    /// `Date`, `Data`, ``Location``, ``Record/Reference``, ``Record/ID`` or ``Record`` (both
    /// compared as references to a record ID), a ``FieldValue``, or an array of these for
    /// `IN`, `BETWEEN` and `ANY … IN`. `%K` takes a field name as a `String`. `%d`, `%f` and
    /// the other numeric specifiers take numbers.
    ///
    /// - Throws: ``FogError`` with code ``FogError/Code/invalidArguments`` when the format
    ///   is malformed, uses something CloudKit does not support, or the arguments do not fit
    ///   it (wrong count, unsupported type). The message names the construct and its column.
    public init(format: String, _ arguments: Any...) throws {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses a predicate in CloudKit's format with its arguments in an array, like
    /// `NSPredicate(format:argumentArray:)`. See ``init(format:_:)``.
    ///
    /// - Throws: ``FogError`` with code ``FogError/Code/invalidArguments``.
    public init(format: String, argumentArray: [Any]) throws {
        node = try PredicateParser.parse(format, arguments: argumentArray)
        rejection = nil
    }

    /// A predicate that matches every record (`true`, `TRUEPREDICATE`) or none (`false`,
    /// `FALSEPREDICATE`), like `NSPredicate(value:)`.
    public init(value: Bool) {
        node = .value(value)
        rejection = nil
    }

    /// A predicate that matches the records every subpredicate matches, like
    /// `NSCompoundPredicate(andPredicateWithSubpredicates:)`.
    ///
    /// Nested `AND`s are flattened; one subpredicate is returned as is, and none makes
    /// `TRUEPREDICATE`. (CloudKit has no `OR`, so there is no `or`.)
    public static func and(_ subpredicates: [QueryPredicate]) -> QueryPredicate {
        QueryPredicate(node: PredicateRules.and(subpredicates.map(\.node)))
    }

    /// The predicate as a canonical format string, which ``init(format:_:)`` parses back
    /// to an equal predicate.
    ///
    /// Operators take one spelling (`==`, `!=`, `<=`, `>=`, `AND`, `NOT (…)`); strings are in
    /// double quotes; booleans print as `1` and `0`, as CloudKit stores them. Values without
    /// a literal of their own print as `CAST`s: dates as `CAST(seconds since 2001, "NSDate")`,
    /// bytes as `CAST("hex", "NSData")`, locations as `CAST({latitude, longitude},
    /// "CLLocation")` and references as `CAST("recordName", "CKReference")` (with zone and
    /// owner names outside the default zone). Keys spelled like a reserved word are written
    /// `#key`.
    public var description: String { node.formatted }
}
