import Foundation

/// An ordered key-value store: named tables of byte-string keys kept in byte order,
/// read in snapshots and written in atomic transactions.
///
/// This is the whole of what FogKit asks of its storage. A backend (LMDB today, in
/// `FogStorageLMDB`) implements it; nothing above it names the backend's own types
/// or errors. The contract assumes no memory map, no single process and no fixed size:
///
/// - Buffers handed to closures are valid only during the call; copy out what you keep.
/// - A read transaction sees one consistent snapshot: the last commit when it began.
/// - A write transaction is atomic: everything it wrote becomes visible at once when it
///   commits, and nothing does when its body throws. It sees its own writes.
/// - Failures are ``StorageError``s.
/// - Keys are at most ``maximumKeySize`` bytes, and not empty unless ``allowsEmptyKeys``.
///
/// Transactions are values of the associated types, so code written against this
/// protocol is generic and the compiler specialises it for the backend.
public protocol KeyValueStore: AnyObject, Sendable {
    /// A read-only snapshot.
    associatedtype ReadTransaction: StorageReadTransaction
    /// A read-write transaction; its ``StorageWriteTransaction/readView`` is a read
    /// transaction that sees its writes.
    associatedtype WriteTransaction: StorageWriteTransaction where WriteTransaction.ReadView == ReadTransaction

    /// The longest key the store accepts, in bytes (and the longest value of a
    /// ``TableLayout/multiValue(fixedSizeValues:)`` table).
    static var maximumKeySize: Int { get }
    /// Whether a key may be empty. When not, writing or reading one throws
    /// ``StorageError/emptyKey``, and an empty bound of a ``ScanRange`` is below every key.
    static var allowsEmptyKeys: Bool { get }

    /// Whether `location` holds a store of this backend (without opening it).
    static func storeExists(at location: URL) -> Bool

    /// Opens the store at `location` (a directory for a local store, an address for a
    /// remote one) with the tables of `configuration`, creating what is missing when the
    /// configuration allows it.
    ///
    /// - Throws: ``StorageError/notFound`` for a missing table the configuration does
    ///   not create; ``StorageError/incompatible`` for data the backend cannot read.
    static func open(at location: URL, configuration: StoreConfiguration) throws -> Self

    /// The address of a store that belongs with the one at `location`, named `name` (see
    /// ``StoreLocation/appending(_:)``). A default gives a local store's subfolder.
    static func location(_ location: URL, appending name: String) -> URL

    /// `location` for messages, without secrets. A default gives a file URL's path.
    static func displayName(of location: URL) -> String

    /// Balances one ``open(at:configuration:)``; the last one finishes the queued writes
    /// and releases the store. Later calls throw ``StorageError/closed``.
    func close()

    /// The durability this store's commits get now. Opens of one store in one process may ask
    /// for different durabilities; a store that shares its commits among them gives every
    /// commit the strongest one asked for (`none` < `relaxed` < `durable`), so this is at
    /// least what the caller's configuration asked for.
    var durability: StorageDurability { get }

    /// Whether ``close()`` has closed the store.
    var isClosed: Bool { get }

    /// The table named `name`, which must be one of the configuration's tables.
    func table(named name: String) -> Table

    /// Runs `body` in a read-only snapshot on the calling thread. Keep it short and
    /// synchronous, and do not wait for a write inside it.
    func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R

    /// Runs `body` in a write transaction and commits it.
    ///
    /// Writes issued concurrently may share one commit (group commit), each in a nested
    /// transaction of its own, so that one request's failure does not touch the others.
    /// If `body` throws, nothing it wrote is kept and the error is rethrown. `body` may
    /// run more than once (a store may replay a transaction), so it must keep its
    /// effects inside the transaction.
    func write<T: Sendable>(_ body: @escaping @Sendable (WriteTransaction) throws -> T) async throws -> T

    /// The blocking form of ``write(_:)``. Do not call it from a read or a write.
    func writeAndWait<T>(_ body: @escaping (WriteTransaction) throws -> T) throws -> T

    /// Runs `body` in a write transaction of its own (not grouped with other requests,
    /// not nested), blocking until the commit: the only kind of transaction in which
    /// ``StorageWriteTransaction/replaceWithEmpty(_:)`` may run. Do not call it from a
    /// read or a write.
    func writeAloneAndWait<T>(_ body: @escaping (WriteTransaction) throws -> T) throws -> T

    /// Current facts about the store.
    func storeStatistics() throws -> StoreStatistics

    /// Forces committed data to stable storage, whatever the durability setting.
    func sync() throws

    /// Writes a consistent copy of the store, as of one commit, into the empty or missing
    /// directory `directory`, while readers and writers go on. ``open(at:configuration:)``
    /// opens the copy.
    func backup(to directory: URL) throws
}

