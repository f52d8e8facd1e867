// swift-format-ignore-file: AmbiguousTrailingClosureOverload

import FogStorage
import Foundation

/// The storage engine of one container: the store, its tables, the
/// name cache and the assets folder. `Container` and `Database` are thin
/// shells over it. Generic over the store's backend; `StoreEngine` names the one
/// FogKit uses.
final class Engine<Store: KeyValueStore>: Sendable {
    let store: Store
    let directory: URL
    let assetDirectory: URL
    let names = NameCache()
    let indexCatalog = IndexCatalog()
    let advisor: IndexAdvisor
    let incarnation: [UInt8]
    let durability: Container.Durability

    let meta: Table
    let zones: Table
    let zoneIDs: Table
    let recordNames: Table
    let records: Table
    let schema: Table
    let users: Table
    let refs: Table
    let indexTable: Table
    let changeTable: Table
    let databaseChangeTable: Table

    /// Opens the store for `caller`; only the administrator migrates an older format.
    /// `advisor` collects the index advice (an administrator shares its own with the
    /// containers it makes).
    init(
        directory: URL, identifier: String, durability: Container.Durability, caller: Caller,
        advisor: IndexAdvisor = IndexAdvisor()
    ) throws {
        self.advisor = advisor
        self.directory = directory
        self.assetDirectory = directory.appendingPathComponent("assets", isDirectory: true)
        self.durability = durability
        // An existing file must already be a FogKit store: opening it creates nothing.
        let existed = Store.storeExists(at: directory)
        let store: Store
        do {
            store = try Store.open(
                at: directory,
                configuration: Layout.configuration(durability: durability.storage, createsMissingTables: !existed))
        } catch StorageError.notFound {
            throw FogError(.incompatibleVersion, message: "\(directory.path) holds a store that is not a FogKit store")
        } catch {
            throw FogError(.internalError, message: "cannot open the store in \(directory.path): \(error)", underlyingError: error)
        }
        self.store = store
        meta = store.table(named: Layout.meta)
        zones = store.table(named: Layout.zones)
        zoneIDs = store.table(named: Layout.zoneIDs)
        recordNames = store.table(named: Layout.names)
        records = store.table(named: Layout.records)
        schema = store.table(named: Layout.schema)
        users = store.table(named: Layout.users)
        refs = store.table(named: Layout.refs)
        indexTable = store.table(named: Layout.indexes)
        changeTable = store.table(named: Layout.changes)
        databaseChangeTable = store.table(named: Layout.databaseChanges)
        do {
            try FileManager.default.createDirectory(at: assetDirectory, withIntermediateDirectories: true)
            let (incarnation, version) = try Self.initializeMeta(store: store, meta: meta, identifier: identifier, existed: existed)
            self.incarnation = incarnation
            if version < Layout.formatVersion {
                try AccessPolicy.standard.check(.administer(.migrate), AccessRequest(caller: caller))
                try migrate(from: version)
            }
            try checkIndexTableLayout()
        } catch {
            store.close()
            throw FogError.wrapping(error)
        }
    }

