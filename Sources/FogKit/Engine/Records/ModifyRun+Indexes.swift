import FogStorage
import Foundation

// How a modify request keeps index entries up to date: a new or deleted record's entries
// whole, an update's only for the fields it changed.
extension ModifyRun {
    /// Brings a record's index entries from `old` to `new`, reading each record type's index
    /// definitions once per request (no request changes them).
    mutating func updateIndexEntries(old: StoredRecord?, new: StoredRecord?, row: Int64, zone: Int64) throws {
        guard let recordType = new?.recordType ?? old?.recordType, let type = try names.resolver.id(recordType) else { return }
        let indexes = try definitions(of: recordType)
        try writer.indexes.updateIndexEntries(
            old: old, new: new, row: row, zone: zone, type: type, oldIndexes: indexes, newIndexes: indexes, txn: txn, names: &names.resolver
        )
    }

    /// Brings an updated record's index entries up to date, decoding only what they compare:
    /// the indexed fields the update writes (the others keep their entries), the system
    /// fields from the headers, and every searchable field when it writes one (the record's
    /// tokens come from all of them).
    mutating func updateIndexEntries(
        of existing: EncodedRecord, changes: FieldChanges, new: StoredRecord, row: Int64, zone: Int64
    )
        throws
    {
        let recordType = new.recordType
        let fields: [IndexedField]
        if let known = indexedFields[recordType] {
            fields = known
        } else {
            fields = try IndexedField.fields(of: try definitions(of: recordType), names: &names.resolver)
            indexedFields[recordType] = fields
        }
        guard !fields.isEmpty, let type = try names.resolver.id(recordType) else { return }
        var tokensChanged = false
        for field in fields {
            let old: FieldValue?, updated: FieldValue?
            if field.isSystem {
                old = existing.header.value(forKey: field.name)
                updated = new.value(forKey: field.name)
            } else if let written = changes.written(field.name) {
                old = try existing.value(field.name)
                updated = written
            } else {
                continue
            }
            guard !IndexEntries.sameEntries(old, updated) else { continue }
            if field.options.contains(.searchable) { tokensChanged = true }
            guard field.hasEntries, let id = try field.id ?? names.resolver.id(field.name) else { continue }
            try writer.indexes.replaceEntries(
                of: id, options: field.options, old: old, new: updated, row: row, zone: zone, type: type, txn: txn)
        }
        guard tokensChanged else { return }
        var before: [FieldValue] = []
        var after: [FieldValue] = []
        for field in fields where field.options.contains(.searchable) {
            let old = field.isSystem ? existing.header.value(forKey: field.name) : try existing.value(field.name)
            let updated = field.isSystem ? new.value(forKey: field.name) : changes.written(field.name) ?? old
            if let old { before.append(old) }
            if let updated { after.append(updated) }
        }
        try writer.indexes.replaceTokens(old: before, new: after, row: row, zone: zone, type: type, txn: txn)
    }

    /// The index definitions of a record type, read once per request (no request changes them).
    mutating func definitions(of recordType: String) throws -> TypeIndexes {
        if let known = indexDefinitions.first(where: { $0.recordType == recordType }) { return known.indexes }
        let indexes = try writer.indexes.definitions(of: recordType, txn: txn.readView, names: &names.resolver)
        indexDefinitions.append((recordType, indexes))
        return indexes
    }
}
