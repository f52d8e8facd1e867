import Foundation

/// A range of keys for a scan.
///
/// Bounds are byte strings compared in byte order. A `nil` bound is open.
public struct ScanRange: Sendable, Hashable {
    /// The smallest key in the range, or `nil` for the first key of the table.
    public var lower: [UInt8]?
    /// Whether a key equal to ``lower`` is in the range.
    public var lowerInclusive: Bool
    /// The largest key in the range, or `nil` for the last key of the table.
    public var upper: [UInt8]?
    /// Whether a key equal to ``upper`` is in the range.
    public var upperInclusive: Bool

    /// Creates a range from its bounds.
    public init(lower: [UInt8]?, lowerInclusive: Bool = true, upper: [UInt8]?, upperInclusive: Bool = false) {
        self.lower = lower
        self.lowerInclusive = lowerInclusive
        self.upper = upper
        self.upperInclusive = upperInclusive
    }

    /// Every key of the table.
    public static let all = ScanRange(lower: nil, upper: nil)

    /// Every key that starts with `prefix`.
    public static func prefix(_ prefix: [UInt8]) -> ScanRange {
        ScanRange(lower: prefix, lowerInclusive: true, upper: successor(ofPrefix: prefix), upperInclusive: false)
    }

    /// Only `key` (in a multi-value table, all of its values).
    /// Unlike ``prefix(_:)``, the keys that continue `key` are not in the range.
    public static func exactly(_ key: [UInt8]) -> ScanRange {
        ScanRange(lower: key, lowerInclusive: true, upper: key, upperInclusive: true)
    }

    /// The smallest byte string greater than every string that starts with `prefix`,
    /// or `nil` when there is none (the prefix is empty or all `0xFF`).
    public static func successor(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        KeyRange.successor(ofPrefix: prefix)
    }

    /// The same range with an empty lower bound dropped, for a store whose keys are
    /// never empty (every key is above it; an exclusive empty bound excludes nothing).
    public var normalized: ScanRange {
        guard let lower, lower.isEmpty else { return self }
        return ScanRange(lower: nil, upper: upper, upperInclusive: upperInclusive)
    }

    /// Whether `key` is below the upper bound.
    @inlinable @inline(__always)
    public func isBelowUpper(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let upper else { return true }
        let c = compareBytes(key, upper)
        return upperInclusive ? c <= 0 : c < 0
    }

    /// Whether `key` is below the upper bound.
    @inlinable
    public func isBelowUpper(_ key: [UInt8]) -> Bool {
        key.withUnsafeBytes { isBelowUpper($0) }
    }

    /// Whether `key` is above the lower bound.
    @inlinable
    public func isAboveLower(_ key: [UInt8]) -> Bool {
        key.withUnsafeBytes { isAboveLower($0) }
    }

    /// Whether `key` is above the lower bound.
    @inlinable @inline(__always)
    public func isAboveLower(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let lower else { return true }
        let c = compareBytes(key, lower)
        return lowerInclusive ? c >= 0 : c > 0
    }
}

/// Byte-order comparison (`memcmp`, shorter first on a tie): negative when `a` sorts
/// first, zero when equal, positive when `b` sorts first. The order of keys in every store.
@inlinable @inline(__always)
public func compareBytes(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
    b.withUnsafeBytes { b in
        let n = min(a.count, b.count)
        if n > 0, let pa = a.baseAddress, let pb = b.baseAddress {
            let c = memcmp(pa, pb, n)
            if c != 0 { return Int(c) }
        }
        return a.count - b.count
    }
}