    /// Writes the format version and incarnation of a new store, or checks them.
    private static func initializeMeta(
        store: Store, meta: Table, identifier: String, existed: Bool
    ) throws -> (incarnation: [UInt8], version: Int64) {
        let existing = try store.read { txn -> ([UInt8]?, [UInt8]?, [UInt8]?) in
            (
                try txn.value(forKey: Layout.metaFormat, in: meta),
                try txn.value(forKey: Layout.metaIncarnation, in: meta),
                try txn.value(forKey: Layout.metaIdentifier, in: meta)
            )
        }
        if let format = existing.0 {
            let version = try format.withUnsafeBytes { try readBigEndianKey($0) }
            guard Layout.readableFormatVersions.contains(version) else {
                throw FogError(
                    .incompatibleVersion,
                    message:
                        "the store uses format version \(version); this FogKit reads versions \(Layout.readableFormatVersions.lowerBound) to \(Layout.formatVersion)"
                )
            }
            if let stored = existing.2, let storedID = String(validating: stored, as: UTF8.self), storedID != identifier {
                throw FogError(
                    .badContainer,
                    message: "the store in this directory belongs to container \(storedID), not \(identifier)")
            }
            guard let incarnation = existing.1 else { throw FormatError(message: "store without incarnation") }
            return (incarnation, version)
        }
        if existed {
            // The tables exist but no format was written: either another container is
            // creating this store right now, or a crash came between creating the tables
            // and writing the format. Both leave every table empty; anything else is not
            // a FogKit store.
            let empty = try store.read { txn in
                try Layout.allTables.allSatisfy { try txn.count(of: store.table(named: $0)) == 0 || $0 == Layout.meta }
            }
            guard empty else {
                throw FogError(.incompatibleVersion, message: "the store has no FogKit format version; it is not a FogKit store")
            }
        }
        let incarnation = newIncarnation()
        let created = try store.writeAndWait { txn in
            if let existing = try txn.value(forKey: Layout.metaIncarnation, in: meta) { return existing }
            guard try txn.count(of: meta) == 0 else { throw FormatError(message: "store without format version") }
            try txn.put(bigEndianKey(Layout.formatVersion), forKey: Layout.metaFormat, in: meta)
            try txn.put(incarnation, forKey: Layout.metaIncarnation, in: meta)
            try txn.put(Array(identifier.utf8), forKey: Layout.metaIdentifier, in: meta)
            return incarnation
        }
        return (created, Layout.formatVersion)
    }

    func close() { store.close() }

    // MARK: - Transactions

    /// Runs `body` in a read snapshot with a name resolver.
    func read<R>(_ body: (Store.ReadTransaction, inout NameResolver<Store>) throws -> R) throws -> R {
        try mapStorageErrors {
            try store.read { txn in
                var names = NameResolver<Store>(cache: names, transaction: txn, schema: schema)
                return try body(txn, &names)
            }
        }
    }

    /// Runs `body` in a write transaction; names it interns are published to the
    /// cache once the transaction commits.
    func write<R: Sendable>(_ body: @escaping @Sendable (Store.WriteTransaction, inout NameWriter<Store>) throws -> R) async throws -> R {
        let box = PublishBox()
        let result: R = try await mapStorageErrors {
            try await store.write { [self] txn in
                var writer = NameWriter(engine: self, transaction: txn)
                let value = try body(txn, &writer)
                box.set(writer.created, writer.createdFieldTypes)
                return value
            }
        }
        box.publish(to: names)
        return result
    }

    /// The blocking form of ``write(_:)``, for set-up work outside async contexts. With
    /// `alone`, the transaction is not grouped with other writes (as
    /// `StorageWriteTransaction.replaceWithEmpty` needs).
    func writeAndWait<R>(alone: Bool = false, _ body: @escaping (Store.WriteTransaction, inout NameWriter<Store>) throws -> R) throws -> R {
        let box = PublishBox()
        let job = { [self] (txn: Store.WriteTransaction) throws -> R in
            var writer = NameWriter(engine: self, transaction: txn)
            let value = try body(txn, &writer)
            box.set(writer.created, writer.createdFieldTypes)
            return value
        }
        let result: R = try mapStorageErrors {
            alone ? try store.writeAloneAndWait(job) : try store.writeAndWait(job)
        }
        box.publish(to: names)
        return result
    }

    /// Takes the next value of a counter in `meta` (starting at 1).
    func nextCounter(_ key: [UInt8], in txn: Store.WriteTransaction) throws -> Int64 {
        let current = try txn.withValue(forKey: key, in: meta) { try readBigEndianKey($0) } ?? 0
        let next = current + 1
        try txn.put(bigEndianKey(next), forKey: key, in: meta)
        return next
    }

    /// The current value of the commit sequence.
    func currentSequence(in txn: Store.ReadTransaction) throws -> Int64 {
        try txn.withValue(forKey: Layout.metaSequence, in: meta) { try readBigEndianKey($0) } ?? 0
    }
}

