import FogStorage
import Foundation

/// Whose storage a record counts against: a user's private database (their own zones, and
/// the zones they share, whoever writes them) or the container's public database.
struct UsageOwner: Sendable, Hashable {
    /// `Database.Scope.public` or `.private` (a shared zone is its owner's private zone).
    let scope: Int
    /// The owner's user record name; empty for the public database.
    let owner: String

    /// The owner of the zone at `address`.
    init(_ address: ZoneAddress) {
        self.init(scope: address.scope, owner: address.owner)
    }

    init(scope: Int, owner: String) {
        self.scope = scope
        self.owner = scope == Database.Scope.public.rawValue ? "" : owner
    }

    /// `meta`: ("usage", scope, owner) → bytes stored, big-endian.
    var key: [UInt8] {
        var w = KeyWriter(capacity: 24 + owner.utf8.count)
        w.append("usage")
        w.append(Int64(scope))
        w.append(owner)
        return w.bytes
    }
}

/// The running count of the bytes each user (and the public database) stores: every
/// record's encoded bytes plus the sizes of its assets. Saves, deletes and zone deletions
/// adjust it inside their commit, so checking a quota reads one counter and never scans.
///
/// A store written before the counters existed is counted once, when it is first opened
/// (``countIfMissing(core:records:zones:)``).
enum StorageUsage {
    /// `meta`: set once every owner's counter is written.
    static let countedKey: [UInt8] = Array("usageCounted".utf8)

    /// What the encoded record in `buffer` counts: its bytes and its assets' sizes. Only the
    /// header and field table are checked and only the asset fields are decoded, so a save
    /// pays a walk of its field table, not a second check of every payload.
    static func measure(encoded buffer: UnsafeRawBufferPointer) throws -> Int64 {
        let view = try RecordView(buffer, checking: FieldSelection(ids: []))
        var total = Int64(buffer.count)
        try RecordView.forEachField(view.buffer, count: view.count, tableStart: view.tableStart, payloadStart: view.payloadStart) {
            _, type, payload in
            total += try assetBytes(payload, type: type)
            return true
        }
        return total
    }

    /// The form of ``measure(encoded:)-(UnsafeRawBufferPointer)`` for a byte array.
    static func measure(encoded bytes: [UInt8]) throws -> Int64 {
        try bytes.withUnsafeBytes { try measure(encoded: $0) }
    }

    /// What ``measure(encoded:)-([UInt8])`` counts for `record`'s bytes, from the field table
    /// its read parsed and checked already: no second walk of the bytes, and only its asset
    /// fields decoded.
    static func measure(_ record: EncodedRecord) throws -> Int64 {
        var total = Int64(record.bytes.count)
        for field in record.fields where isAsset(field.type) {
            total += try record.bytes.withUnsafeBytes {
                try assetBytes(UnsafeRawBufferPointer(rebasing: $0[field.payload]), type: field.type)
            }
        }
        assert((try? measure(encoded: record.bytes)) == total, "a record's table counts what its bytes do")
        return total
    }

    /// What ``measure(encoded:)-([UInt8])`` counts for `bytes`, the encoding of a save: of the
    /// record `existing` updated with `changes`, or of a new record with `values`. A record
    /// that can hold no asset (none of the fields it keeps is one, nor any value it writes:
    /// the encoding takes each field's type from one or the other) counts its bytes alone,
    /// without a walk of its field table.
    static func measure(
        saved bytes: [UInt8], _ existing: EncodedRecord?, _ changes: FieldChanges, _ values: [String: FieldValue]
    ) throws -> Int64 {
        let mayHoldAssets: Bool
        if let existing {
            mayHoldAssets =
                existing.fields.contains { isAsset($0.type) } || changes.values.contains { $0.map { isAsset($0.fieldType) } ?? false }
        } else {
            mayHoldAssets = values.values.contains { isAsset($0.fieldType) }
        }
        guard mayHoldAssets else {
            assert(try! measure(encoded: bytes) == Int64(bytes.count), "a record without assets counts its bytes")
            return Int64(bytes.count)
        }
        return try measure(encoded: bytes)
    }

    /// Whether fields of `type` hold assets.
    @inline(__always)
    private static func isAsset(_ type: FieldType) -> Bool { type == .asset || type == .assetList }

    /// The sizes of the assets in a field's payload: 0 unless it is an asset or a list of them.
    @inline(__always)
    private static func assetBytes(_ payload: UnsafeRawBufferPointer, type: FieldType) throws -> Int64 {
        guard isAsset(type) else { return 0 }
        switch try RecordCodec.decodePayload(payload, type: type) {
        case .asset(let a): return a.storedSize
        case .assetList(let list): return list.reduce(0) { $0 + $1.storedSize }
        default: return 0
        }
    }

    /// The bytes `owner` stores.
    static func current(_ owner: UsageOwner, meta: Table, in txn: some StorageReadTransaction) throws -> Int64 {
        try txn.withValue(forKey: owner.key, in: meta) { try readBigEndianKey($0) } ?? 0
    }

    /// Adds `delta` bytes to `owner`'s count (never below 0: system updates of a few bytes,
    /// such as a share's link on its root, are not counted, and their deletion could go
    /// under).
    static func add(_ delta: Int64, to owner: UsageOwner, meta: Table, txn: some StorageWriteTransaction) throws {
        guard delta != 0 else { return }
        let value = max(0, try current(owner, meta: meta, in: txn) + delta)
        try txn.put(bigEndianKey(value), forKey: owner.key, in: meta)
    }

    /// Removes every owner's count (a development reset, which deletes every record): each
    /// count starts again from 0. The "counted" mark stays, since 0 is then every count.
    static func clearAll(meta: Table, txn: some StorageWriteTransaction) throws {
        var prefix = KeyWriter(capacity: 8)
        prefix.append("usage")
        try txn.deleteAll(in: meta, range: .prefix(prefix.bytes))
    }

    /// Writes every owner's count from the stored records, once: a store whose counters
    /// exist already is left alone. One pass over the zones and one over the records;
    /// nothing but the totals is kept in memory.
    static func countIfMissing<Store: KeyValueStore>(core: EngineCore<Store>, records: Table, zones: Table) throws {
        let counted = try core.read { txn, _ in try txn.value(forKey: countedKey, in: core.meta) != nil }
        guard !counted else { return }
        try core.writeAndWait { txn, _ in
            guard try txn.value(forKey: countedKey, in: core.meta) == nil else { return }
            var owners: [Int64: UsageOwner] = [:]
            try txn.scan(zones) { key, value in
                var reader = KeyReader(key)
                let scope = Int(try reader.readInt64())
                let owner = try reader.readString()
                owners[try ZoneInfo.decode(value).id] = UsageOwner(scope: scope, owner: owner)
                return true
            }
            var totals: [UsageOwner: Int64] = [:]
            // A record that does not decode (damage, which the integrity check reports) counts
            // its bytes alone: counting never stops a store from opening.
            try txn.scan(records) { _, value in
                if let zone = try? RecordCodec.typeAndZone(value).zone, let owner = owners[zone] {
                    totals[owner, default: 0] += (try? measure(encoded: value)) ?? Int64(value.count)
                }
                return true
            }
            for (owner, total) in totals { try txn.put(bigEndianKey(total), forKey: owner.key, in: core.meta) }
            try txn.put([1], forKey: countedKey, in: core.meta)
        }
    }
}
