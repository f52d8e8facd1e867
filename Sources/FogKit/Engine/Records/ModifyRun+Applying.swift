import FogStorage
import Foundation

// How a modify request applies its plans: the record rows, names, index entries, usage
// counts and change-log entries it writes, and the rows it deletes.
extension ModifyRun {
    mutating func apply(_ plan: Plan, zone: ZoneInfo, zoneID: RecordZone.ID) throws -> Record? {
        switch plan {
        case .delete(let row, let record):
            // An all-or-nothing group plans every delete before applying any: the cascade of
            // an earlier one may have deleted this record already.
            try deleteRow(row, record, zone: zone.id)
            return nil
        case .alreadyDeleted:
            return nil
        case .leave(let row, let share):
            try leaveShare(row: row, share, zone: zone)
            return nil
        case .save(let p):
            if context.schemaMode == .development, p.client.recordType != Record.SystemType.share {
                try createJustInTime(p.client.recordType, newFields: p.newFieldTypes)
            }
            for (key, type) in p.newFieldTypes {
                try names.define(recordType: p.client.recordType, field: key, as: type)
            }
            defer { if !appliedTypes.contains(p.client.recordType) { appliedTypes.append(p.client.recordType) } }
            let row = try p.existing?.row ?? writer.nextCounter(Layout.metaNextRowID, in: txn)
            // The stored record's system fields are read from `p.existing` where needed, not
            // copied out of it (a copy retains each of its strings).
            // An update's `stored` holds no values: its fields are the kept ones and `changes`.
            let stored = StoredRecord(
                recordType: p.client.recordType, recordName: p.client.recordID.recordName, zone: zone.id,
                values: p.existing == nil ? p.values : [:], parent: p.parent, share: p.existing?.header.share,
                creationDate: p.existing?.header.creationDate ?? now, modificationDate: now,
                creator: p.existing?.header.creator ?? user, modifier: user, changeSequence: sequence)
            let bytes: [UInt8]
            if let existing = p.existing {
                bytes = try RecordCodec.encode(stored, keeping: existing, changes: p.changes, names: &names)
            } else {
                bytes = try RecordCodec.encode(stored, names: &names)
            }
            let oldUsage = try p.existing.map { try StorageUsage.measure($0) } ?? 0
            let newUsage = try StorageUsage.measure(saved: bytes, p.existing, p.changes, p.values)
            usageDeltas.add(newUsage - oldUsage, to: usageOwner)
            // A new row id is above every other, so the record appends to the table's last
            // page, which a B-tree store then fills instead of splitting it in half.
            try txn.put(count: bytes.count, forKey: bigEndianKey(row), in: writer.records.table, append: p.existing == nil) {
                $0.copyBytes(from: bytes)
            }
            if p.existing == nil {
                try txn.put(
                    bigEndianKey(row), forKey: Layout.nameKey(zone: zone.id, recordName: stored.recordName), in: writer.records.names)
                // A hint for later fetches by ID, which check it against their snapshot (so an
                // aborted transaction's hint is harmless).
                writer.records.rowHints.remember(row, for: RowHints.hash(zone: zone.id, name: stored.recordName))
            }
            try writer.records.assets.countSave(existing: p.existing, values: p.values, changes: p.changes, txn: txn)
            if let existing = p.existing {
                try updateIndexEntries(of: existing, changes: p.changes, new: stored, row: row, zone: zone.id)
            } else {
                try updateIndexEntries(old: nil, new: stored, row: row, zone: zone.id)
            }
            try logSave(zone: zone.id, row: row, name: stored.recordName, previousSequence: p.existing?.header.changeSequence)
            if notices != nil { try notifySave(stored, encoded: bytes, created: p.existing == nil) }
            // (Most records hold no `deleteSelf` reference: no sets to subtract.)
            if !p.oldTargets.isEmpty || !p.newTargets.isEmpty {
                for target in p.oldTargets.subtracting(p.newTargets) {
                    try txn.delete(Layout.refKey(zone: zone.id, target: target, source: row), in: writer.records.refs)
                }
                for target in p.newTargets.subtracting(p.oldTargets) {
                    try txn.put([], forKey: Layout.refKey(zone: zone.id, target: target, source: row), in: writer.records.refs)
                }
            }
            if let old = p.existing?.header, old.parent != p.parent, context.scope != .public {
                try noteParentChange(
                    of: stored.recordName, share: old.share, oldParent: old.parent, newParent: p.parent, zone: zone.id)
            }
            if p.existing == nil, p.client.recordType == Record.SystemType.share, case .string(let root)? = p.values[Share.rootKey] {
                try linkShare(stored.recordName, toRoot: root, zone: zone, zoneID: zoneID)
            }
            if p.existing != nil { return try makeRecord(encoded: bytes, id: p.client.recordID) }
            return try makeRecord(stored, zoneID: zoneID)
        }
    }

