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
/// Names never change once interned. Field types do, when an administrator changes the
/// catalog (a schema import that removes a field, a development reset), in this process or
/// another. So cached field types are keyed by the catalog's version (`meta/schemaVersion`,
/// which every such change increments): a reader uses them only when the version its own
/// transaction reads is theirs, and what it learns is tagged with that version (a newer
/// version replaces them all). A write transaction uses them only while it saves records
/// (``NameResolver/useCommittedFieldTypes()``), and hands the types it read from the store to
/// the cache once it commits.
final class NameCache: Sendable {
    struct Snapshot: Sendable {
        var names: [String?] = []
        var ids: [String: Int64] = [:]
        var fieldTypes: [FieldTypeKey: FieldType] = [:]
        /// The catalog version the field types were read at (-1: none yet).
        var fieldTypesVersion: Int64 = -1
    }

    struct FieldTypeKey: Hashable, Sendable {
        let type: Int64
        let field: Int64
    }

    private let storage = Mutex(Snapshot())

    /// How many times a field type was read from the store rather than the cache (for tests).
    let fieldTypeReads = Atomic<Int>(0)

    var snapshot: Snapshot { storage.withLock { $0 } }

    /// Adds the names a write transaction interned or read, once it committed.
    func publish(names: [(String, Int64)]) {
        guard !names.isEmpty else { return }
        storage.withLock { s in
            for (name, id) in names { Self.insert(name, id, into: &s) }
        }
    }

    fileprivate func learn(_ name: String, _ id: Int64) {
        storage.withLock { Self.insert(name, id, into: &$0) }
    }

    /// Keeps a field type read at catalog version `version` from a committed snapshot (a
    /// reader's, or a writer's once it committed).
    fileprivate func learn(_ key: FieldTypeKey, _ type: FieldType, version: Int64) {
        storage.withLock { s in
            if s.fieldTypesVersion < version {
                s.fieldTypes = [:]
                s.fieldTypesVersion = version
            }
            if s.fieldTypesVersion == version { s.fieldTypes[key] = type }
        }
    }

    /// The most the dense id → name array grows past its end for one name. Ids are handed
    /// out one by one, so a name far beyond the others comes from damaged data (a name entry
    /// whose id bytes changed): it is not cached by id, rather than sizing the array by it.
    static let maximumIDGap = 65_536

