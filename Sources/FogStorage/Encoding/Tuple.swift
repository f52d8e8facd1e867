import Foundation

/// One element of a ``Tuple``: a value of any type the tuple key encoding supports.
///
/// Each case is encoded by ``KeyWriter`` in the layout of its type tag
/// (see ``KeyWriter``): null `0x00`, bytes `0x01`, string `0x02`, nested tuple
/// `0x05`, integer `0x0C`...`0x1C`, double `0x21`, date `0x22`, false `0x26`,
/// true `0x27`. Elements of different types order by tag.
///
/// Equality and hashing follow the encoding: two elements are equal exactly
/// when they encode to the same bytes. So strings compare by their UTF-8 bytes
/// (`"é"` precomposed ≠ `"e\u{301}"`), doubles and dates by bit pattern
/// (`0.0` ≠ `-0.0`, and a NaN equals itself).
public enum TupleElement: Sendable, Hashable {
    /// No value; sorts before every other value.
    case null
    /// A byte string.
    case bytes([UInt8])
    /// A string, stored as UTF-8.
    case string(String)
    /// A signed 64-bit integer.
    case int(Int64)
    /// A double, stored by bit pattern.
    case double(Double)
    /// A date, stored as the bit pattern of `timeIntervalSinceReferenceDate`.
    case date(Date)
    /// A boolean; false sorts before true.
    case bool(Bool)
    /// A nested tuple.
    case tuple([TupleElement])

    /// The type of a ``TupleElement``, without its value.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// ``TupleElement/null``, tag `0x00`.
        case null
        /// ``TupleElement/bytes(_:)``, tag `0x01`.
        case bytes
        /// ``TupleElement/string(_:)``, tag `0x02`.
        case string
        /// ``TupleElement/int(_:)``, tags `0x0C`...`0x1C`.
        case int
        /// ``TupleElement/double(_:)``, tag `0x21`.
        case double
        /// ``TupleElement/date(_:)``, tag `0x22`.
        case date
        /// ``TupleElement/bool(_:)``, tags `0x26` and `0x27`.
        case bool
        /// ``TupleElement/tuple(_:)``, tag `0x05`.
        case tuple

        /// The kind whose encoding starts with type tag `tag`, or `nil` for an unknown tag.
        public init?(tag: UInt8) {
            switch tag {
            case KeyTag.null: self = .null
            case KeyTag.bytes: self = .bytes
            case KeyTag.string: self = .string
            case KeyTag.nested: self = .tuple
            case KeyTag.intMin...KeyTag.intMax: self = .int
            case KeyTag.double: self = .double
            case KeyTag.date: self = .date
            case KeyTag.false, KeyTag.true: self = .bool
            default: return nil
            }
        }
    }

    /// The element's type.
    public var kind: Kind {
        switch self {
        case .null: .null
        case .bytes: .bytes
        case .string: .string
        case .int: .int
        case .double: .double
        case .date: .date
        case .bool: .bool
        case .tuple: .tuple
        }
    }

    /// Whether the two elements have the same encoding.
    public static func == (lhs: TupleElement, rhs: TupleElement) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bytes(a), .bytes(b)): a == b
        case let (.string(a), .string(b)): a.utf8.elementsEqual(b.utf8)
        case let (.int(a), .int(b)): a == b
        case let (.double(a), .double(b)): a.bitPattern == b.bitPattern
        case let (.date(a), .date(b)):
            a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case let (.bool(a), .bool(b)): a == b
        case let (.tuple(a), .tuple(b)): a == b
        default: false
        }
    }

    /// Hashes the element consistently with ``==(_:_:)`` (by encoding).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .bytes(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .string(let value):
            hasher.combine(2 as UInt8)
            hasher.combine(value.utf8.count)
            for byte in value.utf8 { hasher.combine(byte) }
        case .int(let value):
            hasher.combine(3 as UInt8)
            hasher.combine(value)
        case .double(let value):
            hasher.combine(4 as UInt8)
            hasher.combine(value.bitPattern)
        case .date(let value):
            hasher.combine(5 as UInt8)
            hasher.combine(value.timeIntervalSinceReferenceDate.bitPattern)
        case .bool(let value):
            hasher.combine(6 as UInt8)
            hasher.combine(value)
        case .tuple(let elements):
            hasher.combine(7 as UInt8)
            hasher.combine(elements)
        }
    }
}

/// A tuple of ``TupleElement`` values with its order-preserving key encoding.
///
/// The encoding is the concatenation of the elements' encodings
/// (see ``KeyWriter``), with no header or length: byte order of encodings is
/// tuple order, and a tuple's encoding is a byte prefix of the encoding of every
/// tuple that extends it. This is the generic, allocating form; hot paths use
/// ``KeyWriter`` and ``KeyReader`` directly, which produce and accept the same bytes.
public struct Tuple: Sendable, Hashable, ExpressibleByArrayLiteral {
    /// The elements, in order.
    public var elements: [TupleElement]

    /// Creates a tuple of `elements`.
    public init(_ elements: [TupleElement]) {
        self.elements = elements
    }

    /// Creates a tuple from an array literal of elements.
    public init(arrayLiteral elements: TupleElement...) {
        self.elements = elements
    }

    /// Decodes a whole key. Throws ``KeyDecodingError`` if any part of `bytes`
    /// is not a valid element; decoded tuples re-encode to exactly `bytes`.
    public init(decoding bytes: [UInt8]) throws(KeyDecodingError) {
        var reader = KeyReader(bytes)
        try self.init(reading: &reader)
    }

    /// Decodes a whole key from memory the caller keeps valid during the call.
    public init(decoding buffer: UnsafeRawBufferPointer) throws(KeyDecodingError) {
        var reader = KeyReader(buffer)
        try self.init(reading: &reader)
    }

    private init(reading reader: inout KeyReader) throws(KeyDecodingError) {
        var elements: [TupleElement] = []
        while !reader.isAtEnd {
            elements.append(try reader.readElement())
        }
        self.elements = elements
    }

    /// The key encoding: each element in its type's layout, concatenated.
    public var encoded: [UInt8] {
        var writer = KeyWriter()
        for element in elements { writer.append(element) }
        return writer.bytes
    }
}
