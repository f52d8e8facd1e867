import FogStorage
import Foundation

extension StoredRecord {
    /// The value of a user field or of a queryable system field, as predicates see it:
    /// record IDs and user record IDs as references, dates as dates; `nil` when absent.
    func value(forKey key: String) -> FieldValue? {
        switch key {
        case Record.SystemFieldKey.recordID: return .reference(Record.Reference(recordID: Record.ID(recordName: recordName), action: .none))
        case Record.SystemFieldKey.creationDate: return .date(creationDate)
        case Record.SystemFieldKey.modificationDate: return .date(modificationDate)
        case Record.SystemFieldKey.creatorUserRecordID:
            return .reference(Record.Reference(recordID: Record.ID(recordName: creator), action: .none))
        case Record.SystemFieldKey.lastModifiedUserRecordID:
            return .reference(Record.Reference(recordID: Record.ID(recordName: modifier), action: .none))
        case Record.SystemFieldKey.parent:
            return parent.map { .reference(Record.Reference(recordID: Record.ID(recordName: $0), action: .none)) }
        case Record.SystemFieldKey.share:
            return share.map { .reference(Record.Reference(recordID: Record.ID(recordName: $0), action: .none)) }
        default: return values[key]
        }
    }
}

/// The index entries of one record: what the `indexes` table holds for it. Each entry is a
/// key under which the record's row id is stored (as one of the key's sorted set of values,
/// `bigEndianKey(row)`), so the keys do not depend on the row.
enum IndexEntries {
    /// Every index key of `record` (in `zone`) under `indexes`, each once.
    ///
    /// An array rather than a set: hashing byte arrays goes byte by byte, and the lists are
    /// short (a few entries per indexed field), so comparing them costs less.
    ///
    /// `fieldID` gives the interned id of a field name, or `nil` when the name was never
    /// interned (then the field has no entries).
    static func keys(
        of record: StoredRecord, zone: Int64, type: Int64, indexes: TypeIndexes,
        fieldID: (String) throws -> Int64?
    ) rethrows -> [[UInt8]] {
        var keys: [[UInt8]] = []
        guard !indexes.fields.isEmpty else { return keys }
        var searchable: [FieldValue] = []
        for (field, options) in indexes.fields where field != Record.SystemFieldKey.recordID {
            let value = record.value(forKey: field)
            if options.contains(.searchable), let value { searchable.append(value) }
            guard !options.isDisjoint(with: [.queryable, .sortable]), let id = try fieldID(field) else { continue }
            keys += fieldKeys(value, options: options, zone: zone, type: type, field: id)
        }
        keys += tokenKeys(searchable, zone: zone, type: type)
        return keys
    }

    /// The value and cell entries of one field holding `value` (`nil` when absent).
    static func fieldKeys(_ value: FieldValue?, options: IndexOptions, zone: Int64, type: Int64, field id: Int64) -> [[UInt8]] {
        switch value {
        case .location(let l)?:
            return [cellKey(zone: zone, type: type, field: id, location: l)]
        case .locationList(let list)?:
            // Two locations of a list may share a cell.
            var cells: [[UInt8]] = []
            for l in list {
                let key = cellKey(zone: zone, type: type, field: id, location: l)
                if !cells.contains(key) { cells.append(key) }
            }
            return cells
        case let value?:
            return IndexValue.entries(of: value).map {
                valueKey(zone: zone, type: type, field: id, value: $0.keyed(for: options))
            }
        case nil:
            return options.contains(.sortable) ? [valueKey(zone: zone, type: type, field: id, value: .null)] : []
        }
    }

    /// The token entries of the searchable values of a record.
    static func tokenKeys(_ searchable: [FieldValue], zone: Int64, type: Int64) -> [[UInt8]] {
        TextTokens.tokens(of: searchable).map { token in
            var w = KeyWriter(capacity: 32)
            w.append(zone)
            w.append(type)
            w.append(Layout.tokensField)
            w.append(token)
            return w.bytes
        }
    }

    /// Whether two values of a field have the same index entries for certain. Compares
    /// strings by their bytes, as the index does: Swift's `==` finds `"é"` and `"e\u{301}"`
    /// equal, but their entries differ.
    static func sameEntries(_ a: FieldValue?, _ b: FieldValue?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (.string(let x)?, .string(let y)?): return x.utf8.elementsEqual(y.utf8)
        case (.stringList(let x)?, .stringList(let y)?):
            return x.count == y.count && zip(x, y).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
        case (.reference(let x)?, .reference(let y)?): return x.recordID.recordName.utf8.elementsEqual(y.recordID.recordName.utf8)
        case (.referenceList(let x)?, .referenceList(let y)?):
            return x.count == y.count && zip(x, y).allSatisfy { $0.recordID.recordName.utf8.elementsEqual($1.recordID.recordName.utf8) }
        case (.double(let x)?, .double(let y)?): return x.bitPattern == y.bitPattern
        case (.doubleList(let x)?, .doubleList(let y)?): return x.map(\.bitPattern) == y.map(\.bitPattern)
        case (let x?, let y?): return x.fieldType == y.fieldType && x == y
        default: return false
        }
    }

    static func valueKey(zone: Int64, type: Int64, field: Int64, value: IndexValue) -> [UInt8] {
        var w = KeyWriter(capacity: 48)
        w.append(zone)
        w.append(type)
        w.append(field)
        w.append(Layout.valueKind)
        value.append(to: &w)
        return w.bytes
    }

    static func cellKey(zone: Int64, type: Int64, field: Int64, location: Location) -> [UInt8] {
        let cell = GeoGrid.cell(location)
        var w = KeyWriter(capacity: 40)
        w.append(zone)
        w.append(type)
        w.append(field)
        w.append(Layout.cellKind)
        w.append(cell.latitude)
        w.append(cell.longitude)
        return w.bytes
    }
}

