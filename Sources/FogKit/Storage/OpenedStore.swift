import FogStorage
import FogStorageLMDB
import Foundation

/// The store an engine runs on, whichever backend its ``StoreLocation`` names: LMDB, which
/// FogKit links and calls directly, or any other ``KeyValueStore`` (PostgreSQL, from
/// `FogStoragePostgres`), called through an existential.
///
/// The engine is generic over its store; this is the one type it is specialised for. The
/// LMDB case costs one branch per storage call, so the embedded store keeps its speed while a
/// backend FogKit does not link can be chosen at run time.
final class OpenedStore: KeyValueStore {
    typealias ReadTransaction = OpenedReadTransaction
    typealias WriteTransaction = OpenedWriteTransaction

    enum Backend: Sendable {
        case lmdb(LMDBStore)
        case other(any ErasedStore)
    }

    let backend: Backend
    /// Where the store is.
    let location: StoreLocation

    private init(backend: Backend, location: StoreLocation) {
        self.backend = backend
        self.location = location
    }

    /// LMDB's limit, which every backend FogKit runs on must accept (FogKit's keys are built
    /// to fit it).
    static var maximumKeySize: Int { LMDBStore.maximumKeySize }
    /// `false`: FogKit never writes an empty key.
    static var allowsEmptyKeys: Bool { false }

    /// Whether a store of the location's backend is there.
    static func storeExists(at location: StoreLocation) -> Bool { location.storeExists() }

    /// Opens the store at `location` with its backend.
    static func open(at location: StoreLocation, configuration: StoreConfiguration) throws -> OpenedStore {
        if location.isBackend(LMDBStore.self) {
            return OpenedStore(backend: .lmdb(try LMDBStore.open(at: location.url, configuration: configuration)), location: location)
        }
        let store = try location.open(configuration: configuration)
        guard type(of: store).maximumKeySize >= LMDBStore.maximumKeySize else {
            store.close()
            throw StorageError.other(
                "\(location) keeps keys of at most \(type(of: store).maximumKeySize) bytes; FogKit needs \(LMDBStore.maximumKeySize)")
        }
        return OpenedStore(backend: .other(erase(store)), location: location)
    }

    /// An LMDB store in `location` (the interface's form; FogKit opens by ``StoreLocation``).
    static func storeExists(at location: URL) -> Bool { LMDBStore.storeExists(at: location) }

    /// An LMDB store in `location` (the interface's form; FogKit opens by ``StoreLocation``).
    static func open(at location: URL, configuration: StoreConfiguration) throws -> OpenedStore {
        try open(at: .directory(location), configuration: configuration)
    }

    /// Whether the store keeps its data in a local folder (LMDB), where assets and keys
    /// live as files beside it.
    var isLocal: Bool {
        if case .lmdb = backend { return true }
        return false
    }

    func close() {
        switch backend {
        case .lmdb(let s): s.close()
        case .other(let s): s.close()
        }
    }

    var durability: StorageDurability {
        switch backend {
        case .lmdb(let s): s.durability
        case .other(let s): s.durability
        }
    }

    var isClosed: Bool {
        switch backend {
        case .lmdb(let s): s.isClosed
        case .other(let s): s.isClosed
        }
    }

    func table(named name: String) -> Table {
        switch backend {
        case .lmdb(let s): s.table(named: name)
        case .other(let s): s.table(named: name)
        }
    }

    @inline(__always)
    func read<R>(_ body: (OpenedReadTransaction) throws -> R) throws -> R {
        switch backend {
        case .lmdb(let s): try s.read { try body(OpenedReadTransaction(lmdb: $0)) }
        case .other(let s): try s.read(body)
        }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (OpenedWriteTransaction) throws -> T) async throws -> T {
        switch backend {
        case .lmdb(let s): try await s.write { try body(OpenedWriteTransaction(lmdb: $0)) }
        case .other(let s): try await s.write(body)
        }
    }

    func writeAndWait<T>(_ body: @escaping (OpenedWriteTransaction) throws -> T) throws -> T {
        switch backend {
        case .lmdb(let s): try s.writeAndWait { try body(OpenedWriteTransaction(lmdb: $0)) }
        case .other(let s): try s.writeAndWait(body)
        }
    }

    func writeAloneAndWait<T>(_ body: @escaping (OpenedWriteTransaction) throws -> T) throws -> T {
        switch backend {
        case .lmdb(let s): try s.writeAloneAndWait { try body(OpenedWriteTransaction(lmdb: $0)) }
        case .other(let s): try s.writeAloneAndWait(body)
        }
    }

    func storeStatistics() throws -> StoreStatistics {
        switch backend {
        case .lmdb(let s): try s.storeStatistics()
        case .other(let s): try s.storeStatistics()
        }
    }

    func sync() throws {
        switch backend {
        case .lmdb(let s): try s.sync()
        case .other(let s): try s.sync()
        }
    }

    func backup(to directory: URL) throws {
        switch backend {
        case .lmdb(let s): try s.backup(to: directory)
        case .other(let s): try s.backup(to: directory)
        }
    }
}
