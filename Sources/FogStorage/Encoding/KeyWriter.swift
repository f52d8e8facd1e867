import Foundation

// MARK: - Writer

/// Builds an order-preserving tuple key by appending elements.
///
/// A key is the concatenation of its elements' encodings, in the style of the
/// FoundationDB tuple layer. Comparing keys with `memcmp` (shorter first on a
/// tie) gives tuple order, and the key of a tuple is a byte prefix of the key
/// of every longer tuple that starts with it:
///
/// ```swift
/// var key = KeyWriter()
/// key.append("Users")
/// key.append(Int64(42))
/// // key.bytes == [0x02, 0x55, 0x73, 0x65, 0x72, 0x73, 0x00, 0x15, 0x2A]
/// ```
///
/// Layout of each element (tag byte first):
///
/// | Element      | Bytes                                                          |
/// |--------------|----------------------------------------------------------------|
/// | null         | `00` (`00 FF` inside a nested tuple)                           |
/// | bytes        | `01`, payload with each `00` written `00 FF`, `00`             |
/// | string       | `02`, UTF-8 with each `00` written `00 FF`, `00`               |
/// | nested tuple | `05`, elements, `00`                                           |
/// | Int64        | `0C`...`1C`: `14` is zero; `14+n` and `n` big-endian bytes if positive; `14-n` and the one's complement of the magnitude in `n` bytes if negative |
/// | Double       | `21`, 8 big-endian bytes of the bit pattern, all bits flipped if negative, else only the sign bit |
/// | Date         | `22`, the Double layout of `timeIntervalSinceReferenceDate`    |
/// | Bool         | `26` false, `27` true                                          |
///
/// Elements of different types order by tag:
/// null < bytes < string < nested tuple < Int64 < Double < Date < false < true.
/// (The data model never mixes types in one position, so in practice this only
/// places nulls first.)
public struct KeyWriter: Sendable {
    /// The encoded key so far.
    public private(set) var bytes: [UInt8]

    /// How many ``appendNested(_:)`` calls enclose the current position.
    private var nestingDepth = 0

    /// Creates an empty key with room for `capacity` bytes.
    public init(capacity: Int = 32) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Complements every byte from offset `start` to the end, which reverses the order of
    /// the prefix-free encodings written there (descending sort keys).
    public mutating func complement(from start: Int) {
        precondition(start >= 0 && start <= bytes.count, "KeyWriter.complement: offset \(start) out of range")
        for i in start..<bytes.count { bytes[i] = ~bytes[i] }
    }

