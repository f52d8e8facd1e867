import Foundation
import Synchronization

/// Where fetches by ID last found a record: a lossy table from a hash of (zone id, record
/// name) to the record's row, so that a fetch can read `records` directly and skip the
/// `names` lookup (one B-tree descent of three).
///
/// A hint is never trusted: the fetch reads the hinted row in its own snapshot and uses it
/// only when the record there has the zone and the name asked for (``RecordView/hasZone(_:name:in:)``).
/// That is exact because a snapshot holds at most one row per zone and name, and the
/// `names` entry of a record always points at it: writers put, update and delete a record's
/// row and its `names` entry in the same transaction. A stale hint (a deleted or recreated
/// record, a hash collision, another store's row) finds another record or none, and the fetch
/// falls back to `names`. So hints need no invalidation, and writers do not touch them.
///
/// Direct-mapped, 2^18 slots of one 64-bit word: a tag of the hash's upper 24 bits above
/// `row + 1` (rows past 2^40 are not hinted). Slots are relaxed atomics: a reader that sees
/// a slot from another thread's store sees a whole word, and an outdated one is caught as
/// above. The memory (2 MB) is `calloc`ed, so pages are only touched as slots are filled.
final class RowHints: @unchecked Sendable {
    private static let slotBits = 18
    private static let rowLimit: Int64 = 1 << 40
    private let slots: UnsafeMutablePointer<Atomic<UInt64>>

    init() {
        let count = 1 << Self.slotBits
        // Zeroed memory is `count` atomics holding 0 (`Atomic<UInt64>` is laid out as a
        // `UInt64`), the empty slot.
        guard let memory = calloc(count, MemoryLayout<Atomic<UInt64>>.stride) else { fatalError("RowHints: out of memory") }
        slots = memory.bindMemory(to: Atomic<UInt64>.self, capacity: count)
    }

    deinit { free(slots) }

    /// The hash of a zone id and a record name, which ``row(for:)`` and
    /// ``remember(_:for:)`` take.
    @inline(__always)
    static func hash(zone: Int64, name: String) -> UInt64 {
        var name = name
        return name.withUTF8 { bytes in
            var h = UInt64(bitPattern: zone) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
            var i = 0
            let raw = UnsafeRawBufferPointer(bytes)
            while i + 8 <= raw.count {
                h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
                h ^= h >> 29
                i += 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while i < raw.count {
                tail |= UInt64(raw[i]) << shift
                shift += 8
                i += 1
            }
            h = (h ^ tail) &* 0xC4CE_B9FE_1A85_EC53
            return h ^ (h >> 32)
        }
    }

    /// The hinted row for `hash`, if any.
    @inline(__always)
    func row(for hash: UInt64) -> Int64? {
        let word = slots[Self.slot(hash)].load(ordering: .relaxed)
        guard word != 0, word >> 40 == hash >> 40 else { return nil }
        return Int64(word & (1 << 40 - 1)) - 1
    }

    /// Remembers that `row` holds the record of `hash`.
    @inline(__always)
    func remember(_ row: Int64, for hash: UInt64) {
        guard row >= 0, row < Self.rowLimit - 1 else { return }
        slots[Self.slot(hash)].store((hash >> 40) << 40 | UInt64(row + 1), ordering: .relaxed)
    }

    @inline(__always)
    private static func slot(_ hash: UInt64) -> Int { Int(truncatingIfNeeded: hash & (1 << slotBits - 1)) }
}

extension RecordView {
    /// Whether the encoded record `buffer` is in zone `zone` and named `name`: its header's
    /// first fields read without errors (a damaged or short record is simply not it).
    @inline(__always)
    static func hasZone(_ zone: Int64, name: String, in buffer: UnsafeRawBufferPointer) -> Bool {
        guard buffer.count > 0, buffer[0] == RecordCodec.version else { return false }
        var i = 1
        guard length(buffer, &i) != nil, let z = length(buffer, &i), Int64(z) == zone, let n = length(buffer, &i), n <= buffer.count - i
        else { return false }
        var name = name
        return name.withUTF8 { bytes in
            bytes.count == n && (n == 0 || memcmp(buffer.baseAddress! + i, bytes.baseAddress!, n) == 0)
        }
    }
}
