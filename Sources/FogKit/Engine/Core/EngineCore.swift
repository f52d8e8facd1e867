import FogStorage
import Foundation
import Synchronization

/// What every engine service shares: the open store, the `meta` table (format, incarnation,
/// counters), the `schema` table with the name cache, the assets folder, and the
/// transactions that resolve and intern names. Services own the other tables.
final class EngineCore<Store: KeyValueStore>: Sendable {
    let store: Store
    /// Where the store is.
    let location: StoreLocation
    /// The store's folder, or for a store of another backend this process's working folder
    /// for it (asset files, sorted runs).
    let directory: URL
    let assetDirectory: URL
    /// What every engine open on this store in the process shares (names, incarnation).
    let shared: SharedStoreState
    private let released = Mutex(false)
    let durability: StorageDurability
    /// Encrypts and decrypts the values of encrypted fields (``Record/encryptedValues``).
    let cipher: FieldCipher

    /// The interned names and fixed field types, shared by every engine on the store.
    var names: NameCache { shared.names }
    /// The bytes that tell copies of the store apart, as `txn` sees them (a development reset
    /// changes them).
    func incarnation(in txn: Store.ReadTransaction) throws -> [UInt8] {
        guard let bytes = try txn.value(forKey: Layout.metaIncarnation, in: meta) else {
            throw FormatError(message: "store without incarnation")
        }
        return bytes
    }

    /// The format version the store had when it was opened; below ``Layout/formatVersion``
    /// until ``Maintenance/migrate(from:)`` has run.
    let openedVersion: Int64

    let meta: Table
    let schema: Table
    /// The assets' bytes, for a store that keeps them in the database (``AssetChunks``);
    /// `nil` for a store whose assets are files beside it.
    let assetChunks: Table?
    /// This engine's registration with ``RemoteAssets``, for a store with ``assetChunks``.
    private let remoteAssetsToken: UInt64?
    /// The grants and role memberships the public database's access checks read.
    let publicRoles = PublicRoleCache()

    /// Opens (or creates) the store in `directory` and reads or writes its format version,
    /// incarnation and identifier. The caller closes the store when a later step fails.
    init(location: StoreLocation, identifier: String, durability: StorageDurability, encryptionKey: Data? = nil) throws {
        self.location = location
        // A store in a folder keeps its assets and key file there; another backend's store
        // has a working folder of this process (``StoreLocation/workingDirectory``).
        let directory = location.isDirectory ? location.url : location.workingDirectory
        self.directory = directory
        self.cipher = FieldCipher(keyFile: location.isDirectory ? directory : nil, suppliedKey: encryptionKey, store: location)
        self.assetDirectory = directory.appendingPathComponent("assets", isDirectory: true)
        self.durability = durability
        // An existing file must already be a FogKit store: opening it creates nothing.
        let existed = location.storeExists()
        let store: Store
        do {
            store = try Self.open(
                location,
                configuration: Layout.configuration(
                    durability: durability, createsMissingTables: !existed, keepsAssets: !location.isDirectory))
        } catch StorageError.notFound {
            // A store of format version 1 to 3 has every table but `assets`, `subscriptions`
            // and `notifications`, one of version 4 or 5 every table but the last two: they are
            // created (empty) here; the migration to version 4 fills `assets`.
            guard existed,
                Self.isStore(at: location, durability: durability, tables: Layout.tablesBeforeVersion4, below: 4)
                    || Self.isStore(at: location, durability: durability, tables: Layout.tablesBeforeVersion6, below: 6)
            else {
                throw FogError(.incompatibleVersion, message: "\(location) holds a store that is not a FogKit store")
            }
            do {
                store = try Self.open(
                    location,
                    configuration: Layout.configuration(
                        durability: durability, createsMissingTables: true, keepsAssets: !location.isDirectory))
            } catch {
                throw Self.openFailure(location, error)
            }
        } catch {
            throw Self.openFailure(location, error)
        }
        self.store = store
        meta = store.table(named: Layout.meta)
        schema = store.table(named: Layout.schema)
        let chunks = location.isDirectory ? nil : store.table(named: Layout.assetChunks)
        assetChunks = chunks
        if let chunks {
            remoteAssetsToken = RemoteAssets.register(directory: assetDirectory) { [store] name, destination in
                try store.read { txn in try AssetChunks.materialize(name, to: destination, from: chunks, txn: txn) }
            }
        } else {
            remoteAssetsToken = nil
        }
        do {
            try FileManager.default.createDirectory(at: assetDirectory, withIntermediateDirectories: true)
            let (incarnation, version) = try Self.initializeMeta(store: store, meta: meta, identifier: identifier, existed: existed)
            _ = incarnation
            self.shared = SharedStoreState.acquire(location: location)
            self.openedVersion = version
        } catch {
            if let remoteAssetsToken { RemoteAssets.unregister(directory: assetDirectory, token: remoteAssetsToken) }
            store.close()
            throw FogError.wrapping(error)
        }
    }

