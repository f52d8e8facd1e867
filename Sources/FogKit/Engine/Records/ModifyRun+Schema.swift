import FogStorage

// The schema rules of a modify request: production's known types and fields, development's
// just-in-time types, fields and default indexes (`Engine/Schema/SchemaCatalog.swift`).
extension ModifyRun {
    /// Throws `unknownItem` unless record type `recordType` is in the catalog (production).
    mutating func checkKnownType(_ recordType: String) throws(FogError) {
        guard !knownTypes.contains(recordType) else { return }
        let known = try fogTry {
            try names.resolver.id(recordType).map { try writer.catalog.recordTypeExists($0, txn: txn.readView) } ?? false
        }
        guard known else { throw FogError(.unknownItem, message: "Did not find record type: \(recordType)") }
        knownTypes.append(recordType)
    }

    /// The catalog's declaration of a field, or `nil` when it has none.
    mutating func declaration(recordType: String, field: String) throws -> FieldDeclaration? {
        guard let type = try names.resolver.id(recordType), let field = try names.resolver.id(field) else { return nil }
        return try writer.catalog.declaration(type: type, field: field, txn: txn.readView)
    }

    /// Development's just-in-time schema: the record type (with CloudKit's default grants)
    /// and the default indexes of the fields this save creates. A field's index is ready at
    /// once when its type is new in this request and no record of it was saved before;
    /// otherwise it is marked building and built after the commit.
    mutating func createJustInTime(_ recordType: String, newFields: [(String, FieldType)]) throws {
        if !knownTypes.contains(recordType) {
            if try writer.catalog.addRecordTypeIfMissing(recordType, txn: txn, names: &names) { freshTypes.insert(recordType) }
            knownTypes.append(recordType)
        }
        guard !newFields.isEmpty else { return }
        let typeID = try names.intern(recordType)
        var changes: [String: IndexOptions] = [:]
        // Encrypted fields are never indexed (reference §3.7).
        for (key, type) in newFields where !Record.isEncryptedKey(key) {
            let options = SchemaCatalog<Store>.defaultIndexes(for: type)
            guard !options.isEmpty else { continue }
            let fieldID = try names.intern(key)
            // A field that the schema declares, or that has indexes declared before its first
            // save, keeps what was declared.
            if let declared = try writer.catalog.declaration(type: typeID, field: fieldID, txn: txn.readView), !declared.isRetired {
                continue
            }
            if try txn.readView.withValue(
                forKey: Layout.indexDefinitionKey(type: typeID, field: fieldID), in: writer.core.schema, { _ in true }) != nil
            {
                continue
            }
            changes[key] = options
        }
        guard !changes.isEmpty else { return }
        indexDefinitions.removeAll { $0.recordType == recordType }
        indexedFields[recordType] = nil
        if freshTypes.contains(recordType), !appliedTypes.contains(recordType) {
            for (key, options) in changes {
                try txn.put(
                    [options.rawValue], forKey: Layout.indexDefinitionKey(type: typeID, field: try names.intern(key)),
                    in: writer.core.schema)
            }
            _ = try writer.nextCounter(Layout.metaSchemaVersion, in: txn)
        } else if try writer.indexes.defineIndexes(changes, recordType: recordType, txn: txn, names: &names) {
            pendingBuilds.insert(recordType)
        }
    }
}
