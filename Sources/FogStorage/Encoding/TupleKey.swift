import Foundation

// MARK: - Layout
//
// Order-preserving tuple keys in the style of the FoundationDB tuple layer:
// `memcmp` order of keys == tuple order, and a tuple's key is a byte prefix of
// the key of any longer tuple that starts with it. The layout table is in the
// documentation of `KeyWriter`; `KeyReader` decodes it (strictly: only bytes
// that `KeyWriter` could have produced are accepted), `Tuple` and
// `TupleElement` are the generic, allocating form of the same encoding.

/// Type tags of the tuple key encoding.
enum KeyTag {
    static let null: UInt8 = 0x00
    static let bytes: UInt8 = 0x01
    static let string: UInt8 = 0x02
    static let nested: UInt8 = 0x05
    static let intMin: UInt8 = 0x0C
    static let intZero: UInt8 = 0x14
    static let intMax: UInt8 = 0x1C
    static let double: UInt8 = 0x21
    static let date: UInt8 = 0x22
    static let `false`: UInt8 = 0x26
    static let `true`: UInt8 = 0x27
    /// The byte after `0x00` that marks an escaped zero (in bytes and strings)
    /// or a null inside a nested tuple.
    static let escape: UInt8 = 0xFF
}

/// The sign bit of an IEEE 754 double.
let signBit: UInt64 = 1 << 63

/// Maps a double's bit pattern to an unsigned integer with the same order:
/// negative values have all bits flipped, others only the sign bit.
@inline(__always)
func orderedBits(_ value: Double) -> UInt64 {
    let bits = value.bitPattern
    return bits & signBit != 0 ? ~bits : bits ^ signBit
}

/// Inverse of ``orderedBits(_:)``.
@inline(__always)
func double(fromOrderedBits ordered: UInt64) -> Double {
    Double(bitPattern: ordered & signBit != 0 ? ordered ^ signBit : ~ordered)
}

/// The index of the first `0x00` in `buffer` at or after `start`, if any.
@inline(__always)
func firstZero(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
    guard start < buffer.count, let base = buffer.baseAddress else { return nil }
    guard let found = memchr(base + start, 0, buffer.count - start) else { return nil }
    return base.distance(to: UnsafeRawPointer(found))
}

// MARK: - Ranges

/// Helpers for turning key prefixes into scan bounds.
public enum KeyRange {
    /// The smallest byte string greater than every string that starts with
    /// `prefix`: trailing `0xFF` bytes removed, then the last byte incremented.
    /// `nil` when there is none (the prefix is empty or all `0xFF`).
    ///
    /// Use it as the exclusive upper bound of a prefix scan. For a tuple
    /// prefix, the result is greater than every key of a longer tuple starting
    /// with it.
    public static func successor(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        guard let last = prefix.lastIndex(where: { $0 != 0xFF }) else { return nil }
        var result = Array(prefix[...last])
        result[last] += 1
        return result
    }
}
