import FogStorage
import Foundation

extension Maintenance {
    /// Brings a store of an older format version up to ``Layout/formatVersion``, in one
    /// write transaction, so that a crash leaves either the old or the new version. The
    /// transaction runs alone (not grouped with other writes), because it may replace
    /// the `indexes` table.
    ///
    /// Version 1 → 2: the `changes` log gains an entry per record, at its last change, and
    /// `dbchanges` one per zone, at its creation (version 1 kept both empty).
    ///
    /// Version 3 → 4: the new `assets` table gets the reference count of every stored asset
    /// name, from the records. Files stored before version 4 keep their UUID names, which
    /// records and counts go on using; new copies are named by their content.
    ///
    /// Version 4 → 5: the schema catalog gains its record type entries (`("t", type)`), one
    /// for every type that has records or a field type, with CloudKit's default grants.
    ///
    /// Version 5 → 6: the new `subscriptions` and `notifications` tables start empty.
    ///
    /// Version 6 → 7: nothing is rewritten. Version 7's zone logs may hold stale entries
    /// (``LogCompaction``), which version 6 would list as changes or refuse; a version 6
    /// log has none, and no compaction state until a request leaves one.
    ///
    /// Version 2 → 3: `indexes` keys lose their trailing row id, which becomes the value, as
    /// one of the key's sorted set of values: the table is replaced with an empty one of
    /// ``Layout/indexTableLayout`` (a store keeps the layout a table was created with, so the
    /// old table must be replaced) and refilled from the records. Version 1 had no index
    /// definitions, so its `indexes` is empty, but it is recreated the same way.
    func migrate(from version: Int64) throws {
        try writeAndWait(alone: true) { [self] txn, names in
            let current = try txn.withValue(forKey: Layout.metaFormat, in: meta) { try readBigEndianKey($0) } ?? version
            guard current < Layout.formatVersion else { return }
            if current < 2 { try backfillChangeLogs(txn: txn, names: &names) }
            if current < 3 { try rebuildIndexTable(txn: txn, names: &names) }
            if current < 4 { try recordStore.assets.recount(records: records, txn: txn) }
            if current < 5 { try catalogRecordTypes(txn: txn, names: &names) }
            // Version 5 → 6: `subscriptions` and `notifications` were created empty when the
            // store was opened; there is nothing to fill. Version 6 → 7: nothing to rewrite.
            try txn.put(bigEndianKey(Layout.formatVersion), forKey: Layout.metaFormat, in: meta)
        }
    }

    /// Version 4 → 5: a `"t"` entry, with default grants, for every record type of a record
    /// or of a field type entry.
    private func catalogRecordTypes(txn: Store.WriteTransaction, names: inout NameWriter<Store>) throws {
        var types: Set<Int64> = []
        try txn.scan(records) { _, value in
            types.insert(try RecordCodec.typeAndZone(value).type)
            return true
        }
        try txn.scan(schema, range: .prefix(Layout.fieldTypePrefix)) { key, _ in
            var reader = KeyReader(key)
            _ = try reader.readString()
            types.insert(try reader.readInt64())
            return true
        }
        for type in types.sorted() {
            let name = try names.resolver.name(type)
            // Share records are the system's, outside the catalog.
            guard name != Record.SystemType.share else { continue }
            _ = try catalog.addRecordTypeIfMissing(name, txn: txn, names: &names)
        }
    }

    /// Version 1 → 2: a log entry per record and an event per zone.
    ///
    /// Written as the records and zones are read, one at a time: nothing is gathered, so
    /// memory does not grow with the store (the transaction's own dirty pages aside).
    private func backfillChangeLogs(txn: Store.WriteTransaction, names: inout NameWriter<Store>) throws {
        var resolver = names.resolver
        try txn.scan(records) { key, value in
            let row = try readBigEndianKey(key)
            let record = try RecordCodec.decode(value, names: &resolver, desiredKeys: [])
            try changeLog.logSave(
                zone: record.zone, row: row, name: record.recordName, previousSequence: nil, sequence: record.changeSequence, txn: txn)
            return true
        }
        try txn.scan(zones) { key, value in
            var reader = KeyReader(key)
            let address = ZoneAddress(scope: Int(try reader.readInt64()), owner: try reader.readString(), zoneName: try reader.readString())
            let info = try ZoneInfo.decode(value)
            try changeLog.logZone(.changed, address: address, zone: info.id, sequence: info.createdSequence, txn: txn)
            // Written now, not held until the commit: nothing gathers.
            try txn.runWritesBeforeCommit()
            return true
        }
        names.resolver = resolver
    }

