import FogStorage
import Foundation

/// The change logs: each zone's log (every record at its latest change, tombstones of
/// deleted records with their age, and the stale entries of earlier changes until a
/// compaction removes them), the zone's horizon and client change token, and each
/// database's log of zone events. Written in the transaction of the change they record;
/// ``ChangeFeeds`` reads them.
final class ChangeLog<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    /// Zone logs, tombstones, horizons and client change tokens.
    let changeTable: Table
    /// Database logs of zone events.
    let databaseChangeTable: Table
    /// The records, whose change sequence tells a stale log entry (``LogCompaction``).
    let records: RecordStore<Store>

    init(core: EngineCore<Store>, records: RecordStore<Store>) {
        self.core = core
        self.records = records
        changeTable = core.store.table(named: Layout.changes)
        databaseChangeTable = core.store.table(named: Layout.databaseChanges)
    }

    /// Removes a zone's log, tombstones, horizon and client change token (its keys start with
    /// the zone id). The database log keeps the zone's deletion event.
    func deleteAll(zone: Int64, in txn: Store.WriteTransaction) throws {
        try txn.deleteAll(in: changeTable, range: .prefix(Layout.zoneRowsPrefix(zone: zone)))
    }

    /// Logs that a record was saved at `sequence`: it gets an entry at the end of the zone's
    /// log, and a tombstone of an earlier record with the same name goes away. The entry of
    /// its previous save stays, stale, for feeds to skip and a compaction to remove.
    /// - Returns: Whether an entry was left stale (the caller counts them for the zone with
    ///   ``noteStale(_:zone:txn:)``): the record's entry of an earlier commit. Decided by what
    ///   the log holds, not by `previousSequence` alone: when an earlier item of the request
    ///   already gave the record its entry at `sequence` (an atomic zone plans every item
    ///   before applying any, so a later item may carry the sequence from before the
    ///   request), that earlier write left the old entry stale and counted it.
    @discardableResult
    func logSave(
        zone: Int64, row: Int64, name: String, previousSequence: Int64?, sequence: Int64, txn: Store.WriteTransaction
    ) throws -> Bool {
        if previousSequence == nil { try removeTombstone(zone: zone, name: name, txn: txn) }
        // The entry is `01` whether it was there or not: only whether it was there matters.
        let key = Layout.logKey(zone: zone, sequence: sequence, row: row)
        let inserted = try txn.insert([Layout.changedEntry], forKey: key, in: changeTable)
        return inserted && previousSequence != nil
    }

    /// Logs that a record was deleted at `sequence`: a tombstone at the end of the log. The
    /// entry of its last save stays, stale (its row is gone).
    /// - Returns: Whether an entry was left stale: the record's entry of an earlier commit,
    ///   unless an earlier item of the request gave the record an entry at `sequence`, which
    ///   the tombstone replaces (that write counted the older one; see ``logSave(zone:row:name:previousSequence:sequence:txn:)``).
    @discardableResult
    func logDelete(
        zone: Int64, row: Int64, name: String, type: Int64, previousSequence: Int64, sequence: Int64, now: Date,
        txn: Store.WriteTransaction
    ) throws -> Bool {
        var entry = ByteWriter(capacity: 16 + name.utf8.count)
        entry.u8(Layout.deletedEntry)
        entry.varint(type)
        entry.raw(name)
        let key = Layout.logKey(zone: zone, sequence: sequence, row: row)
        let inserted = try txn.insert(entry.bytes, forKey: key, in: changeTable)
        if !inserted { try txn.put(entry.bytes, forKey: key, in: changeTable) }
        try txn.put(Layout.position(sequence: sequence, row: row), forKey: Layout.tombstoneKey(zone: zone, name: name), in: changeTable)
        var age = ByteWriter(capacity: 8 + name.utf8.count)
        age.f64(now.timeIntervalSinceReferenceDate)
        age.raw(name)
        try txn.put(age.bytes, forKey: Layout.tombstoneAgeKey(zone: zone, sequence: sequence, row: row), in: changeTable)
        return inserted && previousSequence != sequence
    }

    private func removeTombstone(zone: Int64, name: String, txn: Store.WriteTransaction) throws {
        let key = Layout.tombstoneKey(zone: zone, name: name)
        guard let position = try txn.value(forKey: key, in: changeTable) else { return }
        var reader = KeyReader(position)
        let sequence = try reader.readInt64()
        let row = try reader.readInt64()
        try txn.delete(Layout.logKey(zone: zone, sequence: sequence, row: row), in: changeTable)
        try txn.delete(Layout.tombstoneAgeKey(zone: zone, sequence: sequence, row: row), in: changeTable)
        try txn.delete(Layout.sharedDeletionKey(zone: zone, sequence: sequence, row: row), in: changeTable)
        try txn.delete(key, in: changeTable)
    }

    /// Drops the zone's tombstones deleted before `cutoff`, oldest first, at most `limit` of
    /// them, and moves the zone's horizon past the newest one dropped: tokens from before
    /// the horizon have expired. Tombstones past the limit stay for a later call (the next
    /// request that deletes in the zone), so one call's work and memory are bounded, and the
    /// horizon never passes a tombstone that is still there. Returns how many were dropped.
    @discardableResult
    func pruneTombstones(
        zone: Int64, before cutoff: Date, limit: Int = EngineDefaults.pruneBatchSize, txn: Store.WriteTransaction
    ) throws -> Int {
        let pruned = try expired(
            in: changeTable, agePrefix: Layout.changeKey(zone: zone, part: Layout.tombstoneAgePart), before: cutoff, limit: limit, txn: txn)
        guard let newest = pruned.last else { return 0 }
        for t in pruned {
            try txn.delete(Layout.logKey(zone: zone, sequence: t.sequence, row: t.item), in: changeTable)
            try txn.delete(Layout.tombstoneAgeKey(zone: zone, sequence: t.sequence, row: t.item), in: changeTable)
            try txn.delete(Layout.sharedDeletionKey(zone: zone, sequence: t.sequence, row: t.item), in: changeTable)
            try txn.delete(Layout.tombstoneKey(zone: zone, name: t.name), in: changeTable)
        }
        try txn.put(
            Layout.position(sequence: newest.sequence, row: newest.item), forKey: Layout.changeKey(zone: zone, part: Layout.horizonPart),
            in: changeTable)
        return pruned.count
    }

    /// Drops the deletion and purge events of a database's zones that happened before
    /// `cutoff`, oldest first, at most `limit` of them, with their position and age entries,
    /// and moves the database's horizon past the newest one dropped, as
    /// ``pruneTombstones(zone:before:limit:txn:)`` does for a zone. Returns how many were
    /// dropped. Events written before age entries existed have none, and are kept.
    @discardableResult
    func pruneZoneDeletions(
        scope: Int, owner: String, before cutoff: Date, limit: Int = EngineDefaults.pruneBatchSize, txn: Store.WriteTransaction
    ) throws -> Int {
        // The zone changes held for the commit first: an entry they move is not pruned.
        try txn.runWritesBeforeCommit()
        let agePrefix = Layout.databaseKey(scope: scope, owner: owner, part: Layout.tombstoneAgePart)
        let pruned = try expired(in: databaseChangeTable, agePrefix: agePrefix, before: cutoff, limit: limit, txn: txn)
        guard let newest = pruned.last else { return 0 }
        let logPrefix = Layout.databaseLogPrefix(scope: scope, owner: owner)
        for event in pruned {
            let position = Layout.position(sequence: event.sequence, row: event.item)
            try txn.delete(logPrefix + position, in: databaseChangeTable)
            try txn.delete(agePrefix + position, in: databaseChangeTable)
            // The name's position entry goes only if it still points here (a FogKit from before
            // age entries left them behind when a zone name was created again).
            let last = Layout.databaseLastKey(scope: scope, owner: owner, zoneName: event.name)
            if try txn.value(forKey: last, in: databaseChangeTable) == position { try txn.delete(last, in: databaseChangeTable) }
        }
        try txn.put(
            Layout.position(sequence: newest.sequence, row: newest.item),
            forKey: Layout.databaseKey(scope: scope, owner: owner, part: Layout.horizonPart), in: databaseChangeTable)
        return pruned.count
    }

    /// The age entries under `agePrefix` (keys: prefix, sequence, second element; values: a
    /// date, then a name) dated before `cutoff`, oldest first, at most `limit`: the scan
    /// stops at the first entry that is young enough, or at the limit.
    private func expired(
        in table: Table, agePrefix: [UInt8], before cutoff: Date, limit: Int, txn: Store.WriteTransaction
    ) throws -> [(sequence: Int64, item: Int64, name: String)] {
        var found: [(sequence: Int64, item: Int64, name: String)] = []
        guard limit > 0 else { return found }
        try txn.scan(table, range: .prefix(agePrefix)) { key, value in
            var r = ByteReader(value)
            let deleted = try r.f64()
            guard deleted < cutoff.timeIntervalSinceReferenceDate else { return false }
            guard key.starts(with: agePrefix) else { throw FormatError(message: "a key of the change log's age entries is damaged") }
            var reader = KeyReader(UnsafeRawBufferPointer(rebasing: key[agePrefix.count...]))
            found.append((try reader.readInt64(), try reader.readInt64(), try r.rawString(count: value.count - 8)))
            return found.count < limit
        }
        return found
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
    /// A deletion or purge also gets an age entry dated `now` (the clock when `nil`), by which
    /// ``pruneZoneDeletions(scope:owner:before:limit:txn:)`` drops it once it is older than
    /// the retention.
    ///
    /// A change is written just before the commit (`writeBeforeCommit`, under the zone's id,
    /// ``Layout/zoneEventHold(zone:)``): when the writer groups requests, the zone's entry moves once for the
    /// group, to the last request's sequence, instead of once for each request. A deletion or
    /// purge first writes the changes held, so that it comes after them.
    func logZone(
        _ kind: ZoneChangeKind, address: ZoneAddress, zone: Int64, sequence: Int64, now: Date? = nil, txn: Store.WriteTransaction
    ) throws {
        guard kind != .changed else {
            txn.writeBeforeCommit(key: Layout.zoneEventHold(zone: zone)) { [self] txn in
                try writeZoneEvent(.changed, address: address, zone: zone, sequence: sequence, now: now, txn: txn)
            }
            return
        }
        try txn.runWritesBeforeCommit()
        try writeZoneEvent(kind, address: address, zone: zone, sequence: sequence, now: now, txn: txn)
    }

    /// Moves the zone's entry in its database's log to `sequence`; see ``logZone(_:address:zone:sequence:now:txn:)``.
    private func writeZoneEvent(
        _ kind: ZoneChangeKind, address: ZoneAddress, zone: Int64, sequence: Int64, now: Date?, txn: Store.WriteTransaction
    ) throws {
        let last = Layout.databaseLastKey(scope: address.scope, owner: address.owner, zoneName: address.zoneName)
        let prefix = Layout.databaseLogPrefix(scope: address.scope, owner: address.owner)
        let agePrefix = Layout.databaseKey(scope: address.scope, owner: address.owner, part: Layout.tombstoneAgePart)
        if let previous = try txn.value(forKey: last, in: databaseChangeTable) {
            try txn.delete(prefix + previous, in: databaseChangeTable)
            try txn.delete(agePrefix + previous, in: databaseChangeTable)
        }
        let position = Layout.position(sequence: sequence, row: zone)
        var entry = ByteWriter(capacity: 8 + address.zoneName.utf8.count)
        entry.u8(kind.rawValue)
        entry.raw(address.zoneName)
        try txn.put(entry.bytes, forKey: prefix + position, in: databaseChangeTable)
        try txn.put(position, forKey: last, in: databaseChangeTable)
        if kind != .changed {
            var age = ByteWriter(capacity: 8 + address.zoneName.utf8.count)
            age.f64((now ?? Date()).timeIntervalSinceReferenceDate)
            age.raw(address.zoneName)
            try txn.put(age.bytes, forKey: agePrefix + position, in: databaseChangeTable)
        }
    }

    /// The database's horizon: the log position (sequence, zone id) of the newest pruned zone
    /// deletion, or `nil` when none was pruned (always so in a store written before zone
    /// deletions were pruned).
    func databaseHorizon(scope: Int, owner: String, txn: Store.ReadTransaction) throws -> (sequence: Int64, zone: Int64)? {
        try txn.withValue(forKey: Layout.databaseKey(scope: scope, owner: owner, part: Layout.horizonPart), in: databaseChangeTable) {
            value in
            var reader = KeyReader(value)
            return (try reader.readInt64(), try reader.readInt64())
        }
    }
}
