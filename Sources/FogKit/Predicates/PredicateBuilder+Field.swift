import Foundation

extension QueryPredicate.Field {
    // MARK: - Comparisons

    /// `field == value`. References and record IDs compare by record ID; `Bool` is stored as 1 or 0.
    public static func == (lhs: Self, rhs: some RecordValueProtocol) throws -> QueryPredicate {
        try lhs.compare(.equal, rhs.recordFieldValue)
    }

    /// `field == reference to id`.
    public static func == (lhs: Self, rhs: Record.ID) throws -> QueryPredicate {
        try lhs.compare(.equal, .reference(Record.Reference(recordID: rhs, action: .none)))
    }

    /// `field != value`.
    public static func != (lhs: Self, rhs: some RecordValueProtocol) throws -> QueryPredicate {
        try lhs.compare(.notEqual, rhs.recordFieldValue)
    }

    /// `field != reference to id`.
    public static func != (lhs: Self, rhs: Record.ID) throws -> QueryPredicate {
        try lhs.compare(.notEqual, .reference(Record.Reference(recordID: rhs, action: .none)))
    }

    /// `field < value` (numbers, strings, dates).
    public static func < (lhs: Self, rhs: some RecordValueProtocol) throws -> QueryPredicate {
        try lhs.compare(.less, rhs.recordFieldValue)
    }

    /// `field <= value` (numbers, strings, dates).
    public static func <= (lhs: Self, rhs: some RecordValueProtocol) throws -> QueryPredicate {
        try lhs.compare(.lessOrEqual, rhs.recordFieldValue)
    }

    /// `field > value` (numbers, strings, dates).
    public static func > (lhs: Self, rhs: some RecordValueProtocol) throws -> QueryPredicate {
        try lhs.compare(.greater, rhs.recordFieldValue)
    }

    /// `field >= value` (numbers, strings, dates).
    public static func >= (lhs: Self, rhs: some RecordValueProtocol) throws -> QueryPredicate {
        try lhs.compare(.greaterOrEqual, rhs.recordFieldValue)
    }

    /// `field < now()`: dates before the time the query runs.
    public static func < (lhs: Self, rhs: QueryPredicate.CurrentDate) throws -> QueryPredicate {
        try lhs.build { () throws(PredicateViolation) in try PredicateRules.comparison(lhs.key, .less, .now) }
    }

    /// `field <= now()`.
    public static func <= (lhs: Self, rhs: QueryPredicate.CurrentDate) throws -> QueryPredicate {
        try lhs.build { () throws(PredicateViolation) in try PredicateRules.comparison(lhs.key, .lessOrEqual, .now) }
    }

    /// `field > now()`: dates after the time the query runs.
    public static func > (lhs: Self, rhs: QueryPredicate.CurrentDate) throws -> QueryPredicate {
        try lhs.build { () throws(PredicateViolation) in try PredicateRules.comparison(lhs.key, .greater, .now) }
    }

    /// `field >= now()`.
    public static func >= (lhs: Self, rhs: QueryPredicate.CurrentDate) throws -> QueryPredicate {
        try lhs.build { () throws(PredicateViolation) in try PredicateRules.comparison(lhs.key, .greaterOrEqual, .now) }
    }

    /// `field BETWEEN {lower, upper}`: inclusive on both ends (numbers, strings, dates).
    public func between<Value: RecordValueProtocol>(_ lower: Value, _ upper: Value) throws -> QueryPredicate {
        try build { () throws(PredicateViolation) in
            try PredicateRules.between(
                key, try Self.value(lower.recordFieldValue, "BETWEEN"), try Self.value(upper.recordFieldValue, "BETWEEN"))
        }
    }

    // MARK: - Sets and lists

    /// `field IN {values}`: the field equals one of the values.
    public func `in`<Value: RecordValueProtocol>(_ values: [Value]) throws -> QueryPredicate {
        try build { () throws(PredicateViolation) in try PredicateRules.in(key, try Self.values(values, "IN")) }
    }

    /// `field IN {ids}`: the field (such as ``QueryPredicate/recordID``) is one of the record IDs.
    public func `in`(_ ids: [Record.ID]) throws -> QueryPredicate {
        try build { () throws(PredicateViolation) in try PredicateRules.in(key, ids.map(PredicateRules.reference)) }
    }

