import FogStorage
import Foundation

/// Keys of the `changes` (per-zone record log) and `dbchanges` (per-database zone log)
/// tables. `Docs/OnDiskFormat.md` describes both; change them together.
///
/// `changes`, all keys starting with the zone id:
///
/// | key | value |
/// |---|---|
/// | (zone, 0, sequence, row) | `1` for a record as saved at `sequence`; `2`, varint type id, record name for a deletion |
/// | (zone, 1, record name) | (sequence, row) tuple of the record's tombstone |
/// | (zone, 2) | the horizon: (sequence, row) tuple of the newest pruned tombstone |
/// | (zone, 3) | the last `clientChangeTokenData` saved to the zone |
/// | (zone, 4, sequence, row) | tombstone age: deletion time (little-endian Float64 seconds since 2001), record name |
/// | (zone, 5, sequence, row) | the share that covered the record of that tombstone (`Layout.sharedDeletionKey`) |
/// | (zone, 6, record name) | (sequence, share name) tuple: the share the record last left (`Layout.sharedMoveKey`) |
/// | (zone, 7) | the log's compaction state: its stale entries, its live entries, the pass under way (``LogCompaction``) |
///
/// `dbchanges`, keys starting with (scope, owner):
///
/// | key | value |
/// |---|---|
/// | (scope, owner, 0, sequence, zone id) | kind (`1` changed, `2` deleted, `3` purged), zone name |
/// | (scope, owner, 1, zone name) | (sequence, zone id) tuple of the zone's entry |
/// | (scope, owner, 2) | the horizon: (sequence, zone id) tuple of the newest pruned zone deletion |
/// | (scope, owner, 4, sequence, zone id) | deletion age: deletion time (little-endian Float64 seconds since 2001), zone name |
extension Layout {
    static let logPart: Int64 = 0
    static let tombstonePart: Int64 = 1
    static let horizonPart: Int64 = 2
    static let clientTokenPart: Int64 = 3
    static let tombstoneAgePart: Int64 = 4
    static let compactionPart: Int64 = 7

    static let changedEntry: UInt8 = 1
    static let deletedEntry: UInt8 = 2

    static func changeKey(zone: Int64, part: Int64, _ rest: (inout KeyWriter) -> Void = { _ in }) -> [UInt8] {
        var w = KeyWriter(capacity: 32)
        w.append(zone)
        w.append(part)
        rest(&w)
        return w.bytes
    }

    static func logKey(zone: Int64, sequence: Int64, row: Int64) -> [UInt8] {
        changeKey(zone: zone, part: logPart) {
            $0.append(sequence)
            $0.append(row)
        }
    }

    static func tombstoneKey(zone: Int64, name: String) -> [UInt8] { changeKey(zone: zone, part: tombstonePart) { $0.append(name) } }

    static func tombstoneAgeKey(zone: Int64, sequence: Int64, row: Int64) -> [UInt8] {
        changeKey(zone: zone, part: tombstoneAgePart) {
            $0.append(sequence)
            $0.append(row)
        }
    }

    static func position(sequence: Int64, row: Int64) -> [UInt8] {
        var w = KeyWriter(capacity: 18)
        w.append(sequence)
        w.append(row)
        return w.bytes
    }

    /// The key under which a zone's change event waits for the commit
    /// (`StorageWriteTransaction.writeBeforeCommit`): the zone's id, which is the same in
    /// every database that reaches the zone. Not stored.
    static func zoneEventHold(zone: Int64) -> [UInt8] { bigEndianKey(zone) }

    static func databaseLogPrefix(scope: Int, owner: String) -> [UInt8] { databaseKey(scope: scope, owner: owner, part: logPart) }

    /// (scope, owner, part, rest…): a key of a database's log (`logPart`), its zones' last
    /// entries (`tombstonePart`), its horizon, or its age entries.
    static func databaseKey(scope: Int, owner: String, part: Int64, _ rest: (inout KeyWriter) -> Void = { _ in }) -> [UInt8] {
        var w = KeyWriter(capacity: 64)
        w.append(Int64(scope))
        w.append(owner)
        w.append(part)
        rest(&w)
        return w.bytes
    }

    static func databaseLastKey(scope: Int, owner: String, zoneName: String) -> [UInt8] {
        databaseKey(scope: scope, owner: owner, part: tombstonePart) { $0.append(zoneName) }
    }
}

/// What happened to a zone, in the database change log.
enum ZoneChangeKind: UInt8 {
    case changed = 1
    case deleted = 2
    case purged = 3
}
