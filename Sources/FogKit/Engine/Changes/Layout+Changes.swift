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
///
/// `dbchanges`, keys starting with (scope, owner):
///
/// | key | value |
/// |---|---|
/// | (scope, owner, 0, sequence, zone id) | kind (`1` changed, `2` deleted, `3` purged), zone name |
/// | (scope, owner, 1, zone name) | (sequence, zone id) tuple of the zone's entry |
extension Layout {
    static let logPart: Int64 = 0
    static let tombstonePart: Int64 = 1
    static let horizonPart: Int64 = 2
    static let clientTokenPart: Int64 = 3
    static let tombstoneAgePart: Int64 = 4

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

    static func databaseLogPrefix(scope: Int, owner: String) -> [UInt8] {
        var w = KeyWriter(capacity: 48)
        w.append(Int64(scope))
        w.append(owner)
        w.append(logPart)
        return w.bytes
    }

    static func databaseLastKey(scope: Int, owner: String, zoneName: String) -> [UInt8] {
        var w = KeyWriter(capacity: 64)
        w.append(Int64(scope))
        w.append(owner)
        w.append(tombstonePart)
        w.append(zoneName)
        return w.bytes
    }
}

/// What happened to a zone, in the database change log.
enum ZoneChangeKind: UInt8 {
    case changed = 1
    case deleted = 2
    case purged = 3
}

extension Engine {
    /// Logs that a record was saved at `sequence`: its entry moves to the end of the zone's
    /// log, and a tombstone of an earlier record with the same name goes away.
    func logSave(zone: Int64, row: Int64, name: String, previousSequence: Int64?, sequence: Int64, txn: Store.WriteTransaction) throws {
        if let previousSequence {
            try txn.delete(Layout.logKey(zone: zone, sequence: previousSequence, row: row), in: changeTable)
        } else {
            try removeTombstone(zone: zone, name: name, txn: txn)
        }
        try txn.put([Layout.changedEntry], forKey: Layout.logKey(zone: zone, sequence: sequence, row: row), in: changeTable)
    }

    /// Logs that a record was deleted at `sequence`: its entry becomes a tombstone.
    func logDelete(
        zone: Int64, row: Int64, name: String, type: Int64, previousSequence: Int64, sequence: Int64, now: Date,
        txn: Store.WriteTransaction
    ) throws {
        try txn.delete(Layout.logKey(zone: zone, sequence: previousSequence, row: row), in: changeTable)
        var entry = ByteWriter(capacity: 16 + name.utf8.count)
        entry.u8(Layout.deletedEntry)
        entry.varint(type)
        entry.raw(name)
        try txn.put(entry.bytes, forKey: Layout.logKey(zone: zone, sequence: sequence, row: row), in: changeTable)
        try txn.put(Layout.position(sequence: sequence, row: row), forKey: Layout.tombstoneKey(zone: zone, name: name), in: changeTable)
        var age = ByteWriter(capacity: 8 + name.utf8.count)
        age.f64(now.timeIntervalSinceReferenceDate)
        age.raw(name)
        try txn.put(age.bytes, forKey: Layout.tombstoneAgeKey(zone: zone, sequence: sequence, row: row), in: changeTable)
    }

    private func removeTombstone(zone: Int64, name: String, txn: Store.WriteTransaction) throws {
        let key = Layout.tombstoneKey(zone: zone, name: name)
        guard let position = try txn.value(forKey: key, in: changeTable) else { return }
        var reader = KeyReader(position)
        let sequence = try reader.readInt64()
        let row = try reader.readInt64()
        try txn.delete(Layout.logKey(zone: zone, sequence: sequence, row: row), in: changeTable)
        try txn.delete(Layout.tombstoneAgeKey(zone: zone, sequence: sequence, row: row), in: changeTable)
        try txn.delete(key, in: changeTable)
    }

    /// Drops the zone's tombstones deleted before `cutoff`, oldest first, and moves the
    /// zone's horizon past them: tokens from before the horizon have expired.
    func pruneTombstones(zone: Int64, before cutoff: Date, txn: Store.WriteTransaction) throws {
        var pruned: [(sequence: Int64, row: Int64, name: String)] = []
        let prefix = Layout.changeKey(zone: zone, part: Layout.tombstoneAgePart)
        try txn.scan(changeTable, range: .prefix(prefix)) { key, value in
            var r = ByteReader(value)
            let deleted = try r.f64()
            guard deleted < cutoff.timeIntervalSinceReferenceDate else { return false }
            guard key.starts(with: prefix) else { throw FormatError(message: "a key in zone \(zone)'s tombstone log is damaged") }
            var reader = KeyReader(UnsafeRawBufferPointer(rebasing: key[prefix.count...]))
            pruned.append((try reader.readInt64(), try reader.readInt64(), try r.rawString(count: value.count - 8)))
            return true
        }
        guard let newest = pruned.last else { return }
        for t in pruned {
            try txn.delete(Layout.logKey(zone: zone, sequence: t.sequence, row: t.row), in: changeTable)
            try txn.delete(Layout.tombstoneAgeKey(zone: zone, sequence: t.sequence, row: t.row), in: changeTable)
            try txn.delete(Layout.tombstoneKey(zone: zone, name: t.name), in: changeTable)
        }
        try txn.put(
            Layout.position(sequence: newest.sequence, row: newest.row), forKey: Layout.changeKey(zone: zone, part: Layout.horizonPart),
            in: changeTable)
    }

    /// The zone's horizon: the log position (sequence, row) of the newest pruned tombstone,
    /// or `nil` when nothing was pruned. A token that has not read past it has missed a
    /// deletion, and has expired. (A position, not only a sequence: a page may end in the
    /// middle of one commit's entries.)
    func horizon(zone: Int64, txn: Store.ReadTransaction) throws -> (sequence: Int64, row: Int64)? {
        try txn.withValue(forKey: Layout.changeKey(zone: zone, part: Layout.horizonPart), in: changeTable) { value in
            var reader = KeyReader(value)
            return (try reader.readInt64(), try reader.readInt64())
        }
    }

    /// Keeps the client change token data of the latest modify request on a zone.
    func storeClientChangeToken(_ data: Data, zone: Int64, txn: Store.WriteTransaction) throws {
        try txn.put(Array(data), forKey: Layout.changeKey(zone: zone, part: Layout.clientTokenPart), in: changeTable)
    }

    func clientChangeToken(zone: Int64, txn: Store.ReadTransaction) throws -> Data? {
        try txn.withValue(forKey: Layout.changeKey(zone: zone, part: Layout.clientTokenPart), in: changeTable) { Data($0) }
    }

    /// Logs a zone event in its database's log; the zone keeps one entry, at its latest event.
    func logZone(_ kind: ZoneChangeKind, address: ZoneAddress, zone: Int64, sequence: Int64, txn: Store.WriteTransaction) throws {
        let last = Layout.databaseLastKey(scope: address.scope, owner: address.owner, zoneName: address.zoneName)
        let prefix = Layout.databaseLogPrefix(scope: address.scope, owner: address.owner)
        if let previous = try txn.value(forKey: last, in: databaseChangeTable) {
            try txn.delete(prefix + previous, in: databaseChangeTable)
        }
        let position = Layout.position(sequence: sequence, row: zone)
        var entry = ByteWriter(capacity: 8 + address.zoneName.utf8.count)
        entry.u8(kind.rawValue)
        entry.raw(address.zoneName)
        try txn.put(entry.bytes, forKey: prefix + position, in: databaseChangeTable)
        try txn.put(position, forKey: last, in: databaseChangeTable)
    }
}
