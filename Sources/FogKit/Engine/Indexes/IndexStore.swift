import FogStorage
import Foundation
import Synchronization

/// How an index build runs: internal knobs for tests.
struct IndexBuildTuning: Sendable {
    /// The most records of the type one build transaction adds entries for.
    var chunkSize = 1_000
    /// Test hook: a build call returns after this many chunks, leaving the build
    /// unfinished, as a crash or a close between two chunks would.
    var stopAfterChunks: Int?
    /// The number of chunk transactions committed so far (for tests).
    var chunksBuilt = 0
}

/// The indexes: their definitions (in `schema`, cached by the ``IndexCatalog``), their
/// entries (the `indexes` table, a multi-value table: each key holds the sorted rows of the
/// records it indexes), and the advice gathered from queries that lacked one.
final class IndexStore<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    let records: RecordStore<Store>
    /// The index definitions of the snapshot a transaction sees, cached.
    let catalog = IndexCatalog()
    /// The queries that ran without an index they needed (development only).
    let advisor: IndexAdvisor
    /// Index key → the sorted rows of the records it indexes.
    let indexTable: Table
    /// Zone id → zone name, to find the entries of a dropped index zone by zone.
    let zoneIDTable: Table
    /// The chunk size of index builds and the test hook that interrupts them.
    let buildTuning = Mutex(IndexBuildTuning())

    init(core: EngineCore<Store>, records: RecordStore<Store>, advisor: IndexAdvisor) {
        self.core = core
        self.records = records
        self.advisor = advisor
        indexTable = core.store.table(named: Layout.indexes)
        zoneIDTable = core.store.table(named: Layout.zoneIDs)
        // Long values are cut so that every index key fits the store's limit.
        precondition(
            Store.maximumKeySize >= IndexValue.largestIndexKey,
            "the store's keys hold \(Store.maximumKeySize) bytes; index keys need \(IndexValue.largestIndexKey)")
    }

    /// The declared indexes of one record type, as `txn` sees them.
    func definitions(of recordType: String, txn: Store.ReadTransaction, names: inout NameResolver<Store>) throws -> TypeIndexes {
        try catalog.indexes(of: recordType, core: core, txn: txn, names: &names)
    }

    /// The declared indexes of every record type, as `txn` sees them.
    func allDefinitions(txn: Store.ReadTransaction, names: inout NameResolver<Store>) throws -> [String: TypeIndexes] {
        try catalog.indexes(core: core, txn: txn, names: &names)
    }

    /// Removes the index entries of a zone's records (their keys start with the zone id).
    func deleteAll(zone: Int64, in txn: Store.WriteTransaction) throws {
        try txn.deleteAll(in: indexTable, range: .prefix(Layout.zoneRowsPrefix(zone: zone)))
    }

    /// Brings the index entries of a record from `old` to `new` (either may be absent):
    /// deletes the entries only `old` has and adds the ones only `new` has.
    func updateIndexEntries(
        old: StoredRecord?, new: StoredRecord?, row: Int64, zone: Int64, txn: Store.WriteTransaction, names: inout NameResolver<Store>
    ) throws {
        guard let recordType = new?.recordType ?? old?.recordType, let type = try names.id(recordType) else { return }
        let indexes = try catalog.indexes(of: recordType, core: core, txn: txn.readView, names: &names)
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

    /// Moves `row` from the entries of field `id` holding `old` to those holding `new` (an
    /// update that changed the field; either value may be absent).
    func replaceEntries(
        of id: Int64, options: IndexOptions, old: FieldValue?, new: FieldValue?, row: Int64, zone: Int64, type: Int64,
        txn: Store.WriteTransaction
    ) throws {
        try replace(
            IndexEntries.fieldKeys(old, options: options, zone: zone, type: type, field: id),
            with: IndexEntries.fieldKeys(new, options: options, zone: zone, type: type, field: id), row: row, txn: txn)
    }

    /// Moves `row` from the token entries of the searchable values `old` to those of `new`.
    func replaceTokens(old: [FieldValue], new: [FieldValue], row: Int64, zone: Int64, type: Int64, txn: Store.WriteTransaction) throws {
        try replace(
            IndexEntries.tokenKeys(old, zone: zone, type: type), with: IndexEntries.tokenKeys(new, zone: zone, type: type), row: row,
            txn: txn)
    }

    /// Adds `row` to `keys` (a key that holds it already is left as it is).
    func addEntries(_ keys: [[UInt8]], row: Int64, txn: Store.WriteTransaction) throws {
        let value = bigEndianKey(row)
        for key in keys { try txn.addValue(value, forKey: key, in: indexTable, appending: true) }
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
}
