import FogStorage
import Foundation

extension StoredRecord {
    /// The value of a user field or of a queryable system field, as predicates see it:
    /// record IDs and user record IDs as references, dates as dates; `nil` when absent.
    func value(forKey key: String) -> FieldValue? {
        // Most keys are user fields': a key that is no reserved one (found among those of its
        // length) is looked up at once, instead of being compared with seven system keys in
        // turn (the long ones by the runtime's slow string comparison).
        guard Validation.isReservedFieldKey(key) else { return values[key] }
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
        // A long token is cut as a long value is (`IndexValue.append(to:)`); two long tokens
        // with one prefix share a key.
        var keys: [[UInt8]] = []
        var truncated: Set<[UInt8]> = []
        for token in TextTokens.tokens(of: searchable).tokens {
            var w = KeyWriter(capacity: 32)
            w.append(zone)
            w.append(type)
            w.append(Layout.tokensField)
            let value = IndexValue.string(token)
            value.append(to: &w)
            if IndexValue.isLong(token.utf8), !truncated.insert(w.bytes).inserted { continue }
            keys.append(w.bytes)
        }
        return keys
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
