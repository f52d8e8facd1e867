import FogStorage

/// Carries names created inside a write job, and what other caches learned from it, to the
/// publication after commit. (A replayed job sets it again: the last run is what committed.)
final class PublishBox: @unchecked Sendable {
    private var names: [(String, Int64)] = []
    private var afterCommit: [@Sendable () -> Void] = []

    func set(_ writer: NameWriter<some KeyValueStore>) {
        names = writer.namesToPublish
        afterCommit = writer.resolver.afterCommit
    }

    func publish(to cache: NameCache) {
        cache.publish(names: names)
        for publish in afterCommit { publish() }
    }
}

/// Interns names inside a write transaction.
struct NameWriter<Store: KeyValueStore> {
    var resolver: NameResolver<Store>
    let transaction: Store.WriteTransaction
    let core: EngineCore<Store>
    private(set) var created: [(String, Int64)] = []

    /// The names to publish once the transaction commits: those it created and those it
    /// read from the store (committed with it, if they were not before).
    var namesToPublish: [(String, Int64)] { created + resolver.learned }

    init(core: EngineCore<Store>, transaction: Store.WriteTransaction) {
        self.core = core
        self.transaction = transaction
        self.resolver = NameResolver(cache: core.names, transaction: transaction.readView, schema: core.schema, meta: core.meta)
    }

    /// The id of `name`, interning it when new.
    mutating func intern(_ name: String) throws -> Int64 {
        if let id = try resolver.id(name) { return id }
        let id = try core.nextCounter(Layout.metaNextNameID, in: transaction)
        try transaction.put(bigEndianKey(id), forKey: Layout.nameToIDKey(name), in: core.schema)
        try transaction.put(Array(name.utf8), forKey: Layout.idToNameKey(id), in: core.schema)
        created.append((name, id))
        resolver.remember(name, id)
        return id
    }

    /// Fixes the type of a field the first time it is written; a field declared `NUMBER`
    /// without `PREFERRED AS` keeps its declaration and is pinned to `type`; a retired field
    /// comes back.
    mutating func define(recordType: String, field: String, as type: FieldType) throws {
        let typeID = try intern(recordType)
        let fieldID = try intern(field)
        if try resolver.fieldType(type: typeID, field: fieldID) != nil { return }
        let key = Layout.fieldTypeKey(type: typeID, field: fieldID)
        let declared = try transaction.value(forKey: key, in: core.schema).map { try FieldDeclaration($0) }
        // An encrypted field (kept under its stored name) is declared `ENCRYPTED`.
        let declaration =
            declared?.saved(as: type) ?? FieldDeclaration(type: type, flags: Record.isEncryptedKey(field) ? .encrypted : [])
        try transaction.put(declaration.encoded, forKey: key, in: core.schema)
        resolver.remember(NameCache.FieldTypeKey(type: typeID, field: fieldID), type)
    }

    /// The fixed type of a field, or `nil` when the field was never written.
    mutating func fieldType(recordType: String, field: String) throws -> FieldType? {
        guard let typeID = try resolver.id(recordType), let fieldID = try resolver.id(field) else { return nil }
        return try resolver.fieldType(type: typeID, field: fieldID)
    }
}
