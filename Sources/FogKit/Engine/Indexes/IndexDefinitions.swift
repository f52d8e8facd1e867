import FogStorage
import Synchronization

extension IndexStore {
    /// The system fields that take indexes, and the options each allows.
    static var indexableSystemFields: [String: IndexOptions] {
        [
            Record.SystemFieldKey.recordID: .queryable,
            Record.SystemFieldKey.creationDate: [.queryable, .sortable],
            Record.SystemFieldKey.modificationDate: [.queryable, .sortable],
            Record.SystemFieldKey.creatorUserRecordID: .queryable,
            Record.SystemFieldKey.lastModifiedUserRecordID: .queryable,
            Record.SystemFieldKey.parent: .queryable,
        ]
    }

    /// Sets the index options of fields of a record type and returns once their entries are
    /// right for the records already stored.
    ///
    /// A field that had no index (or one still being built) is marked building (`("b", type, field)` in `schema`, with
    /// the last row done) in the transaction that writes its definition, and its entries are
    /// then added in chunks of `IndexBuildTuning.chunkSize` records, one write transaction each (see
    /// ``buildIndexes(ofRecordType:)``). Removing an index or changing the options of an
    /// existing one rewrites the entries in that first transaction, as before. The call also
    /// resumes any build of the type left unfinished by an earlier process.
    func setIndexes(_ requested: [String: IndexOptions], recordType: String) async throws {
        try Validation.recordType(recordType)
        // `recordName` is CloudKit's schema name for the record ID.
        var normalized: [String: IndexOptions] = [:]
        for (field, options) in requested {
            normalized[field == QueryAnalysis.recordNameField ? Record.SystemFieldKey.recordID : field, default: []].formUnion(options)
        }
        let changes = normalized
        for (field, options) in changes {
            if let allowed = Self.indexableSystemFields[field] {
                guard allowed.isSuperset(of: options) else {
                    throw FogError(
                        .invalidArguments,
                        message: "system field \(field) of \(recordType) can be \(allowed), not \(options.subtracting(allowed))")
                }
            } else if PredicateKey.referenceSystemKeys.contains(field) {
                throw FogError(.invalidArguments, message: "system field \(field) cannot be indexed")
            } else {
                try Validation.fieldKey(field)
            }
        }
        let building = try await write { [self] txn, names in
            let typeID = try names.intern(recordType)
            let old = try definitions(of: recordType, txn: txn.readView, names: &names.resolver)
            var new = old
            // The fields built in chunks after this transaction: those that had no index or
            // one still being built.
            var added: Set<String> = []
            for field in changes.keys.sorted() {
                let options = changes[field]!
                let fieldID = try names.intern(field)
                if let type = try names.fieldType(recordType: recordType, field: field) {
                    try Self.check(options, for: type, field: field, recordType: recordType)
                }
                guard options != old.options(field) else { continue }
                let buildKey = Layout.indexBuildKey(type: typeID, field: fieldID)
                if options.isEmpty {
                    new.fields[field] = nil
                    new.building.remove(field)
                    try txn.delete(Layout.indexDefinitionKey(type: typeID, field: fieldID), in: core.schema)
                    try txn.delete(buildKey, in: core.schema)
                } else {
                    new.fields[field] = options
                    try txn.put([options.rawValue], forKey: Layout.indexDefinitionKey(type: typeID, field: fieldID), in: core.schema)
                    if old.fields[field] == nil || old.building.contains(field) {
                        // A building index whose options change is built again: its partial
                        // entries are removed below, as those of a removed index.
                        added.insert(field)
                        new.building.insert(field)
                        try txn.put(bigEndianKey(0), forKey: buildKey, in: core.schema)
                    } else {
                        // Rewritten below for every record: complete when this commits.
                        new.building.remove(field)
                        try txn.delete(buildKey, in: core.schema)
                    }
                }
            }
            guard new != old else { return !old.building.isEmpty }
            _ = try nextCounter(Layout.metaSchemaVersion, in: txn)
            // Removed and changed indexes: rewrite the entries of the records already stored,
            // in row order. The added ones are left to the chunked build.
            var rewritten = new
            for field in added { rewritten.fields[field] = nil }
            rewritten.building = []
            var before = old
            before.building = []
            guard rewritten != before else { return !new.building.isEmpty }
            var found: [(row: Int64, record: StoredRecord)] = []
            var resolver = names.resolver
            try records.scanRecords(zone: nil, type: typeID, txn: txn.readView) { row, value in
                found.append((row, try RecordCodec.decode(value, names: &resolver)))
                return true
            }
            for (row, record) in found {
                try updateIndexEntries(
                    old: record, new: record, row: row, zone: record.zone, type: typeID, oldIndexes: before, newIndexes: rewritten,
                    ascendingRows: true, txn: txn, names: &names.resolver)
            }
            return !new.building.isEmpty
        }
        if building { try await buildIndexes(ofRecordType: recordType) }
    }

    /// Completes the builds of a record type's indexes that are marked building, one chunk
    /// of at most `IndexBuildTuning.chunkSize` records of the type per write transaction;
    /// returns when none is left (or when the test hook `stopAfterChunks` says to stop).
    ///
    /// Each chunk reads the progress of the type's building fields, adds the entries of
    /// those fields for the next records after the smallest progress (a record at or before
    /// a field's progress is skipped for that field), and records the last row it read as
    /// every building field's progress, in the same transaction. Adding an entry that is
    /// there already changes nothing: a save during the build writes the entries of every
    /// declared index, building or not, so a record saved or updated before the builder
    /// reaches it already has some. When a chunk reaches the last record the fields become
    /// ready (their progress entries are deleted and `schemaVersion` is incremented).
    func buildIndexes(ofRecordType recordType: String) async throws {
        var chunks = 0
        while true {
            if let stop = buildTuning.withLock({ $0.stopAfterChunks }), chunks >= stop { return }
            let chunkSize = buildTuning.withLock { $0.chunkSize }
            let done = try await write { [self] txn, names in
                try buildChunk(recordType: recordType, chunkSize: chunkSize, txn: txn, names: &names)
            }
            chunks += 1
            buildTuning.withLock { $0.chunksBuilt += 1 }
            if done { return }
        }
    }

