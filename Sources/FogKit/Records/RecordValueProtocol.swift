import Foundation

/// A Swift value that can be stored in a record field (CloudKit's `CKRecordValueProtocol`).
///
/// FogKit conforms `String`, the integer types, `Bool`, `Double`, `Float`,
/// `Data`, `Date`, ``Location``, ``Record/Reference``, ``Asset``, `NSNumber`,
/// `NSString` and arrays of these. Integers and `Bool` are stored as
/// ``FieldValue/int64(_:)``, `Float` as ``FieldValue/double(_:)``; they read back
/// as `Int64` or `Double` (or through `NSNumber`, so `record["n"] as? Int` works),
/// as in CloudKit.
public protocol RecordValueProtocol {
    /// The value in the form the store keeps.
    var recordFieldValue: FieldValue { get }
}

/// A value stored as CloudKit's `CKRecordValue`; the same as ``RecordValueProtocol``.
public typealias RecordValue = RecordValueProtocol

/// A scalar value that can also be stored as an element of a list field.
///
/// Arrays of conforming values conform to ``RecordValueProtocol`` and are stored
/// as homogeneous lists; nested lists are not a CloudKit type, so arrays of
/// arrays do not conform.
public protocol RecordListElement: RecordValueProtocol {
    /// The list field value holding `elements`.
    static func makeList(_ elements: [Self]) -> FieldValue
}

extension FieldValue: RecordValueProtocol {
    /// The value itself.
    public var recordFieldValue: FieldValue { self }
}

extension String: RecordListElement {
    /// The string.
    public var recordFieldValue: FieldValue { .string(self) }
    /// A list of strings.
    public static func makeList(_ elements: [String]) -> FieldValue { .stringList(elements) }
}

extension NSString: RecordValueProtocol {
    /// The string.
    public var recordFieldValue: FieldValue { .string(self as String) }
}

extension Int64: RecordListElement {
    /// The integer.
    public var recordFieldValue: FieldValue { .int64(self) }
    /// A list of integers.
    public static func makeList(_ elements: [Int64]) -> FieldValue { .int64List(elements) }
}

extension Int: RecordListElement {
    /// The integer, stored as `Int64`.
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
    /// A list of integers.
    public static func makeList(_ elements: [Int]) -> FieldValue { .int64List(elements.map(Int64.init)) }
}

extension Int32: RecordListElement {
    /// The integer, stored as `Int64`.
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
    /// A list of integers.
    public static func makeList(_ elements: [Int32]) -> FieldValue { .int64List(elements.map(Int64.init)) }
}

extension Int16: RecordListElement {
    /// The integer, stored as `Int64`.
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
    /// A list of integers.
    public static func makeList(_ elements: [Int16]) -> FieldValue { .int64List(elements.map(Int64.init)) }
}

extension Int8: RecordListElement {
    /// The integer, stored as `Int64`.
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
    /// A list of integers.
    public static func makeList(_ elements: [Int8]) -> FieldValue { .int64List(elements.map(Int64.init)) }
}

extension UInt64: RecordListElement {
    /// The integer, stored as `Int64` as `NSNumber.int64Value` converts it (values
    /// above `Int64.max` wrap, as in CloudKit).
    public var recordFieldValue: FieldValue { .int64(Int64(truncatingIfNeeded: self)) }
    /// A list of integers.
    public static func makeList(_ elements: [UInt64]) -> FieldValue { .int64List(elements.map { Int64(truncatingIfNeeded: $0) }) }
}

extension UInt: RecordListElement {
    /// The integer, stored as `Int64` as `NSNumber.int64Value` converts it (values
    /// above `Int64.max` wrap, as in CloudKit).
    public var recordFieldValue: FieldValue { .int64(Int64(truncatingIfNeeded: self)) }
    /// A list of integers.
    public static func makeList(_ elements: [UInt]) -> FieldValue { .int64List(elements.map { Int64(truncatingIfNeeded: $0) }) }
}

extension UInt32: RecordListElement {
    /// The integer, stored as `Int64`.
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
    /// A list of integers.
    public static func makeList(_ elements: [UInt32]) -> FieldValue { .int64List(elements.map(Int64.init)) }
}