    /// The most index entries the rebuild holds in memory at once.
    static var rebuildChunkSize: Int { 16_384 }

    /// Version 2 → 3: `indexes` emptied with the layout of version 3 and filled again with
    /// every entry the records and the index definitions call for.
    ///
    /// The entries are appended in (key, row) order, which fills the table's pages, after an
    /// external sort in bounded memory (``SortedRuns``): the records are read in row order,
    /// their entries gathered in chunks of at most ``rebuildChunkSize``, each chunk sorted
    /// and written to a scratch file in the store's directory, and the files merged. A
    /// store whose entries fit in one chunk is sorted in memory, with no file.
    func rebuildIndexTable(txn: Store.WriteTransaction, names: inout NameWriter<Store>) throws {
        if try txn.layout(of: indexTable) != Layout.indexTableLayout {
            try txn.replaceWithEmpty(indexTable)
        } else {
            try txn.clear(indexTable)
        }
        var resolver = names.resolver
        let catalog = try indexStore.allDefinitions(txn: txn.readView, names: &resolver)
        guard !catalog.isEmpty else {
            names.resolver = resolver
            return
        }
        SortedRuns.removeLeftovers(in: directory)
        let sorter = SortedRuns(directory: directory, chunkSize: Self.rebuildChunkSize)
        try txn.scan(records) { key, value in
            let row = try readBigEndianKey(key)
            let record = try RecordCodec.decode(value, names: &resolver)
            guard let indexes = catalog[record.recordType], let type = try resolver.id(record.recordType) else { return true }
            for entry in try IndexEntries.keys(
                of: record, zone: record.zone, type: type, indexes: indexes, fieldID: { try resolver.id($0) })
            {
                try sorter.append(entry, row: row)
            }
            return true
        }
        try sorter.merge { key, row in try txn.appendValue(bigEndianKey(row), forKey: key, in: indexTable) }
        names.resolver = resolver
    }

    /// Throws unless `indexes` has the layout of the current format. It has it once the
    /// store is migrated, unless another process migrated it while this one was opening it:
    /// a store may then keep this process's view of the layout from before the migration.
    func checkIndexTableLayout() throws {
        let layout = try store.read { txn in try txn.layout(of: indexTable) }
        guard layout == Layout.indexTableLayout else {
            throw FogError(
                .internalError,
                message: "the indexes table of the store has the layout \(layout), not \(Layout.indexTableLayout); "
                    + "if another process migrated the store while this one opened it, open it again")
        }
    }
}

extension Maintenance {
    /// Copies the store to `destination` and gives the copy a new incarnation.
    func backup(to destination: URL) throws {
        if Store.storeExists(at: destination) {
            throw FogError(.invalidArguments, message: "\(destination.path) already holds a store")
        }
        // Held while the snapshot is taken and its files copied: no collection deletes a file
        // that the snapshot's records reference in between.
        let lock = AssetLock.shared(in: assetDirectory)
        defer { lock?.release() }
        try store.backup(to: destination)
        let assets = destination.appendingPathComponent("assets", isDirectory: true)
        try FileManager.default.createDirectory(at: assets, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: assetDirectory.path) where AssetNames.isStoredName(name) {
            try FileManager.default.copyItem(at: assetDirectory.appendingPathComponent(name), to: assets.appendingPathComponent(name))
        }
        let copy = try Store.open(at: destination, configuration: Layout.configuration(createsMissingTables: false))
        defer { copy.close() }
        let incarnation = Layout.newIncarnation()
        let meta = copy.table(named: Layout.meta)
        try copy.writeAndWait { txn in try txn.put(incarnation, forKey: Layout.metaIncarnation, in: meta) }
    }
}