    /// Appends one byte as it is, with no tag (a separator of the caller's own format).
    public mutating func appendRawByte(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// Empties the key so the writer can be reused, keeping its storage by default.
    public mutating func removeAll(keepingCapacity: Bool = true) {
        precondition(nestingDepth == 0, "KeyWriter.removeAll called inside appendNested")
        bytes.removeAll(keepingCapacity: keepingCapacity)
    }

    /// Appends a null: `0x00`, or `0x00 0xFF` inside a nested tuple.
    ///
    /// Null sorts before every other value.
    public mutating func appendNull() {
        bytes.append(KeyTag.null)
        if nestingDepth > 0 { bytes.append(KeyTag.escape) }
    }

    /// Appends a string: `0x02`, its UTF-8 bytes with each `0x00` written as
    /// `0x00 0xFF`, then `0x00`.
    ///
    /// Strings order by their UTF-8 bytes (which is Unicode scalar order), not by
    /// Swift's `String` comparison; canonically equivalent strings with different
    /// scalars are different keys.
    public mutating func append(_ value: String) {
        bytes.append(KeyTag.string)
        let done: Void? = value.utf8.withContiguousStorageIfAvailable { appendEscaped(UnsafeRawBufferPointer($0)) }
        if done == nil {
            for byte in value.utf8 {
                bytes.append(byte)
                if byte == 0 { bytes.append(KeyTag.escape) }
            }
        }
        bytes.append(0x00)
    }

    /// Appends a byte string: `0x01`, the bytes with each `0x00` written as
    /// `0x00 0xFF`, then `0x00`.
    ///
    /// Byte strings order lexicographically, a prefix first.
    public mutating func append(bytes value: some Collection<UInt8>) {
        bytes.append(KeyTag.bytes)
        let done: Void? = value.withContiguousStorageIfAvailable { appendEscaped(UnsafeRawBufferPointer($0)) }
        if done == nil {
            for byte in value {
                bytes.append(byte)
                if byte == 0 { bytes.append(KeyTag.escape) }
            }
        }
        bytes.append(0x00)
    }

    /// Appends `payload`, escaping each `0x00` as `0x00 0xFF`.
    private mutating func appendEscaped(_ payload: UnsafeRawBufferPointer) {
        var start = 0
        while let zero = firstZero(in: payload, from: start) {
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: payload[start...zero]))
            bytes.append(KeyTag.escape)
            start = zero + 1
        }
        if start < payload.count {
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: payload[start...]))
        }
    }

    /// Appends a signed integer in 1 to 9 bytes.
    ///
    /// Layout: `0x14` for zero; `0x14 + n` then the value in `n` big-endian bytes
    /// when positive; `0x14 - n` then the one's complement of the magnitude in
    /// `n` big-endian bytes when negative, where `n` (1...8) is the fewest bytes
    /// that hold the magnitude. `Int64.min` is `0x0C 7F FF FF FF FF FF FF FF`.
    public mutating func append(_ value: Int64) {
        if value == 0 {
            bytes.append(KeyTag.intZero)
            return
        }
        let magnitude = value.magnitude
        let count = (64 - magnitude.leadingZeroBitCount + 7) / 8
        if value > 0 {
            bytes.append(KeyTag.intZero + UInt8(count))
            appendBigEndian(magnitude, count: count)
        } else {
            bytes.append(KeyTag.intZero - UInt8(count))
            appendBigEndian(~magnitude, count: count)
        }
    }

    /// Appends an `Int` as an `Int64` (same layout).
    public mutating func append(_ value: Int) {
        append(Int64(value))
    }

    /// Appends a double: `0x21` then 8 big-endian bytes of the bit pattern with
    /// all bits flipped when the sign bit is set, otherwise only the sign bit.
    ///
    /// This orders doubles numerically, with `-0.0` before `+0.0`, negative NaNs
    /// before `-infinity` and positive NaNs after `+infinity` (NaNs by bit pattern).
    /// Every bit pattern, NaN payloads included, round-trips exactly.
    public mutating func append(_ value: Double) {
        bytes.append(KeyTag.double)
        appendBigEndian(orderedBits(value), count: 8)
    }

    /// Appends a date: `0x22` then the 8-byte ``append(_:)-(Double)`` layout of
    /// `timeIntervalSinceReferenceDate`, so dates round-trip exactly and sort
    /// chronologically.
    public mutating func append(_ value: Date) {
        bytes.append(KeyTag.date)
        appendBigEndian(orderedBits(value.timeIntervalSinceReferenceDate), count: 8)
    }

    /// Appends a boolean: `0x26` for false, `0x27` for true.
    public mutating func append(_ value: Bool) {
        bytes.append(value ? KeyTag.true : KeyTag.false)
    }

    /// Appends a nested tuple: `0x05`, the elements that `body` appends, then `0x00`.
    ///
    /// Inside, nulls are written `0x00 0xFF` so they are not read as the
    /// terminator. Nesting deeper than ``KeyReader/maxNestingDepth`` is a
    /// programming error (the key could not be read back) and traps.
    public mutating func appendNested(_ body: (inout KeyWriter) -> Void) {
        precondition(nestingDepth < KeyReader.maxNestingDepth, "KeyWriter: nested tuples deeper than \(KeyReader.maxNestingDepth)")
        let depth = nestingDepth
        bytes.append(KeyTag.nested)
        nestingDepth = depth + 1
        body(&self)
        nestingDepth = depth
        bytes.append(0x00)
    }

    /// Appends one element of any type, in the layout of its type.
    public mutating func append(_ element: TupleElement) {
        switch element {
        case .null: appendNull()
        case .bytes(let value): append(bytes: value)
        case .string(let value): append(value)
        case .int(let value): append(value)
        case .double(let value): append(value)
        case .date(let value): append(value)
        case .bool(let value): append(value)
        case .tuple(let elements):
            appendNested { writer in
                for element in elements { writer.append(element) }
            }
        }
    }

    /// Appends the low `count` bytes of `value`, most significant first.
    @inline(__always)
    private mutating func appendBigEndian(_ value: UInt64, count: Int) {
        var shift = (count - 1) * 8
        while shift >= 0 {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            shift -= 8
        }
    }
}