extension UInt16: RecordListElement {
    /// The integer, stored as `Int64`.
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
    /// A list of integers.
    public static func makeList(_ elements: [UInt16]) -> FieldValue { .int64List(elements.map(Int64.init)) }
}

extension UInt8: RecordListElement {
    /// The integer, stored as `Int64`.
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
    /// A list of integers.
    public static func makeList(_ elements: [UInt8]) -> FieldValue { .int64List(elements.map(Int64.init)) }
}

extension Bool: RecordListElement {
    /// `1` or `0`, stored as `Int64`, as CloudKit stores booleans.
    public var recordFieldValue: FieldValue { .int64(self ? 1 : 0) }
    /// A list of 0/1 integers.
    public static func makeList(_ elements: [Bool]) -> FieldValue { .int64List(elements.map { $0 ? 1 : 0 }) }
}

extension Double: RecordListElement {
    /// The number.
    public var recordFieldValue: FieldValue { .double(self) }
    /// A list of doubles.
    public static func makeList(_ elements: [Double]) -> FieldValue { .doubleList(elements) }
}

extension Float: RecordListElement {
    /// The number, stored as `Double`.
    public var recordFieldValue: FieldValue { .double(Double(self)) }
    /// A list of doubles.
    public static func makeList(_ elements: [Float]) -> FieldValue { .doubleList(elements.map(Double.init)) }
}

extension NSNumber: RecordListElement {
    /// An integer for integral numbers, a double for floating-point ones.
    public var recordFieldValue: FieldValue {
        if isFloatingPoint { return .double(doubleValue) }
        return .int64(int64Value)
    }

    /// Integers when every element is integral, doubles otherwise.
    public static func makeList(_ elements: [NSNumber]) -> FieldValue {
        if elements.contains(where: \.isFloatingPoint) { return .doubleList(elements.map(\.doubleValue)) }
        return .int64List(elements.map(\.int64Value))
    }

    var isFloatingPoint: Bool {
        let type = String(cString: objCType)
        return type == "d" || type == "f"
    }
}

extension Data: RecordListElement {
    /// The bytes.
    public var recordFieldValue: FieldValue { .bytes(self) }
    /// A list of byte strings.
    public static func makeList(_ elements: [Data]) -> FieldValue { .bytesList(elements) }
}

extension Date: RecordListElement {
    /// The date.
    public var recordFieldValue: FieldValue { .date(self) }
    /// A list of dates.
    public static func makeList(_ elements: [Date]) -> FieldValue { .dateList(elements) }
}

extension Location: RecordListElement {
    /// The location.
    public var recordFieldValue: FieldValue { .location(self) }
    /// A list of locations.
    public static func makeList(_ elements: [Location]) -> FieldValue { .locationList(elements) }
}

extension Record.Reference: RecordListElement {
    /// The reference.
    public var recordFieldValue: FieldValue { .reference(self) }
    /// A list of references.
    public static func makeList(_ elements: [Record.Reference]) -> FieldValue { .referenceList(elements) }
}

extension Asset: RecordListElement {
    /// The asset.
    public var recordFieldValue: FieldValue { .asset(self) }
    /// A list of assets.
    public static func makeList(_ elements: [Asset]) -> FieldValue { .assetList(elements) }
}

extension Array: RecordValueProtocol where Element: RecordListElement {
    /// A homogeneous list of the elements.
    public var recordFieldValue: FieldValue { Element.makeList(self) }
}

extension FieldValue {
    /// The value as CloudKit's untyped accessors return it: numbers as `NSNumber`
    /// (so `as? Int`, `as? Bool` and `as? Double` work), lists as Swift arrays.
    var bridgedValue: any RecordValueProtocol {
        switch self {
        case .string(let v): v
        case .int64(let v): NSNumber(value: v)
        case .double(let v): NSNumber(value: v)
        case .bytes(let v): v
        case .date(let v): v
        case .location(let v): v
        case .reference(let v): v
        case .asset(let v): v
        case .stringList(let v): v
        case .int64List(let v): v.map { NSNumber(value: $0) }
        case .doubleList(let v): v.map { NSNumber(value: $0) }
        case .bytesList(let v): v
        case .dateList(let v): v
        case .locationList(let v): v
        case .referenceList(let v): v
        case .assetList(let v): v
        }
    }
}
