import FogStorage
import Synchronization

/// The in-memory copy of the interned names (record types, field names, user
/// record names) and of the fixed field types.
///
/// Records and keys store small integer ids instead of names. The cache holds
/// only what is committed: readers fill it from their snapshot on a miss, and
/// the writer publishes the names a transaction created after that transaction
/// commits. A miss is always resolved from the transaction at hand, so the cache
/// never needs to be right, only fast.
///
/// Names never change once interned. Field types do, but only when an administrator
/// replaces the catalog (a schema import that removes a field, a development reset): that
/// call ends with ``invalidateCatalog()``, which empties the field types and starts a new
/// generation. A reader takes the cache's snapshot, and with it the generation, before its
/// transaction begins; what it learns is kept only while the generation is unchanged, so
/// nothing learned from a snapshot older than the catalog change survives it. Write
/// transactions do not use cached field types at all (they read them from the store, once
/// per transaction).
final class NameCache: Sendable {
    struct Snapshot: Sendable {
        var names: [String?] = []
        var ids: [String: Int64] = [:]
        var fieldTypes: [FieldTypeKey: FieldType] = [:]
        /// The number of catalog changes before this snapshot was taken.
        var generation = 0
    }

    struct FieldTypeKey: Hashable, Sendable {
        let type: Int64
        let field: Int64
    }

    private let storage = Mutex(Snapshot())

    var snapshot: Snapshot { storage.withLock { $0 } }

    /// Adds what a write transaction interned or read, once it committed. Field types are
    /// taken only when no catalog change came since `generation`.
    func publish(names: [(String, Int64)], fieldTypes: [(FieldTypeKey, FieldType)], generation: Int) {
        guard !names.isEmpty || !fieldTypes.isEmpty else { return }
        storage.withLock { s in
            for (name, id) in names { Self.insert(name, id, into: &s) }
            if s.generation == generation {
                for (key, type) in fieldTypes { s.fieldTypes[key] = type }
            }
        }
    }

    /// Forgets every field type and starts a new generation: called after a transaction that
    /// removed or changed field types committed.
    func invalidateCatalog() {
        storage.withLock { s in
            s.generation += 1
            s.fieldTypes = [:]
        }
    }

    fileprivate func learn(_ name: String, _ id: Int64) {
        storage.withLock { Self.insert(name, id, into: &$0) }
    }

    fileprivate func learn(_ key: FieldTypeKey, _ type: FieldType, generation: Int) {
        storage.withLock { s in
            if s.generation == generation { s.fieldTypes[key] = type }
        }
    }

    private static func insert(_ name: String, _ id: Int64, into s: inout Snapshot) {
        s.ids[name] = id
        let index = Int(id)
        if index >= s.names.count { s.names.append(contentsOf: repeatElement(nil, count: index - s.names.count + 1)) }
        s.names[index] = name
    }
}

/// Resolves names and ids for one transaction: the cache first, then the
/// transaction's own view of the `schema` table.
struct NameResolver<Store: KeyValueStore> {
    let cache: NameCache
    let transaction: Store.ReadTransaction
    let schema: Table
    var snapshot: NameCache.Snapshot
    /// What a write transaction found in the store past the cache, kept for the transaction:
    /// the shared cache takes only committed names, so these wait in ``learned`` and
    /// ``learnedFieldTypes`` for the writer to publish them after the commit.
    private var localIDs: [String: Int64] = [:]
    private var localNames: [Int64: String] = [:]
    private var localFieldTypes: [NameCache.FieldTypeKey: FieldType] = [:]
    /// The names a write transaction read from the store (not the cache).
    private(set) var learned: [(String, Int64)] = []
    /// The field types a write transaction read from the store (not the cache).
    private(set) var learnedFieldTypes: [(NameCache.FieldTypeKey, FieldType)] = []

    /// A resolver for `transaction`. A reader passes the snapshot it took before the
    /// transaction began (see ``NameCache``); a writer's is taken here.
    init(cache: NameCache, transaction: Store.ReadTransaction, schema: Table, snapshot: NameCache.Snapshot? = nil) {
        self.cache = cache
        self.transaction = transaction
        self.schema = schema
        self.snapshot = snapshot ?? cache.snapshot
    }

    /// The name with `id`; a missing id means the stored data is corrupt.
    mutating func name(_ id: Int64) throws -> String {
        let index = Int(id)
        if index >= 0, index < snapshot.names.count, let name = snapshot.names[index] { return name }
        if !localNames.isEmpty, let name = localNames[id] { return name }
        guard let bytes = try transaction.value(forKey: Layout.idToNameKey(id), in: schema),
            let name = String(validating: bytes, as: UTF8.self)
        else { throw FormatError(message: "unknown name id \(id)") }
        // A write transaction may be reading its own uncommitted names: only
        // readers, whose snapshots are committed, fill the cache.
        if transaction.isReadOnly {
            cache.learn(name, id)
            snapshot = cache.snapshot
        } else {
            remember(name, id)
            learned.append((name, id))
        }
        return name
    }

    /// Keeps a name a write transaction read or created, for the rest of the transaction.
    mutating func remember(_ name: String, _ id: Int64) {
        localIDs[name] = id
        localNames[id] = name
    }

    /// Keeps a field type a write transaction read or fixed, for the rest of the transaction.
    mutating func remember(_ key: NameCache.FieldTypeKey, _ type: FieldType) {
        localFieldTypes[key] = type
    }

    /// The id of `name`, or `nil` when it was never interned.
    mutating func id(_ name: String) throws -> Int64? {
        if let id = snapshot.ids[name] { return id }
        if !localIDs.isEmpty, let id = localIDs[name] { return id }
        guard let bytes = try transaction.value(forKey: Layout.nameToIDKey(name), in: schema) else { return nil }
        let id = try bytes.withUnsafeBytes { try readBigEndianKey($0) }
        if transaction.isReadOnly {
            cache.learn(name, id)
            snapshot = cache.snapshot
        } else {
            remember(name, id)
            learned.append((name, id))
        }
        return id
    }

    /// The fixed type of field `field` of record type `type`, or `nil` when unset.
    mutating func fieldType(type: Int64, field: Int64) throws -> FieldType? {
        let key = NameCache.FieldTypeKey(type: type, field: field)
        // A writer reads field types from the store: the cache may hold types of a catalog
        // that a transaction committed just before this one replaced (see `NameCache`).
        if transaction.isReadOnly, let t = snapshot.fieldTypes[key] { return t }
        if !localFieldTypes.isEmpty, let t = localFieldTypes[key] { return t }
        guard let bytes = try transaction.value(forKey: Layout.fieldTypeKey(type: type, field: field), in: schema) else {
            return nil
        }
        // An unpinned `NUMBER` (declared by a schema, no value saved yet) has no type, and a
        // field an import removed is not in the schema (saves look at its declaration).
        let declaration = try FieldDeclaration(bytes)
        guard let t = declaration.type, !declaration.isRetired else { return nil }
        if transaction.isReadOnly {
            cache.learn(key, t, generation: snapshot.generation)
            snapshot = cache.snapshot
        } else {
            remember(key, t)
            learnedFieldTypes.append((key, t))
        }
        return t
    }
}
