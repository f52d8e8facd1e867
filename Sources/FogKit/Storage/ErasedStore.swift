import FogStorage
import Foundation

/// A store of a backend FogKit does not link, with its transactions wrapped as
/// ``OpenedReadTransaction`` and ``OpenedWriteTransaction``.
protocol ErasedStore: AnyObject, Sendable {
    func close()
    var durability: StorageDurability { get }
    var isClosed: Bool { get }
    func table(named name: String) -> Table
    func read<R>(_ body: (OpenedReadTransaction) throws -> R) throws -> R
    func write<T: Sendable>(_ body: @escaping @Sendable (OpenedWriteTransaction) throws -> T) async throws -> T
    func writeAndWait<T>(_ body: @escaping (OpenedWriteTransaction) throws -> T) throws -> T
    func writeAloneAndWait<T>(_ body: @escaping (OpenedWriteTransaction) throws -> T) throws -> T
    func storeStatistics() throws -> StoreStatistics
    func sync() throws
    func backup(to directory: URL) throws
}

/// Wraps `store` (its concrete type opened from the existential).
func erase(_ store: any KeyValueStore) -> any ErasedStore {
    func box<S: KeyValueStore>(_ s: S) -> any ErasedStore { ErasedStoreBox(s) }
    return box(store)
}

/// ``ErasedStore`` over a store of type `S`.
private final class ErasedStoreBox<S: KeyValueStore>: ErasedStore {
    let store: S
    init(_ store: S) { self.store = store }

    func close() { store.close() }
    var durability: StorageDurability { store.durability }
    var isClosed: Bool { store.isClosed }
    func table(named name: String) -> Table { store.table(named: name) }

    func read<R>(_ body: (OpenedReadTransaction) throws -> R) throws -> R {
        try store.read { try body(OpenedReadTransaction(other: ErasedRead($0))) }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (OpenedWriteTransaction) throws -> T) async throws -> T {
        try await store.write { try body(OpenedWriteTransaction(other: ErasedWrite($0))) }
    }

    func writeAndWait<T>(_ body: @escaping (OpenedWriteTransaction) throws -> T) throws -> T {
        try store.writeAndWait { try body(OpenedWriteTransaction(other: ErasedWrite($0))) }
    }

    func writeAloneAndWait<T>(_ body: @escaping (OpenedWriteTransaction) throws -> T) throws -> T {
        try store.writeAloneAndWait { try body(OpenedWriteTransaction(other: ErasedWrite($0))) }
    }

    func storeStatistics() throws -> StoreStatistics { try store.storeStatistics() }
    func sync() throws { try store.sync() }
    func backup(to directory: URL) throws { try store.backup(to: directory) }
}

/// A read transaction of another backend (a class, so that the transaction enum stays one
/// word wide).
final class ErasedRead {
    let txn: any StorageReadTransaction
    init(_ txn: any StorageReadTransaction) { self.txn = txn }
}

/// A write transaction of another backend, with its read view.
final class ErasedWrite {
    let txn: any StorageWriteTransaction
    let readView: ErasedRead
    init(_ txn: some StorageWriteTransaction) {
        self.txn = txn
        self.readView = ErasedRead(txn.readView)
    }
}
