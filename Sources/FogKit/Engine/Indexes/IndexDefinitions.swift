import FogStorage

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

    /// Sets the index options of fields of a record type, building or deleting their
    /// entries for the records already stored, in one transaction.
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
        try await write { [self] txn, names in
            let typeID = try names.intern(recordType)
            let old = try definitions(of: recordType, txn: txn.readView, names: &names.resolver)
            var new = old
            for field in changes.keys.sorted() {
                let options = changes[field]!
                let fieldID = try names.intern(field)
                if let type = try names.fieldType(recordType: recordType, field: field) {
                    try Self.check(options, for: type, field: field, recordType: recordType)
                }
                if options.isEmpty {
                    new.fields[field] = nil
                    try txn.delete(Layout.indexDefinitionKey(type: typeID, field: fieldID), in: core.schema)
                } else {
                    new.fields[field] = options
                    try txn.put([options.rawValue], forKey: Layout.indexDefinitionKey(type: typeID, field: fieldID), in: core.schema)
                }
            }
            guard new != old else { return }
            _ = try nextCounter(Layout.metaSchemaVersion, in: txn)
            // Rebuild the entries of the records already stored, in row order.
            var found: [(row: Int64, record: StoredRecord)] = []
            var resolver = names.resolver
            try records.scanRecords(zone: nil, type: typeID, txn: txn.readView) { row, value in
                found.append((row, try RecordCodec.decode(value, names: &resolver)))
                return true
            }
            for (row, record) in found {
                try updateIndexEntries(
                    old: record, new: record, row: row, zone: record.zone, type: typeID, oldIndexes: old, newIndexes: new,
                    ascendingRows: true, txn: txn, names: &names.resolver)
            }
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
}
