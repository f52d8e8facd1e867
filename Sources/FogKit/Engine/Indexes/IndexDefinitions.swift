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
    /// Every change runs in bounded transactions. The first one writes the definitions:
    /// a removed field loses its definition at once (the planner stops using it); a new or
    /// changed one (adding or dropping options, also of a ready index or of one still being
    /// built) is marked building (`("b", type, field)` in `schema`, progress 0). Stale entries
    /// are marked for dropping (`("d", type, field)`): those of a field whose queryable or
    /// sortable options change or that is removed (their keys depend on those options), and,
    /// when a field stops being searchable, the type's text tokens (shared by its searchable
    /// fields, which are then all built again). Then ``buildIndexes(ofRecordType:)`` deletes
    /// the dropped entries by key prefix, zone by zone, at most about `IndexBuildTuning.chunkSize`
    /// (key, row) pairs per write transaction, and builds the building fields in chunks of
    /// records. The call also resumes any drop or build of the type left unfinished by an
    /// earlier process.
    func setIndexes(_ requested: [String: IndexOptions], recordType: String) async throws {
        let changes = try Self.normalized(requested, recordType: recordType)
        let pending = try await write { [self] txn, names in
            try defineIndexes(changes, recordType: recordType, txn: txn, names: &names)
        }
        if pending { try await buildIndexes(ofRecordType: recordType) }
    }

    /// Checks the names and options of an index change, and spells `recordName` as the
    /// record ID's key.
    static func normalized(_ requested: [String: IndexOptions], recordType: String) throws -> [String: IndexOptions] {
        try Validation.recordType(recordType)
        // `recordName` is CloudKit's schema name for the record ID.
        var normalized: [String: IndexOptions] = [:]
        for (field, options) in requested {
            normalized[field == QueryAnalysis.recordNameField ? Record.SystemFieldKey.recordID : field, default: []].formUnion(options)
        }
        for (field, options) in normalized {
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
        return normalized
    }

    /// Writes the definitions of an index change (already ``normalized(_:recordType:)``) in
    /// `txn`, with the drop and build markers it needs; returns whether drops or builds of the
    /// type are pending, for ``buildIndexes(ofRecordType:)`` to complete after the commit.
    func defineIndexes(
        _ changes: [String: IndexOptions], recordType: String, txn: Store.WriteTransaction, names: inout NameWriter<Store>
    ) throws -> Bool {
        let typeID = try names.intern(recordType)
        let old = try definitions(of: recordType, txn: txn.readView, names: &names.resolver)
        var new = old
        // The type's text tokens are shared by its searchable fields: when a field stops
        // being searchable they are all dropped and every searchable field is built again.
        var dropTokens = false
        for field in changes.keys.sorted() {
            let options = changes[field]!
            let fieldID = try names.intern(field)
            if let type = try names.fieldType(recordType: recordType, field: field) {
                try Self.check(options, for: type, field: field, recordType: recordType)
            }
            let before = old.options(field)
            guard options != before else { continue }
            let buildKey = Layout.indexBuildKey(type: typeID, field: fieldID)
            let entryOptions: IndexOptions = [.queryable, .sortable]
            // The value and cell entries of the field change with its queryable and sortable
            // options (`IndexEntries.fieldKeys`): the old ones are dropped, in chunks.
            if !before.isDisjoint(with: entryOptions),
                before.intersection(entryOptions) != options.intersection(entryOptions)
                    || old.building.contains(field)
            {
                try txn.put([], forKey: Layout.indexDropKey(type: typeID, field: fieldID), in: core.schema)
            }
            if before.contains(.searchable), !options.contains(.searchable) { dropTokens = true }
            if options.isEmpty {
                new.fields[field] = nil
                new.building.remove(field)
                try txn.delete(Layout.indexDefinitionKey(type: typeID, field: fieldID), in: core.schema)
                try txn.delete(buildKey, in: core.schema)
            } else {
                // A new or changed index (also one still being built) is built from the
                // first record, after the drops of the type; the entries it keeps are
                // added again, which changes nothing.
                new.fields[field] = options
                new.building.insert(field)
                try txn.put([options.rawValue], forKey: Layout.indexDefinitionKey(type: typeID, field: fieldID), in: core.schema)
                try txn.put(bigEndianKey(0), forKey: buildKey, in: core.schema)
            }
        }
        if dropTokens {
            try txn.put([], forKey: Layout.indexDropKey(type: typeID, field: Layout.tokensField), in: core.schema)
            for field in new.searchableFields {
                new.building.insert(field)
                try txn.put(
                    bigEndianKey(0), forKey: Layout.indexBuildKey(type: typeID, field: try names.intern(field)), in: core.schema)
            }
        }
        if new != old { _ = try nextCounter(Layout.metaSchemaVersion, in: txn) }
        let dropping = try !dropMarkers(type: typeID, txn: txn.readView).isEmpty
        return !new.building.isEmpty || dropping
    }

    /// Completes the drops of a record type's stale index entries, then the builds of its
    /// indexes that are marked building, one chunk (at most about `IndexBuildTuning.chunkSize`
    /// entries deleted, or records of the type built) per write transaction;
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

    /// Completes every drop and build left unfinished, of every record type.
    func buildAllIndexes() async throws {
        let types = try read { txn, names in
            var types = Set(try allDefinitions(txn: txn, names: &names).filter { !$0.value.building.isEmpty }.keys)
            for (type, _) in try dropMarkers(type: nil, txn: txn) { types.insert(try names.name(type)) }
            return types.sorted()
        }
        for type in types { try await buildIndexes(ofRecordType: type) }
    }

    /// One chunk of a drop or, when no drop is left, of a build; returns whether nothing is
    /// left to drop or build for the type. A build never starts before the drops: a field
    /// both dropped and built (its options changed) gets its new entries after the old ones
    /// are gone, and the entries saves write meanwhile are added again by the build.
    private func buildChunk(
        recordType: String, chunkSize: Int, txn: Store.WriteTransaction, names: inout NameWriter<Store>
    ) throws
        -> Bool
    {
        guard let typeID = try names.resolver.id(recordType) else { return true }
        let drops = try dropMarkers(type: typeID, txn: txn.readView)
        if !drops.isEmpty {
            try dropChunk(type: typeID, fields: drops.map(\.field), chunkSize: chunkSize, txn: txn)
            return false
        }
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

    /// The drop markers (type id, field id) of one record type, or of all with `type` nil.
    func dropMarkers(type: Int64?, txn: Store.ReadTransaction) throws -> [(type: Int64, field: Int64)] {
        var markers: [(type: Int64, field: Int64)] = []
        try txn.scan(core.schema, range: .prefix(Layout.indexDropPrefix(type: type))) { key, _ in
            var reader = KeyReader(Array(key))
            _ = try reader.readString()
            markers.append((try reader.readInt64(), try reader.readInt64()))
            return true
        }
        return markers
    }

    /// One chunk of the drops of a type: deletes at most about `chunkSize` entries (key, row)
    /// under the dropped prefixes, zone by zone, and the drop markers once none is left.
    private func dropChunk(type: Int64, fields: [Int64], chunkSize: Int, txn: Store.WriteTransaction) throws {
        var zones: [Int64] = []
        try txn.readView.scan(zoneIDTable) { key, _ in
            zones.append(try readBigEndianKey(key))
            return true
        }
        var keys: [[UInt8]] = []
        var pairs = 0
        var exhausted = true
        search: for field in fields {
            for zone in zones {
                let prefix = Layout.indexFieldPrefix(zone: zone, type: type, field: field)
                var last: [UInt8]?
                try txn.readView.scan(indexTable, range: .prefix(prefix)) { key, _ in
                    if last.map({ !$0.elementsEqual(key) }) ?? true {
                        if pairs >= chunkSize {
                            exhausted = false
                            return false
                        }
                        last = Array(key)
                        keys.append(Array(key))
                    }
                    pairs += 1
                    return true
                }
                if !exhausted { break search }
            }
        }
        for key in keys { try txn.delete(key, in: indexTable) }
        if exhausted {
            for field in fields { try txn.delete(Layout.indexDropKey(type: type, field: field), in: core.schema) }
        }
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
