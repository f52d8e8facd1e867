import FogStorage
import Foundation

/// The change logs: each zone's log (every record once, at its latest change, and tombstones
/// of deleted records with their age), the zone's horizon and client change token, and each
/// database's log of zone events. Written in the transaction of the change they record;
/// ``ChangeFeeds`` reads them.
final class ChangeLog<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    /// Zone logs, tombstones, horizons and client change tokens.
    let changeTable: Table
    /// Database logs of zone events.
    let databaseChangeTable: Table

    init(core: EngineCore<Store>) {
        self.core = core
        changeTable = core.store.table(named: Layout.changes)
        databaseChangeTable = core.store.table(named: Layout.databaseChanges)
    }

    /// Removes a zone's log, tombstones, horizon and client change token (its keys start with
    /// the zone id). The database log keeps the zone's deletion event.
    func deleteAll(zone: Int64, in txn: Store.WriteTransaction) throws {
        try txn.deleteAll(in: changeTable, range: .prefix(Layout.zoneRowsPrefix(zone: zone)))
    }

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