    /// Completes every build left unfinished, of every record type.
    func buildAllIndexes() async throws {
        let types = try read { txn, names in
            try allDefinitions(txn: txn, names: &names).filter { !$0.value.building.isEmpty }.keys.sorted()
        }
        for type in types { try await buildIndexes(ofRecordType: type) }
    }

    /// One chunk of a build; returns whether nothing is left to build for the type.
    private func buildChunk(
        recordType: String, chunkSize: Int, txn: Store.WriteTransaction, names: inout NameWriter<Store>
    ) throws
        -> Bool
    {
        guard let typeID = try names.resolver.id(recordType) else { return true }
        let indexes = try definitions(of: recordType, txn: txn.readView, names: &names.resolver)
        var progress: [(field: String, id: Int64, options: IndexOptions, done: Int64)] = []
        for field in indexes.building.sorted() {
            guard let id = try names.resolver.id(field),
                let done = try txn.withValue(
                    forKey: Layout.indexBuildKey(type: typeID, field: id), in: core.schema, { try readBigEndianKey($0) })
            else { continue }
            progress.append((field, id, indexes.options(field), done))
        }
        guard let start = progress.map(\.done).min() else { return true }
        // The records of the type after `start`, at most `chunkSize` of them, reading at most
        // 16 times as many rows of other types.
        var found: [(row: Int64, record: StoredRecord)] = []
        var lastRow = start
        var read = 0
        var exhausted = true
        var resolver = names.resolver
        try txn.readView.scan(records.table, range: ScanRange(lower: bigEndianKey(start), lowerInclusive: false, upper: nil)) {
            key, value in
            lastRow = try readBigEndianKey(key)
            read += 1
            if try RecordCodec.typeAndZone(value).type == typeID {
                found.append((lastRow, try RecordCodec.decode(value, names: &resolver)))
            }
            if found.count >= chunkSize || read >= chunkSize * 16 {
                exhausted = false
                return false
            }
            return true
        }
        for (row, record) in found {
            var searchable: [FieldValue] = []
            for field in progress where field.done < row {
                let value = record.value(forKey: field.field)
                if field.options.contains(.searchable), let value { searchable.append(value) }
                guard field.field != Record.SystemFieldKey.recordID, !field.options.isDisjoint(with: [.queryable, .sortable]) else {
                    continue
                }
                let keys = IndexEntries.fieldKeys(value, options: field.options, zone: record.zone, type: typeID, field: field.id)
                try addEntries(keys, row: row, txn: txn)
            }
            try addEntries(IndexEntries.tokenKeys(searchable, zone: record.zone, type: typeID), row: row, txn: txn)
        }
        if exhausted {
            for field in progress { try txn.delete(Layout.indexBuildKey(type: typeID, field: field.id), in: core.schema) }
            _ = try nextCounter(Layout.metaSchemaVersion, in: txn)
            return true
        }
        for field in progress where field.done < lastRow {
            try txn.put(bigEndianKey(lastRow), forKey: Layout.indexBuildKey(type: typeID, field: field.id), in: core.schema)
        }
        return false
    }

    /// Throws when `options` do not suit a field of `type`.
    static func check(_ options: IndexOptions, for type: FieldType, field: String, recordType: String) throws(FogError) {
        guard !options.isEmpty else { return }
        if type == .asset || type == .assetList {
            throw FogError(.invalidArguments, message: "field \(field) of \(recordType) holds assets, which cannot be indexed")
        }
        if options.contains(.searchable), type != .string, type != .stringList {
            throw FogError(
                .invalidArguments, message: "field \(field) of \(recordType) holds \(type.name) values; only strings can be searchable")
        }
    }

    /// The declared indexes of a record type.
    func indexes(ofRecordType recordType: String) throws -> [String: IndexOptions] {
        try read { txn, names in try definitions(of: recordType, txn: txn, names: &names).fields }
    }

    /// The state of each declared index of a record type: ready, or building with the last
    /// row done.
    func indexStates(ofRecordType recordType: String) throws -> [String: IndexState] {
        try read { txn, names in
            let indexes = try definitions(of: recordType, txn: txn, names: &names)
            let progress = try buildProgress(of: recordType, indexes: indexes, txn: txn, names: &names)
            var states: [String: IndexState] = [:]
            for field in indexes.fields.keys { states[field] = progress[field].map { .building(lastRowDone: $0) } ?? .ready }
            return states
        }
    }

    /// The last row done of each building index of a record type.
    func buildProgress(
        of recordType: String, indexes: TypeIndexes, txn: Store.ReadTransaction, names: inout NameResolver<Store>
    ) throws
        -> [String: Int64]
    {
        guard !indexes.building.isEmpty, let type = try names.id(recordType) else { return [:] }
        var progress: [String: Int64] = [:]
        for field in indexes.building {
            guard let id = try names.id(field) else { continue }
            progress[field] = try txn.withValue(forKey: Layout.indexBuildKey(type: type, field: id), in: core.schema) {
                try readBigEndianKey($0)
            }
        }
        return progress
    }
}