    /// Opens the store at `location`: an ``OpenedStore`` by its backend, any other store type
    /// (in tests of the storage layer) at the location's URL.
    private static func open(_ location: StoreLocation, configuration: StoreConfiguration) throws -> Store {
        if let opened = Store.self as? OpenedStore.Type {
            return try opened.open(at: location, configuration: configuration) as! Store
        }
        return try Store.open(at: location.url, configuration: configuration)
    }

    /// The error for a store that cannot be opened: retryable when its server is out of reach.
    private static func openFailure(_ location: StoreLocation, _ error: any Error) -> FogError {
        if let e = error as? StorageError, case .temporarilyUnavailable = e {
            return FogError(
                .serviceUnavailable, message: "cannot open the store at \(location): \(e)", retryAfterSeconds: 1, underlyingError: e)
        }
        return FogError(.internalError, message: "cannot open the store at \(location): \(error)", underlyingError: error)
    }

    /// Whether the store in `directory` has every table of `tables` and a readable format
    /// version below `version` in `meta` (opened without creating anything, then closed).
    private static func isStore(at location: StoreLocation, durability: StorageDurability, tables: [String], below version: Int64) -> Bool {
        let limit = version
        let configuration = StoreConfiguration(
            tables: tables, layouts: Layout.tableLayouts, durability: durability, createsMissingTables: false)
        guard let old = try? open(location, configuration: configuration) else { return false }
        defer { old.close() }
        let meta = old.table(named: Layout.meta)
        let version = try? old.read { txn in try txn.withValue(forKey: Layout.metaFormat, in: meta) { try readBigEndianKey($0) } }
        guard let version = version ?? nil else { return false }
        return version < limit && Layout.readableFormatVersions.contains(version)
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
        let incarnation = Layout.newIncarnation()
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

    func close() {
        if released.withLock({ released in
            defer { released = true }
            return !released
        }) {
            shared.release()
            if let remoteAssetsToken { RemoteAssets.unregister(directory: assetDirectory, token: remoteAssetsToken) }
        }
        store.close()
    }

    // MARK: - Transactions

    /// Runs `body` in a read snapshot with a name resolver.
    func read<R>(_ body: (Store.ReadTransaction, inout NameResolver<Store>) throws -> R) throws -> R {
        try mapStorageErrors {
            try store.read { txn in
                var names = NameResolver<Store>(cache: names, transaction: txn, schema: schema, meta: meta)
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
                var writer = NameWriter(core: self, transaction: txn)
                let value = try body(txn, &writer)
                box.set(writer)
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
            var writer = NameWriter(core: self, transaction: txn)
            let value = try body(txn, &writer)
            box.set(writer)
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

    /// The number of index definition changes so far (0 before any): the version the
    /// ``IndexCatalog`` cache is keyed by.
    func schemaVersion(in txn: Store.ReadTransaction) throws -> Int64 {
        try txn.withValue(forKey: Layout.metaSchemaVersion, in: meta) { try readBigEndianKey($0) } ?? 0
    }
}
