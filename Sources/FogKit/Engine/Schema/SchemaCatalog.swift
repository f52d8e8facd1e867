import FogStorage
import Foundation

/// The schema catalog of one environment: record types, fields and their types, index
/// options, roles and grants, all in the `schema` table (see `Layout+Schema.swift`). It is
/// the only catalog: the query planner and the index builder read the same entries
/// (`"f"`, `"x"`) that ``schema(txn:names:)`` prints, and an import, a deployment or a
/// reset writes them with ``replace(with:txn:names:)``.
final class SchemaCatalog<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    let indexes: IndexStore<Store>

    init(core: EngineCore<Store>, indexes: IndexStore<Store>) {
        self.core = core
        self.indexes = indexes
    }

    /// What the catalog holds for one record type, as stored.
    struct StoredType: Sendable, Hashable {
        var fields: [String: FieldDeclaration] = [:]
        var indexes: [String: IndexOptions] = [:]
        var grants: [Schema.Role: Schema.Permissions] = [:]
    }

    /// What the catalog holds, as stored.
    struct Stored: Sendable, Hashable {
        var types: [String: StoredType] = [:]
        var roles: Set<Schema.Role> = []
        /// The fields an import removed, by record type (see ``FieldDeclaration/Flags/retired``).
        var retired: [String: [String: FieldDeclaration]] = [:]

        init() {}

        /// The entries that say what `schema` says. Index options are keyed as
        /// ``Container/Administrator/setIndexes(_:ofRecordType:)`` takes them.
        init(_ schema: Schema) {
            roles = schema.roles
            for (name, type) in schema.recordTypes {
                var stored = StoredType(grants: type.grants)
                for (field, declared) in type.fields { stored.fields[field] = FieldDeclaration(declared.type) }
                stored.indexes = type.indexes.filter { !$0.value.isEmpty }
                types[name] = stored
            }
        }
    }

    // MARK: - Reading

    /// The catalog's entries as `txn` sees them. The record types are those with a `"t"`
    /// entry or a field type.
    func stored(txn: Store.ReadTransaction, names: inout NameResolver<Store>) throws -> Stored {
        var result = Stored()
        var typeIDs: [Int64] = []
        try txn.scan(core.schema, range: .prefix(Layout.recordTypePrefix)) { key, value in
            // A retired type (an import removed it) is not in the schema.
            guard value.isEmpty else { return true }
            var reader = KeyReader(key)
            _ = try reader.readString()
            typeIDs.append(try reader.readInt64())
            return true
        }
        for id in typeIDs {
            let name = try names.name(id)
            guard name != Record.SystemType.share else { continue }
            result.types[name] = StoredType()
        }
        var fields: [(Int64, Int64, FieldDeclaration)] = []
        try txn.scan(core.schema, range: .prefix(Layout.fieldTypePrefix)) { key, value in
            var reader = KeyReader(key)
            _ = try reader.readString()
            fields.append((try reader.readInt64(), try reader.readInt64(), try FieldDeclaration(Array(value))))
            return true
        }
        for (type, field, declaration) in fields {
            let name = try names.name(type)
            // The system's share records (`cloudkit.share`) have field types but are not
            // part of the schema.
            guard name != Record.SystemType.share else { continue }
            // An encrypted field is kept under its stored name (``Record/encryptedKey(_:)``);
            // the schema names it by its key.
            var fieldName = try names.name(field)
            if Record.isEncryptedKey(fieldName) { fieldName = Record.plainKey(ofEncrypted: fieldName) }
            if declaration.isRetired {
                result.retired[name, default: [:]][fieldName] = declaration
            } else {
                result.types[name, default: StoredType()].fields[fieldName] = declaration
            }
        }
        for (type, indexes) in try indexes.allDefinitions(txn: txn, names: &names) {
            // An index on a type the catalog does not list (declared before any save) is kept
            // but is not part of the schema.
            guard result.types[type] != nil else { continue }
            result.types[type]?.indexes = indexes.fields
        }
        var grants: [(Int64, String, UInt8)] = []
        try txn.scan(core.schema, range: .prefix(Layout.grantPrefix(type: nil))) { key, value in
            var reader = KeyReader(key)
            _ = try reader.readString()
            guard value.count == 1 else { throw FormatError(message: "grant of \(value.count) bytes") }
            grants.append((try reader.readInt64(), try reader.readString(), value[0]))
            return true
        }
        for (type, role, permissions) in grants {
            let name = try names.name(type)
            guard name != Record.SystemType.share else { continue }
            result.types[name, default: StoredType()].grants[Schema.Role(role)] = Schema.Permissions(rawValue: permissions)
        }
        try txn.scan(core.schema, range: .prefix(Layout.rolePrefix)) { key, _ in
            var reader = KeyReader(key)
            _ = try reader.readString()
            result.roles.insert(Schema.Role(try reader.readString()))
            return true
        }
        return result
    }

    /// The schema as `txn` sees it. A field's index options are printed with the field; an
    /// index declared on a field whose type no save or import has given yet is not.
    func schema(txn: Store.ReadTransaction, names: inout NameResolver<Store>) throws -> Schema {
        Self.schema(of: try stored(txn: txn, names: &names))
    }

    /// The schema of stored catalog entries.
    static func schema(of stored: Stored) -> Schema {
        var schema = Schema(roles: stored.roles)
        for (name, type) in stored.types {
            var recordType = Schema.RecordType(grants: type.grants)
            for (field, declaration) in type.fields {
                recordType.fields[field] = Schema.Field(declaration.dataType, indexes: type.indexes[field] ?? [])
            }
            for system in Schema.SystemField.allCases {
                if let options = type.indexes[system.fieldKey] { recordType.systemFieldIndexes[system] = options }
            }
            schema.recordTypes[name] = recordType
        }
        return schema
    }

    /// Whether record type `type` is in the catalog (has a `"t"` entry).
    func recordTypeExists(_ type: Int64, txn: Store.ReadTransaction) throws -> Bool {
        try txn.withValue(forKey: Layout.recordTypeKey(type), in: core.schema) { $0.isEmpty } ?? false
    }

    /// The name the catalog and records keep field `field` under: an `ENCRYPTED` field's
    /// stored name (``Record/encryptedKey(_:)``), or the field's own.
    static func storedName(_ field: String, _ declaration: FieldDeclaration) -> String {
        declaration.flags.contains(.encrypted) ? Record.encryptedKey(field) : field
    }

    /// The declaration of field `field` of record type `type`, or `nil` when it has none.
    func declaration(type: Int64, field: Int64, txn: Store.ReadTransaction) throws -> FieldDeclaration? {
        try txn.value(forKey: Layout.fieldTypeKey(type: type, field: field), in: core.schema).map { try FieldDeclaration($0) }
    }

    // MARK: - Just in time (development)

    /// CloudKit's grants for a record type created just in time: `_creator` writes, `_icloud`
    /// creates and `_world` reads; `Users` records are not created by clients.
    static func defaultGrants(of recordType: String) -> [Schema.Role: Schema.Permissions] {
        if recordType == Record.SystemType.userRecord { return [.creator: .write, .world: .read] }
        return [.creator: .write, .authenticated: .create, .world: .read]
    }

    /// The index options a field created just in time gets, as CloudKit's development
    /// environment gives them: strings queryable, searchable and sortable; numbers and dates
    /// queryable and sortable; references and locations queryable; lists queryable (but
    /// lists of bytes or assets); bytes and assets none.
    static func defaultIndexes(for type: FieldType) -> IndexOptions {
        switch type {
        case .string: [.queryable, .searchable, .sortable]
        case .int64, .double, .timestamp: [.queryable, .sortable]
        case .reference, .location: .queryable
        case .bytes, .asset, .bytesList, .assetList: []
        case .stringList, .int64List, .doubleList, .timestampList, .locationList, .referenceList: .queryable
        }
    }

    /// Adds record type `recordType` to the catalog with CloudKit's default grants unless it is
    /// there (incrementing `meta/schemaVersion`); returns whether it was added as a type that
    /// never had records: one with no entry at all (not one an import retired), no field
    /// declarations and no index entries being dropped. Such a type's indexes are ready at
    /// once.
    func addRecordTypeIfMissing(_ recordType: String, txn: Store.WriteTransaction, names: inout NameWriter<Store>) throws -> Bool {
        let type = try names.intern(recordType)
        let entry = try txn.value(forKey: Layout.recordTypeKey(type), in: core.schema)
        if entry?.isEmpty == true { return false }
        var fresh = entry == nil
        if fresh {
            try txn.readView.scan(core.schema, range: .prefix(Layout.fieldTypePrefix(type: type))) { _, _ in
                fresh = false
                return false
            }
        }
        if fresh { fresh = try indexes.dropMarkers(type: type, txn: txn.readView).isEmpty }
        try txn.put([], forKey: Layout.recordTypeKey(type), in: core.schema)
        for (role, permissions) in Self.defaultGrants(of: recordType) {
            try txn.put([permissions.rawValue], forKey: Layout.grantKey(type: type, role: role.name), in: core.schema)
        }
        // The grants' cache (``PublicRoleCache``) must see the new type.
        _ = try nextCounter(Layout.metaSchemaVersion, in: txn)
        return fresh
    }

    // MARK: - Replacing

    /// What ``replace(with:txn:names:)`` leaves to do after its commit.
    struct ReplaceOutcome: Sendable {
        /// The record types whose index drops or builds are pending.
        var pendingBuilds: Set<String> = []
    }

    /// Checks that `schema` can be written into a catalog: names, grants to existing roles,
    /// index options the field types allow. Throws `invalidArguments` naming every problem.
    static func validate(_ schema: Schema) throws(FogError) {
        var problems: [String] = []
        for role in schema.roles.sorted() {
            if role.isBuiltIn || !isIdentifier(role.name) { problems.append("role \(role.name) is not a valid custom role name") }
        }
        for name in schema.recordTypes.keys.sorted() {
            let type = schema.recordTypes[name]!
            do { try Validation.recordType(name) } catch { problems.append(error.message) }
            for field in type.fields.keys.sorted() {
                do { try Validation.fieldKey(field) } catch { problems.append("record type \(name): \(error.message)") }
                let declared = type.fields[field]!
                let extra = declared.indexes.subtracting(declared.type.allowedIndexes)
                if !extra.isEmpty { problems.append("field \(name).\(field) of type \(declared.type) cannot be \(extra)") }
            }
            for (system, options) in type.systemFieldIndexes where !system.allowedIndexes.isSuperset(of: options) {
                problems.append("system field \(name).\(system) cannot be \(options.subtracting(system.allowedIndexes))")
            }
            for role in type.grants.keys.sorted() where !role.isBuiltIn && !schema.roles.contains(role) {
                problems.append("record type \(name) grants to role \(role.name), which the schema does not create")
            }
        }
        guard problems.isEmpty else {
            throw FogError(.invalidArguments, message: "the schema is not valid: " + problems.joined(separator: "; "))
        }
    }

    private static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 255,
            ("a"..."z").contains(first) || ("A"..."Z").contains(first)
        else { return false }
        return name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
        }
    }

    /// Makes the catalog say exactly what `target` says, in `txn`: roles, record types (and
    /// their fields, index options and grants) it lacks are removed, the others written. The
    /// `Users` type stays when `target` does not name it. With `keepingUnnamedIndexes`, indexes
    /// the schema language cannot name (on `parent` and `share`) stay as they are (an import);
    /// without, they become `target`'s too (a deployment or a reset copies a whole catalog).
    /// Index options change through ``IndexStore/defineIndexes(_:recordType:txn:names:)``, so
    /// their drops and builds run in chunks after the commit (``ReplaceOutcome/pendingBuilds``).
    /// Callers check first what the change may do (``validate(_:)`` and their own rules).
    func replace(
        with target: Stored, keepingUnnamedIndexes: Bool, txn: Store.WriteTransaction, names: inout NameWriter<Store>
    ) throws -> ReplaceOutcome {
        var outcome = ReplaceOutcome()
        let current = try stored(txn: txn.readView, names: &names.resolver)
        for role in current.roles.subtracting(target.roles) {
            try txn.delete(Layout.roleKey(role.name), in: core.schema)
            try deleteMembers(of: role, txn: txn)
        }
        for role in target.roles.subtracting(current.roles) { try txn.put([], forKey: Layout.roleKey(role.name), in: core.schema) }

        let allIndexes = try indexes.allDefinitions(txn: txn.readView, names: &names.resolver)
        var removedTypes = Set(current.types.keys).subtracting(target.types.keys)
        removedTypes.remove(Record.SystemType.userRecord)
        for name in removedTypes.sorted() {
            let type = try names.intern(name)
            // Retired, not deleted: records of it may remain (`addRecordTypeIfMissing`).
            try txn.put(Layout.retiredRecordType, forKey: Layout.recordTypeKey(type), in: core.schema)
            for (field, declaration) in current.types[name]!.fields {
                try txn.put(
                    declaration.retired.encoded,
                    forKey: Layout.fieldTypeKey(type: type, field: try names.intern(Self.storedName(field, declaration))), in: core.schema)
            }
            try deleteGrants(of: type, txn: txn)
            let declared = allIndexes[name]?.fields ?? [:]
            if !declared.isEmpty,
                try indexes.defineIndexes(declared.mapValues { _ in [] }, recordType: name, txn: txn, names: &names)
            {
                outcome.pendingBuilds.insert(name)
            }
        }
        for name in target.types.keys.sorted() {
            let wanted = target.types[name]!
            let had = current.types[name] ?? StoredType()
            let type = try names.intern(name)
            try txn.put([], forKey: Layout.recordTypeKey(type), in: core.schema)
            for (field, declaration) in had.fields where wanted.fields[field] == nil {
                try txn.put(
                    declaration.retired.encoded,
                    forKey: Layout.fieldTypeKey(type: type, field: try names.intern(Self.storedName(field, declaration))), in: core.schema)
            }
            for (field, declaration) in wanted.fields {
                guard had.fields[field] != declaration else { continue }
                try txn.put(
                    declaration.encoded,
                    forKey: Layout.fieldTypeKey(type: type, field: try names.intern(Self.storedName(field, declaration))), in: core.schema)
            }
            try deleteGrants(of: type, txn: txn)
            for (role, permissions) in wanted.grants {
                try txn.put([permissions.rawValue], forKey: Layout.grantKey(type: type, role: role.name), in: core.schema)
            }
            var changes = wanted.indexes
            for field in (allIndexes[name]?.fields ?? [:]).keys where changes[field] == nil {
                let unnamed = field == Record.SystemFieldKey.parent || field == Record.SystemFieldKey.share
                if unnamed && keepingUnnamedIndexes { continue }
                changes[field] = []
            }
            let normalized = try IndexStore<Store>.normalized(changes, recordType: name)
            if try indexes.defineIndexes(normalized, recordType: name, txn: txn, names: &names) {
                outcome.pendingBuilds.insert(name)
            }
        }
        _ = try nextCounter(Layout.metaSchemaVersion, in: txn)
        return outcome
    }

    private func deleteGrants(of type: Int64, txn: Store.WriteTransaction) throws {
        try txn.deleteAll(in: core.schema, range: .prefix(Layout.grantPrefix(type: type)))
    }

    // MARK: - Comparing

    /// What `target` has that `source` removes or changes: the record types, fields (a
    /// field's type may only go from an unpinned `NUMBER` to a pinned one) and roles of
    /// `target` that `source` lacks or declares otherwise, one line each, in name order.
    static func losses(from target: Stored, to source: Stored) -> [String] {
        var losses: [String] = []
        // `Users` is the system's: production has it as soon as a user signs in there.
        for name in target.types.keys.sorted() where name != Record.SystemType.userRecord {
            guard let replacement = source.types[name] else {
                losses.append("record type \(name) is removed")
                continue
            }
            let fields = target.types[name]!.fields
            for field in fields.keys.sorted() {
                let had = fields[field]!
                guard let now = replacement.fields[field] else {
                    losses.append("field \(name).\(field) (\(had.dataType)) is removed")
                    continue
                }
                if !had.canBecome(now) { losses.append("field \(name).\(field) changes from \(had.dataType) to \(now.dataType)") }
            }
        }
        for role in target.roles.subtracting(source.roles).sorted() { losses.append("role \(role.name) is removed") }
        return losses
    }

    /// The field type changes a schema makes to stored declarations, retired ones included
    /// (removals are not counted), one line each, in name order.
    static func typeChanges(from current: Stored, to target: Stored) -> [String] {
        var changes: [String] = []
        for name in target.types.keys.sorted() {
            let had = current.types[name]?.fields ?? [:]
            let retired = current.retired[name] ?? [:]
            let fields = target.types[name]!.fields
            for field in fields.keys.sorted() {
                guard let old = had[field] ?? retired[field] else { continue }
                let new = fields[field]!
                if !old.canBecome(new) { changes.append("field \(name).\(field) changes from \(old.dataType) to \(new.dataType)") }
            }
        }
        return changes
    }
}