extension Engine {
    /// Brings the index entries of a record from `old` to `new` (either may be absent):
    /// deletes the entries only `old` has and adds the ones only `new` has.
    func updateIndexEntries(
        old: StoredRecord?, new: StoredRecord?, row: Int64, zone: Int64, txn: Store.WriteTransaction, names: inout NameResolver<Store>
    ) throws {
        guard let recordType = new?.recordType ?? old?.recordType, let type = try names.id(recordType) else { return }
        let indexes = try indexCatalog.indexes(of: recordType, engine: self, txn: txn.readView, names: &names)
        try updateIndexEntries(
            old: old, new: new, row: row, zone: zone, type: type, oldIndexes: indexes, newIndexes: indexes, txn: txn, names: &names)
    }

    /// The general form: the old entries are computed under `oldIndexes` and the new ones
    /// under `newIndexes` (an index definition change). `ascendingRows` says that the caller
    /// goes through records in row order, so that the row is likely the largest of the keys
    /// it is added to (as a new record's is).
    func updateIndexEntries(
        old: StoredRecord?, new: StoredRecord?, row: Int64, zone: Int64, type: Int64, oldIndexes: TypeIndexes,
        newIndexes: TypeIndexes, ascendingRows: Bool = false, txn: Store.WriteTransaction, names: inout NameResolver<Store>
    ) throws {
        if let old, let new, oldIndexes == newIndexes {
            // An update under unchanged indexes: only the fields whose value changed.
            var tokensChanged = false
            for (field, options) in newIndexes.fields where field != Record.SystemFieldKey.recordID {
                let a = old.value(forKey: field), b = new.value(forKey: field)
                guard !IndexEntries.sameEntries(a, b) else { continue }
                if options.contains(.searchable) { tokensChanged = true }
                guard !options.isDisjoint(with: [.queryable, .sortable]), let id = try names.id(field) else { continue }
                try replace(
                    IndexEntries.fieldKeys(a, options: options, zone: zone, type: type, field: id),
                    with: IndexEntries.fieldKeys(b, options: options, zone: zone, type: type, field: id), row: row, txn: txn)
            }
            if tokensChanged {
                let searchable = newIndexes.searchableFields
                try replace(
                    IndexEntries.tokenKeys(searchable.compactMap { old.value(forKey: $0) }, zone: zone, type: type),
                    with: IndexEntries.tokenKeys(searchable.compactMap { new.value(forKey: $0) }, zone: zone, type: type),
                    row: row, txn: txn)
            }
            return
        }
        let before = try old.map { try IndexEntries.keys(of: $0, zone: zone, type: type, indexes: oldIndexes) { try names.id($0) } } ?? []
        let after = try new.map { try IndexEntries.keys(of: $0, zone: zone, type: type, indexes: newIndexes) { try names.id($0) } } ?? []
        try replace(before, with: after, row: row, isNew: old == nil || ascendingRows, txn: txn)
    }

    /// Removes `row` from the keys only `before` has and adds it to the ones only `after` has.
    ///
    /// A new record's row (`isNew`) is greater than every row stored, since row ids only grow,
    /// so it is appended to its keys' values: the pages of a key that many records share then
    /// fill up instead of being split in half.
    private func replace(_ before: [[UInt8]], with after: [[UInt8]], row: Int64, isNew: Bool = false, txn: Store.WriteTransaction) throws {
        let value = bigEndianKey(row)
        for key in before where !after.contains(key) { try txn.removeValue(value, forKey: key, in: indexTable) }
        for key in after where !before.contains(key) {
            try txn.addValue(value, forKey: key, in: indexTable, appending: isNew)
        }
    }

    /// The number of index definition changes so far (0 before any): the version the
    /// ``IndexCatalog`` cache is keyed by.
    func schemaVersion(in txn: Store.ReadTransaction) throws -> Int64 {
        try txn.withValue(forKey: Layout.metaSchemaVersion, in: meta) { try readBigEndianKey($0) } ?? 0
    }
}