    private static func insert(_ name: String, _ id: Int64, into s: inout Snapshot) {
        let index = Int(id)
        guard index > 0, index - s.names.count < maximumIDGap else { return }
        s.ids[name] = id
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
    /// The `meta` table, for the catalog version field types are cached by.
    let meta: Table
    var snapshot: NameCache.Snapshot
    private var knownCatalogVersion: Int64?
    /// What a write transaction found in the store past the cache, kept for the transaction:
    /// the shared cache takes only committed names, so these wait in ``learned`` for the
    /// writer to publish them after the commit.
    private var localIDs: [String: Int64] = [:]
    private var localNames: [Int64: String] = [:]
    private var localFieldTypes: [NameCache.FieldTypeKey: FieldType] = [:]
    /// Whether this write transaction reads field types from the cache too
    /// (``useCommittedFieldTypes()``).
    private var usesCommittedFieldTypes = false
    /// The names a write transaction read from the store (not the cache).
    private(set) var learned: [(String, Int64)] = []
    /// The names ``id(_:)`` found last, with their ids, replaced in turn once full. A request
    /// looks up the same few names (its record types and fields) again and again, and
    /// comparing a short name with a few others costs less than hashing it once. A name's id
    /// never changes once interned, and a name not found is not kept.
    private var recentIDs: [(name: String, id: Int64)] = []
    private var nextRecent = 0
    private static var recentCapacity: Int { 8 }
    /// What other caches learned from a write transaction, to take once it commits (see
    /// ``publishAfterCommit(_:)``).
    private(set) var afterCommit: [@Sendable () -> Void] = []

    /// A resolver for `transaction`.
    init(cache: NameCache, transaction: Store.ReadTransaction, schema: Table, meta: Table) {
        self.cache = cache
        self.transaction = transaction
        self.schema = schema
        self.meta = meta
        self.snapshot = cache.snapshot
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

    /// Runs `publish` once the write transaction this resolver reads commits (not at all if it
    /// is rolled back): how a cache other than the names learns from a write, whose
    /// uncommitted reads it must not take before (``IndexCatalog``). For a read transaction,
    /// whose snapshot is committed, `publish` runs now.
    mutating func publishAfterCommit(_ publish: @escaping @Sendable () -> Void) {
        if transaction.isReadOnly { publish() } else { afterCommit.append(publish) }
    }

    /// Keeps a name a write transaction read or created, for the rest of the transaction.
    mutating func remember(_ name: String, _ id: Int64) {
        localIDs[name] = id
        localNames[id] = name
    }

    /// The catalog version (`meta/schemaVersion`) the transaction sees, read once.
    private mutating func catalogVersion() throws -> Int64 {
        if let knownCatalogVersion { return knownCatalogVersion }
        let version = try transaction.withValue(forKey: Layout.metaSchemaVersion, in: meta) { try readBigEndianKey($0) } ?? 0
        knownCatalogVersion = version
        return version
    }

    /// Lets this write transaction take field types from the cache when it holds them for the
    /// catalog version the transaction sees, read again now; until
    /// ``stopUsingCommittedFieldTypes()``.
    ///
    /// Only for work that changes no field declaration but by ``NameWriter/define(recordType:field:as:)``
    /// (saving records): a committed catalog version is never written again with other field
    /// types (a schema change takes the next version), and a type a save fixes is new, so the
    /// cache cannot hold another for it. A schema change in the same transaction writes
    /// declarations before it takes the next version, which is why it must not use them.
    mutating func useCommittedFieldTypes() {
        usesCommittedFieldTypes = true
        knownCatalogVersion = nil
    }

    /// Ends ``useCommittedFieldTypes()``.
    mutating func stopUsingCommittedFieldTypes() {
        usesCommittedFieldTypes = false
    }

    /// Keeps a field type a write transaction read or fixed, for the rest of the transaction.
    mutating func remember(_ key: NameCache.FieldTypeKey, _ type: FieldType) {
        localFieldTypes[key] = type
    }

    /// The id of `name`, or `nil` when it was never interned.
    ///
    /// The last few names found are compared first (``recentIDs``); then the cache, the
    /// transaction's own names and the store.
    mutating func id(_ name: String) throws -> Int64? {
        let length = name.utf8.count
        for entry in recentIDs where entry.name.utf8.count == length && entry.name == name { return entry.id }
        guard let id = try lookUpID(name) else { return nil }
        if recentIDs.count < Self.recentCapacity {
            if recentIDs.isEmpty { recentIDs.reserveCapacity(Self.recentCapacity) }
            recentIDs.append((name, id))
        } else {
            recentIDs[nextRecent] = (name, id)
            nextRecent = (nextRecent + 1) % Self.recentCapacity
        }
        return id
    }

    /// ``id(_:)`` past the recent names.
    private mutating func lookUpID(_ name: String) throws -> Int64? {
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
        // A reader, or a writer saving records, uses cached types of the catalog version it
        // sees; other writers read them from the store (see `NameCache`).
        if !localFieldTypes.isEmpty, let t = localFieldTypes[key] { return t }
        let shared = transaction.isReadOnly || usesCommittedFieldTypes
        if shared, !snapshot.fieldTypes.isEmpty, snapshot.fieldTypesVersion == (try catalogVersion()),
            let t = snapshot.fieldTypes[key]
        {
            return t
        }
        cache.fieldTypeReads.add(1, ordering: .relaxed)
        guard let bytes = try transaction.value(forKey: Layout.fieldTypeKey(type: type, field: field), in: schema) else {
            return nil
        }
        // An unpinned `NUMBER` (declared by a schema, no value saved yet) has no type, and a
        // field an import removed is not in the schema (saves look at its declaration).
        let declaration = try FieldDeclaration(bytes)
        guard let t = declaration.type, !declaration.isRetired else { return nil }
        if transaction.isReadOnly {
            cache.learn(key, t, version: try catalogVersion())
            snapshot = cache.snapshot
        } else {
            remember(key, t)
            if usesCommittedFieldTypes {
                let (cache, version) = (cache, try catalogVersion())
                publishAfterCommit { cache.learn(key, t, version: version) }
            }
        }
        return t
    }
}
