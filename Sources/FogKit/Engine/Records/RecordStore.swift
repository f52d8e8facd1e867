import FogStorage
import Foundation

/// The records themselves: the `records` table (row id → encoded record), the `names` table
/// (zone and record name → row id) and the `refs` table (the `deleteSelf` references of each
/// target). ``RecordWriter`` writes them through this service's tables; everything else
/// reads records by row or name here.
final class RecordStore<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    /// Row id → encoded record.
    let table: Table
    /// Zone and record name → row id.
    let names: Table
    /// Zone, target name and source row → nothing: the `deleteSelf` references of each target.
    let refs: Table
    /// The asset files and their reference counts (the `assets` table).
    let assets: AssetStore<Store>
    /// Where records were last found or written by name, for fetches by ID, which check
    /// each hint against their snapshot (``RowHints``).
    let rowHints = RowHints()

    init(core: EngineCore<Store>) {
        self.core = core
        table = core.store.table(named: Layout.records)
        names = core.store.table(named: Layout.names)
        refs = core.store.table(named: Layout.refs)
        assets = AssetStore(core: core)
    }

    /// The row id of a record, or `nil` when absent.
    @inline(__always)
    func rowID(zone: Int64, name: String, in txn: Store.ReadTransaction) throws -> Int64? {
        try Layout.withNameKey(zone: zone, recordName: name) { key in
            try txn.withValue(forKey: key, in: names) { try readBigEndianKey($0) }
        }
    }

    /// How many records reference `target` with `deleteSelf`, counting up to `limit`.
    func countRefs(zone: Int64, target: String, limit: Int, in txn: Store.ReadTransaction) throws -> Int {
        var count = 0
        try txn.scan(refs, range: .prefix(Layout.refPrefix(zone: zone, target: target))) { _, _ in
            count += 1
            return count < limit
        }
        return count
    }

    /// Visits the records of one record type in one zone, in row order, starting after
    /// `afterRow`: a sequential read of `records` that skips other types and zones by their
    /// header. `body` gets the row and the encoded record (valid during the call) and
    /// returns `false` to stop.
    ///
    /// This is how whole-type queries and index rebuilds find a type's records: the table
    /// is read in key order, with no index entry per record to keep up.
    func scanRecords(
        zone: Int64?, type: Int64, after afterRow: Int64? = nil, txn: Store.ReadTransaction,
        _ body: (Int64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var range = ScanRange.all
        if let afterRow { (range.lower, range.lowerInclusive) = (bigEndianKey(afterRow), false) }
        try txn.scan(table, range: range) { key, value in
            let header = try RecordCodec.typeAndZone(value)
            guard header.type == type, zone == nil || header.zone == zone else { return true }
            return try body(try readBigEndianKey(key), value)
        }
    }

    /// Calls `body` with the encoded record at `row` (valid during the call); `nil` when
    /// there is none. The key is built on the stack.
    @inline(__always)
    func withRecord<R>(_ row: Int64, in txn: Store.ReadTransaction, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try withUnsafeBytes(of: row.bigEndian) { try txn.withValue(forKey: $0, in: table, body) }
    }

    /// Removes every record of a zone: its rows, names, references and asset references (the zone's keys in
    /// `names` and `refs` start with the zone id, as do its index and change-log keys). The
    /// records go 1,024 at a time, so memory does not grow with the zone. Returns the bytes
    /// the records counted in their owner's storage (``StorageUsage``).
    @discardableResult
    func deleteAll(zone: Int64, in txn: Store.WriteTransaction) throws -> Int64 {
        let prefix = Layout.zoneRowsPrefix(zone: zone)
        var usage: Int64 = 0
        while true {
            var chunk: [(name: [UInt8], row: Int64)] = []
            try txn.scan(names, range: .prefix(prefix)) { key, value in
                chunk.append((Array(key), try readBigEndianKey(value)))
                return chunk.count < 1_024
            }
            for entry in chunk {
                try assets.release(row: entry.row, records: table, txn: txn)
                usage += try txn.withValue(forKey: bigEndianKey(entry.row), in: table) { try StorageUsage.measure(encoded: $0) } ?? 0
                try txn.delete(bigEndianKey(entry.row), in: table)
                try txn.delete(entry.name, in: names)
            }
            if chunk.count < 1_024 { break }
        }
        try txn.deleteAll(in: refs, range: .prefix(prefix))
        return usage
    }
}

extension [String: FieldValue] {
    /// The names of the records these values reference with `deleteSelf`.
    var deleteSelfTargets: Set<String> {
        var targets: Set<String> = []
        for value in self.values {
            switch value {
            case .reference(let r) where r.action == .deleteSelf: targets.insert(r.recordID.recordName)
            case .referenceList(let list):
                for r in list where r.action == .deleteSelf { targets.insert(r.recordID.recordName) }
            default: break
            }
        }
        return targets
    }
}