/// Carries names created inside a write job to the publication after commit.
private final class PublishBox: @unchecked Sendable {
    private var names: [(String, Int64)] = []
    private var fieldTypes: [(NameCache.FieldTypeKey, FieldType)] = []

    func set(_ names: [(String, Int64)], _ fieldTypes: [(NameCache.FieldTypeKey, FieldType)]) {
        self.names = names
        self.fieldTypes = fieldTypes
    }

    func publish(to cache: NameCache) { cache.publish(names: names, fieldTypes: fieldTypes) }
}

/// Interns names inside a write transaction.
struct NameWriter<Store: KeyValueStore> {
    var resolver: NameResolver<Store>
    let transaction: Store.WriteTransaction
    let engine: Engine<Store>
    private(set) var created: [(String, Int64)] = []
    private(set) var createdFieldTypes: [(NameCache.FieldTypeKey, FieldType)] = []

    init(engine: Engine<Store>, transaction: Store.WriteTransaction) {
        self.engine = engine
        self.transaction = transaction
        self.resolver = NameResolver(cache: engine.names, transaction: transaction.readView, schema: engine.schema)
    }

    /// The id of `name`, interning it when new.
    mutating func intern(_ name: String) throws -> Int64 {
        if let id = try resolver.id(name) { return id }
        let id = try engine.nextCounter(Layout.metaNextNameID, in: transaction)
        try transaction.put(bigEndianKey(id), forKey: Layout.nameToIDKey(name), in: engine.schema)
        try transaction.put(Array(name.utf8), forKey: Layout.idToNameKey(id), in: engine.schema)
        created.append((name, id))
        return id
    }

    /// Fixes the type of a field the first time it is written.
    mutating func define(recordType: String, field: String, as type: FieldType) throws {
        let typeID = try intern(recordType)
        let fieldID = try intern(field)
        if try resolver.fieldType(type: typeID, field: fieldID) != nil { return }
        try transaction.put([type.rawValue], forKey: Layout.fieldTypeKey(type: typeID, field: fieldID), in: engine.schema)
        createdFieldTypes.append((NameCache.FieldTypeKey(type: typeID, field: fieldID), type))
    }

    /// The fixed type of a field, or `nil` when the field was never written.
    mutating func fieldType(recordType: String, field: String) throws -> FieldType? {
        guard let typeID = try resolver.id(recordType), let fieldID = try resolver.id(field) else { return nil }
        return try resolver.fieldType(type: typeID, field: fieldID)
    }
}

/// Turns storage and format errors into ``FogError``s; FogErrors pass through.
func mapStorageErrors<R>(_ body: () throws -> R) throws -> R {
    do { return try body() } catch { throw FogError.wrapping(error) }
}

// The async twin of the function above; the compiler picks by context (with or without
// `await`), which is why this file opts out of AmbiguousTrailingClosureOverload.
func mapStorageErrors<R>(_ body: () async throws -> R) async throws -> R {
    do { return try await body() } catch { throw FogError.wrapping(error) }
}

extension FogError {
    static func wrapping(_ error: any Error) -> FogError {
        switch error {
        case let e as FogError: return e
        case let e as StorageError where e == .closed:
            return FogError(.internalError, message: "the container is closed", underlyingError: e)
        case let e as StorageError:
            switch e {
            case .temporarilyUnavailable:
                // Retryable: another read ends, or another process, within moments.
                return FogError(.serviceUnavailable, message: "the store is busy: \(e)", retryAfterSeconds: 1, underlyingError: e)
            case .corrupted:
                return FogError(.internalError, message: "the store is damaged: \(e)", underlyingError: e)
            default:
                return FogError(.internalError, message: "storage error: \(e)", underlyingError: e)
            }
        case let e as FormatError:
            return FogError(.internalError, message: e.description, underlyingError: e)
        default:
            return FogError(.internalError, message: "\(error)", underlyingError: error)
        }
    }
}

/// Runs `body`, turning any error into a ``FogError`` (typed throws).
func fogTry<R>(_ body: () throws -> R) throws(FogError) -> R {
    do { return try body() } catch { throw FogError.wrapping(error) }
}
