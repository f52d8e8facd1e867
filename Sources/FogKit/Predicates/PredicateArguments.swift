import Foundation

/// Converts the `Any` arguments of ``QueryPredicate/init(format:_:)`` into operands and keys.
///
/// Accepted: `String`/`NSString`; every integer type, `Bool`, `Double`, `Float` and
/// `NSNumber` (numbers); `Date`/`NSDate`; `Data`/`NSData`; ``Location``;
/// ``Record/Reference``, ``Record/ID`` and ``Record`` (compared by record ID); ``FieldValue``;
/// and arrays (or other sequences, such as sets) of these, for `IN`, `BETWEEN` and lists.
/// Everything else is refused.
enum PredicateArguments {
    /// The argument as an operand, or a violation that names what is wrong with it.
    static func operand(_ value: Any) throws(PredicateViolation) -> PredicateOperand {
        try operand(value, nested: false)
    }

    /// The argument of `%K`: a key name.
    static func key(_ value: Any) throws(PredicateViolation) -> String {
        if let s = value as? String { return s }
        throw PredicateViolation("%K needs a String key, not \(typeName(of: value))")
    }

    /// The dynamic type's name, or `nil` for an empty optional.
    static func typeName(of value: Any) -> String {
        if isNil(value) { return "nil" }
        return String(describing: type(of: value))
    }

    private static func isNil(_ value: Any) -> Bool {
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .optional && mirror.children.isEmpty
    }

    private static func operand(_ value: Any, nested: Bool) throws(PredicateViolation) -> PredicateOperand {
        // An NSNumber object first: by its own type, so that unsigned and floating values keep
        // their meaning (Swift numbers also cast to NSNumber, hence the dynamic-type test).
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            let type = String(cString: number.objCType)
            if type == "Q" || type == "L" || type == "I" || type == "S" || type == "C" {
                return .scalar(try unsigned(number.uint64Value))
            }
            return try PredicateRules.operand(number.recordFieldValue)
        }
        switch value {
        case let v as String: return .scalar(.constant(.string(v)))
        case let v as Bool: return .scalar(.constant(.int64(v ? 1 : 0)))
        case let v as Int: return .scalar(.constant(.int64(Int64(v))))
        case let v as Int64: return .scalar(.constant(.int64(v)))
        case let v as Int32: return .scalar(.constant(.int64(Int64(v))))
        case let v as Int16: return .scalar(.constant(.int64(Int64(v))))
        case let v as Int8: return .scalar(.constant(.int64(Int64(v))))
        case let v as UInt: return .scalar(try unsigned(UInt64(v)))
        case let v as UInt64: return .scalar(try unsigned(v))
        case let v as UInt32: return .scalar(.constant(.int64(Int64(v))))
        case let v as UInt16: return .scalar(.constant(.int64(Int64(v))))
        case let v as UInt8: return .scalar(.constant(.int64(Int64(v))))
        case let v as Double: return .scalar(try PredicateRules.number(v))
        case let v as Float: return .scalar(try PredicateRules.number(Double(v)))
        case let v as Date: return try PredicateRules.operand(.date(v))
        case let v as Data: return .scalar(.constant(.bytes(v)))
        case let v as Location: return .location(try PredicateRules.location(v))
        case let v as Record.Reference: return .scalar(PredicateRules.reference(v.recordID))
        case let v as Record.ID: return .scalar(PredicateRules.reference(v))
        case let v as Record: return .scalar(PredicateRules.reference(v.recordID))
        case let v as FieldValue:
            let operand = try PredicateRules.operand(v)
            if nested, case .list = operand { throw PredicateViolation("a list inside a list is not supported") }
            return operand
        case let v as [Any]:
            if nested { throw PredicateViolation("a list inside a list is not supported") }
            return .list(
                try v.enumerated().map { (i, element) throws(PredicateViolation) in
                    do throws(PredicateViolation) {
                        return try operand(element, nested: true)
                    } catch {
                        throw PredicateViolation("element \(i + 1): \(error.message)")
                    }
                })
        case let v as any RecordValueProtocol:
            return try operand(v.recordFieldValue, nested: nested)
        case let v as any Sequence:
            // Sets and other collections, like the NSSet NSPredicate accepts for IN.
            return try operand(elements(v), nested: nested)
        default:
            if isNil(value) {
                throw PredicateViolation("nil is not supported: CloudKit predicates cannot test for nil")
            }
            throw PredicateViolation(
                "type \(typeName(of: value)) is not supported; use String, a number, Date, Data, Location, Record.Reference, Record.ID, Record, FieldValue or an array of these"
            )
        }
    }

    private static func elements<S: Sequence>(_ sequence: S) -> [Any] {
        sequence.map { $0 as Any }
    }

    private static func unsigned(_ v: UInt64) throws(PredicateViolation) -> PredicateValue {
        guard let n = Int64(exactly: v) else {
            throw PredicateViolation("the integer \(v) does not fit in a signed 64-bit integer")
        }
        return .constant(.int64(n))
    }
}