/// A read-only view of a store: one consistent snapshot.
///
/// Obtain one from ``KeyValueStore/read(_:)``. A transaction must not escape the
/// closure that received it. Buffers are valid only inside the closures they are
/// handed to.
public protocol StorageReadTransaction {
    /// Whether the transaction only reads (`false` for the read view of a write, whose
    /// reads include uncommitted writes).
    var isReadOnly: Bool { get }

    /// Names the snapshot a read-only transaction reads: two read-only transactions of one
    /// open store with the same identifier see the same data, so what one read may stand for
    /// the other's read. `nil` when the backend cannot tell, and for the read view of a write
    /// (its reads include its own writes). The default is `nil`.
    var snapshotID: UInt64? { get }

    /// Calls `body` with the value stored under `key` and returns its result, or returns
    /// `nil` when the key is absent. In a multi-value table, `body` gets the key's first
    /// value. The buffer is valid only inside `body`.
    func withValue<R>(forKey key: [UInt8], in table: Table, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R?

    /// ``withValue(forKey:in:_:)`` for a key given as raw bytes (built on the stack).
    func withValue<R>(
        forKey key: UnsafeRawBufferPointer, in table: Table, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R?

    /// The value stored under `key`, copied out, or `nil` when the key is absent.
    func value(forKey key: [UInt8], in table: Table) throws -> [UInt8]?

    /// Whether `key` is present in `table`.
    func contains(_ key: [UInt8], in table: Table) throws -> Bool

    /// Visits the entries of `table` within `range`, in key order or in reverse.
    ///
    /// `body` receives the key and value buffers (valid only during the call) and returns
    /// `false` to stop. In a multi-value table it receives every (key, value) pair, the
    /// values of a key in order (in reverse order when `reverse`); the bounds apply to
    /// keys, so an excluded bound excludes all the values of that key.
    func scan(
        _ table: Table, range: ScanRange, reverse: Bool,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws

    /// Visits the (key, value) pairs of a multi-value `table` within `range` that come
    /// strictly after `position` in the scan's direction: ascending, the pairs greater
    /// than it; with `reverse`, the pairs smaller than it, descending. Pairs order by key,
    /// then by value. This is how a scan resumes inside the values of a key. `position`
    /// need not be in the table.
    ///
    /// - Throws: ``StorageError/incompatible`` for a single-value table.
    func scan(
        _ table: Table, range: ScanRange, reverse: Bool, after position: (key: [UInt8], value: [UInt8]),
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws

    /// The number of values stored under `key`: 0 when the key is absent, at most 1 in a
    /// single-value table.
    func valueCount(forKey key: [UInt8], in table: Table) throws -> Int

    /// The number of entries in `table` (in a multi-value table, of (key, value) pairs).
    func count(of table: Table) throws -> Int

    /// The layout `table` has in the store, which is the one it was created with, whatever
    /// the configuration says now.
    func layout(of table: Table) throws -> TableLayout
}

extension StorageReadTransaction {
    /// No snapshot identifier: every read goes to the store.
    public var snapshotID: UInt64? { nil }

    /// Visits every entry of `table` within `range` in key order; see
    /// ``scan(_:range:reverse:_:)``.
    @inlinable
    public func scan(
        _ table: Table, range: ScanRange = .all,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try scan(table, range: range, reverse: false, body)
    }

    /// Visits the pairs of a multi-value table after `position` in key order; see
    /// ``scan(_:range:reverse:after:_:)``.
    @inlinable
    public func scan(
        _ table: Table, range: ScanRange = .all, after position: (key: [UInt8], value: [UInt8]),
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try scan(table, range: range, reverse: false, after: position, body)
    }
}

/// A read-write transaction.
///
/// Obtain one from ``KeyValueStore/write(_:)`` and its siblings. Everything written
/// becomes visible to readers atomically when the transaction commits; if the closure
/// throws, nothing it wrote is kept. Its reads see its own writes.
public protocol StorageWriteTransaction: StorageReadTransaction {
    /// The store's read transaction type.
    associatedtype ReadView: StorageReadTransaction

    /// This transaction as a read transaction, which sees its uncommitted writes and
    /// reports ``StorageReadTransaction/isReadOnly`` as `false`. Valid as long as this
    /// transaction.
    var readView: ReadView { get }

    /// Stores `value` under `key`, replacing any value there. In a multi-value table,
    /// adds the pair (key, value) instead (nothing changes when the pair is there).
    func put(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws

    /// Stores a value of `count` bytes under `key` in a single-value table, letting `fill`
    /// write the bytes in place; `fill` must write exactly `count` bytes. With `append`,
    /// the caller promises that `key` sorts after every key of the table (a hint a store
    /// may use to fill its pages; it may throw ``StorageError/keyExists`` otherwise).
    func put(
        count: Int, forKey key: [UInt8], in table: Table, append: Bool, _ fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws

    /// Stores `value` under `key` only when the key is absent (with any value, in a
    /// multi-value table). Returns `false` when the key was already present.
    @discardableResult
    func insert(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws -> Bool

    /// Removes `key` from `table`, with all its values in a multi-value table. Returns
    /// whether the key was present.
    @discardableResult
    func delete(_ key: [UInt8], in table: Table) throws -> Bool

    /// Removes every key of `table` within `range`, with all their values. Returns how
    /// many entries were removed (in a multi-value table, how many pairs).
    @discardableResult
    func deleteAll(in table: Table, range: ScanRange) throws -> Int

    /// Visits the entries of the single-value `table` within `range` in ascending key order,
    /// and removes each one `body` answers ``ScanRemoval/remove`` for where the scan stands,
    /// without a search of the table per entry: for a cleanup pass that removes many scattered
    /// entries. ``ScanRemoval/stop`` ends the scan and keeps that entry. The buffers are valid
    /// only during each call; `body` may read other tables but must not read or write `table`.
    /// When `body` throws, the scan ends with its error, and the entries removed before may
    /// or may not be gone (LMDB removes as it goes; the default removes after the scan): the
    /// error must end the write, whose transaction then keeps none of it.
    /// - Returns: how many entries were removed.
    /// - Throws: ``StorageError/incompatible`` for a multi-value table.
    @discardableResult
    func scanRemoving(
        _ table: Table, range: ScanRange,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> ScanRemoval
    ) throws -> Int

    /// Removes every entry of `table`; the table itself, and its layout, stay.
    func clear(_ table: Table) throws

    /// Adds the pair (`key`, `value`) to a multi-value table.
    ///
    /// - Parameter appending: Whether `value` is likely greater than every value of `key`
    ///   (a hint a store may use to fill its pages; any value is accepted).
    /// - Returns: `false` when the pair was already there.
    /// - Throws: ``StorageError/incompatible`` for a single-value table.
    @discardableResult
    func addValue(_ value: [UInt8], forKey key: [UInt8], in table: Table, appending: Bool) throws -> Bool

    /// Adds the pair (`key`, `value`), which must sort after every pair of the
    /// multi-value `table`: for loading a table in order.
    /// - Throws: ``StorageError/keyExists`` when the pair is there or sorts before the last
    ///   value of its key; ``StorageError/incompatible`` for a single-value table.
    func appendValue(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws

    /// Removes the pair (`key`, `value`) from a multi-value table, leaving the key's other
    /// values. Returns whether the pair was there.
    /// - Throws: ``StorageError/incompatible`` for a single-value table.
    @discardableResult
    func removeValue(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws -> Bool

    /// Replaces `table` with an empty table of the layout the store's configuration gives
    /// it: the way to change the layout of an existing table. The ``Table`` value stays
    /// valid. Only in a transaction of ``KeyValueStore/writeAloneAndWait(_:)``, and only
    /// before the store is handed out (other threads must not use the table meanwhile),
    /// as when migrating a format.
    func replaceWithEmpty(_ table: Table) throws

    /// Holds `work` until the end of the request: it runs in this transaction after the
    /// request's body returns and before the commit. When requests share a transaction (a
    /// group commit run directly), it runs once after the last of them, and a later work
    /// under the same `key`, of this request or of a later one, replaces it.
    ///
    /// For a write that only the transaction's final state needs, such as a log entry that
    /// moves to each latest change: a group of requests then writes it once. Since the works
    /// it replaced never run, a work reads what it builds on when it runs, not when it was
    /// held. The works run in the order of their latest registration; one that throws fails
    /// the request as its body would have, and stays held with the works after it.
    func writeBeforeCommit(key: [UInt8], _ work: @escaping (Self) throws -> Void)

    /// Runs now, in this transaction, the works that ``writeBeforeCommit(key:_:)`` holds
    /// (those of requests grouped with this one included): before a write that must come
    /// after them.
    func runWritesBeforeCommit() throws
}

extension StorageWriteTransaction {
    /// ``scanRemoving(_:range:_:)`` for a store without a cursor that removes: the keys
    /// `body` chose are gathered during the scan and deleted one by one after it.
    @discardableResult
    public func scanRemoving(
        _ table: Table, range: ScanRange,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> ScanRemoval
    ) throws -> Int {
        guard try layout(of: table) == .singleValue else { throw StorageError.incompatible }
        var chosen: [[UInt8]] = []
        try scan(table, range: range) { key, value in
            switch try body(key, value) {
            case .keep: return true
            case .remove:
                chosen.append(Array(key))
                return true
            case .stop: return false
            }
        }
        for key in chosen { try delete(key, in: table) }
        return chosen.count
    }

    /// ``put(count:forKey:in:append:_:)`` without the append hint.
    @inlinable
    public func put(count: Int, forKey key: [UInt8], in table: Table, _ fill: (UnsafeMutableRawBufferPointer) -> Void) throws {
        try put(count: count, forKey: key, in: table, append: false, fill)
    }

    /// ``addValue(_:forKey:in:appending:)`` without the appending hint.
    @discardableResult
    @inlinable
    public func addValue(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws -> Bool {
        try addValue(value, forKey: key, in: table, appending: false)
    }
}