    /// `NOT (field IN {values})`.
    public func notIn<Value: RecordValueProtocol>(_ values: [Value]) throws -> QueryPredicate {
        try !self.in(values)
    }

    /// `NOT (field IN {ids})`.
    public func notIn(_ ids: [Record.ID]) throws -> QueryPredicate {
        try !self.in(ids)
    }

    /// `field CONTAINS element`: the list field has the element (also `ANY field = element`,
    /// `element IN field`).
    public func contains(_ element: some RecordValueProtocol) throws -> QueryPredicate {
        try build { () throws(PredicateViolation) in
            try PredicateRules.listContains(key, try Self.value(element.recordFieldValue, "CONTAINS"))
        }
    }

    /// `field CONTAINS reference to id`: the reference list has a reference to the record.
    public func contains(_ id: Record.ID) throws -> QueryPredicate {
        try build { () throws(PredicateViolation) in try PredicateRules.listContains(key, PredicateRules.reference(id)) }
    }

    /// `NOT (field CONTAINS element)`.
    public func notContains(_ element: some RecordValueProtocol) throws -> QueryPredicate {
        try !contains(element)
    }

    /// `NOT (field CONTAINS reference to id)`.
    public func notContains(_ id: Record.ID) throws -> QueryPredicate {
        try !contains(id)
    }

    /// `ANY field IN {elements}`: the list field has at least one of the elements.
    public func containsAny<Value: RecordValueProtocol>(_ elements: [Value]) throws -> QueryPredicate {
        try build { () throws(PredicateViolation) in
            try PredicateRules.listContainsAny(key, try Self.values(elements, "ANY … IN"))
        }
    }

    /// `NOT (ANY field IN {elements})`: the list field has none of the elements.
    public func notContainsAny<Value: RecordValueProtocol>(_ elements: [Value]) throws -> QueryPredicate {
        try !containsAny(elements)
    }

    // MARK: - Strings and locations

    /// `field BEGINSWITH prefix`.
    public func beginsWith(_ prefix: String) throws -> QueryPredicate {
        try build { () throws(PredicateViolation) in try PredicateRules.beginsWith(key, .constant(.string(prefix))) }
    }

    /// `NOT (field BEGINSWITH prefix)`.
    public func notBeginsWith(_ prefix: String) throws -> QueryPredicate {
        try !beginsWith(prefix)
    }

    /// `ANY field BEGINSWITH prefix`: an element of the string list starts with `prefix`.
    public func anyBeginsWith(_ prefix: String) throws -> QueryPredicate {
        try build { () throws(PredicateViolation) in try PredicateRules.listAnyBeginsWith(key, .constant(.string(prefix))) }
    }

    /// `NOT (ANY field BEGINSWITH prefix)`.
    public func notAnyBeginsWith(_ prefix: String) throws -> QueryPredicate {
        try !anyBeginsWith(prefix)
    }

    /// The distance from this location field to `center`, to compare with a radius in
    /// kilometres: `.field("location").distance(from: here) < 5`.
    public func distance(from center: Location) -> QueryPredicate.Distance {
        QueryPredicate.Distance(key: key, center: center)
    }

    // MARK: - Helpers

    private func compare(_ op: ComparisonOperator, _ value: FieldValue) throws(FogError) -> QueryPredicate {
        try build { () throws(PredicateViolation) in try PredicateRules.comparison(key, op, try Self.value(value, op.rawValue)) }
    }

    private func build(_ body: () throws(PredicateViolation) -> PredicateNode) throws(FogError) -> QueryPredicate {
        QueryPredicate(node: try QueryPredicate.build(body))
    }

    private static func value(_ value: FieldValue, _ construct: String) throws(PredicateViolation) -> PredicateValue {
        let operand: PredicateOperand
        do throws(PredicateViolation) {
            operand = try PredicateRules.operand(value)
        } catch {
            throw PredicateViolation("the value of \(construct): \(error.message)")
        }
        return try PredicateRules.scalar(operand, for: construct)
    }

    private static func values<Value: RecordValueProtocol>(
        _ values: [Value], _ construct: String
    ) throws(PredicateViolation) -> [PredicateValue] {
        try values.map { (value) throws(PredicateViolation) in try Self.value(value.recordFieldValue, construct) }
    }
}