    /// Deletes a record and, transitively, the records that reference it with `deleteSelf`.
    /// The rows deleted in the zone (``deletedRows``) end the walk, so a cycle ends. The walk
    /// keeps its own list of rows to visit (no recursion), so a chain of any length is
    /// deleted, and it reads only the referrers' `refs` entries and records.
    mutating func deleteRow(_ row: Int64, _ record: StoredRecord, zone: Int64) throws {
        // Rows to delete, each with the target whose cascade reached it (`nil`: the first).
        var pending: [(row: Int64, target: String?)] = [(row, nil)]
        var first: StoredRecord? = record
        while let (row, target) = pending.popLast() {
            guard !deletedRows.contains(row) else { continue }
            let record: StoredRecord
            if let given = first {
                record = given
                first = nil
            } else {
                var resolver = names.resolver
                guard
                    let stored = try txn.withValue(
                        forKey: bigEndianKey(row), in: writer.records.table, { try RecordCodec.decode($0, names: &resolver) })
                else {
                    if let target { try txn.delete(Layout.refKey(zone: zone, target: target, source: row), in: writer.records.refs) }
                    continue
                }
                record = stored
            }
            deletedRows.insert(row)
            deletedNames.insert(record.recordName)
            if notices != nil { try notifyDelete(record) }
            let usage = try txn.withValue(forKey: bigEndianKey(row), in: writer.records.table) { try StorageUsage.measure(encoded: $0) }
            usageDeltas.add(-(usage ?? 0), to: usageOwner)
            try txn.delete(bigEndianKey(row), in: writer.records.table)
            try txn.delete(Layout.nameKey(zone: zone, recordName: record.recordName), in: writer.records.names)
            try updateIndexEntries(old: record, new: nil, row: row, zone: zone)
            try writer.records.assets.release(record.values, txn: txn)
            guard let type = try names.resolver.id(record.recordType) else {
                throw FormatError(message: "record \(record.recordName) has a record type with no name id")
            }
            if try writer.changes.logDelete(
                zone: zone, row: row, name: record.recordName, type: type, previousSequence: record.changeSequence, sequence: sequence,
                now: now, txn: txn)
            {
                staleInZone += 1
            }
            deletedInZone += 1
            if context.scope != .public {
                try markSharedDeletion(of: record, zone: zone, sequence: sequence, row: row)
            }
            try unlinkShare(of: record, zone: zone, pending: &pending)
            for target in deleteSelfTargets(record.values) {
                try txn.delete(Layout.refKey(zone: zone, target: target, source: row), in: writer.records.refs)
            }
            try txn.scan(writer.records.refs, range: .prefix(Layout.refPrefix(zone: zone, target: record.recordName))) { key, _ in
                var reader = KeyReader(Array(key))
                _ = try reader.readInt64()
                _ = try reader.readString()
                let source = try reader.readInt64()
                if !deletedRows.contains(source) { pending.append((source, record.recordName)) }
                return true
            }
        }
    }

    func deleteSelfTargets(_ values: [String: FieldValue]) -> Set<String> {
        values.deleteSelfTargets
    }

    /// Logs that the zone's record at `row` was saved in this request
    /// (``ChangeLog/logSave(zone:row:name:previousSequence:sequence:txn:)``), counting the
    /// entry it left stale in ``staleInZone``.
    mutating func logSave(zone: Int64, row: Int64, name: String, previousSequence: Int64?) throws {
        if try writer.changes.logSave(zone: zone, row: row, name: name, previousSequence: previousSequence, sequence: sequence, txn: txn) {
            staleInZone += 1
        }
    }
}
