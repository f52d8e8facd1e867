internal import CLMDB
internal import CLMDBGuard
import FogStorage
import Foundation

/// A read-only snapshot of an ``LMDBStore``.
///
/// Obtain one from ``LMDBStore/read(_:)``. The transaction sees the state of
/// the last commit when it began, whatever writers do meanwhile. Byte buffers
/// handed to closures point into the memory map and are valid only inside the
/// closure: copy out what you keep. A transaction must not escape the closure
/// that received it, and is not `Sendable`.
public class LMDBReadTransaction {
    let txn: OpaquePointer
    /// Not retained: a transaction never outlives its environment (it must not escape the
    /// closure that received it), and the environment keeps its reset read transactions,
    /// objects included, for reuse (``LMDBStore/read(_:)``), which a strong reference back
    /// would make a cycle.
    unowned(unsafe) let environment: LMDBStore
    /// Set when an LMDB call reported that the map is full; the writer then grows
    /// the map and retries the batch, whatever the caller did with the error.
    var sawMapFull = false
    /// Set when a guarded LMDB call stopped on a damaged page: LMDB's state for the
    /// transaction is then undefined, so every later call throws instead of reaching LMDB,
    /// and the transaction can only be rolled back.
    var isDamaged = false
    /// The first failure an LMDB call of the transaction reported (other than "not found" and
    /// "exists"): LMDB then refuses the transaction (`MDB_BAD_TXN`), which is reported as this
    /// failure, its cause.
    var firstFailure: StorageError?
    /// Whether the transaction only reads (`false` for a ``LMDBWriteTransaction``).
    public let isReadOnly: Bool

    /// The id of the commit a read-only transaction reads (`mdb_txn_id`), which every process
    /// sharing the environment numbers alike; `nil` for a write's read view.
    public var snapshotID: UInt64? { isReadOnly ? UInt64(mdb_txn_id(txn)) : nil }

    init(txn: OpaquePointer, environment: LMDBStore, isReadOnly: Bool = true) {
        self.txn = txn
        self.environment = environment
        self.isReadOnly = isReadOnly
    }

    /// Forgets what the transaction's calls reported, before a read renews it (`mdb_txn_renew`).
    func prepareForReuse() {
        sawMapFull = false
        isDamaged = false
        firstFailure = nil
    }

    /// Throws the ``StorageError`` for a failed LMDB call; `keyCount` tells a bad key size
    /// from a bad value size.
    @inline(__always)
    func check(_ code: Int32, _ what: @autoclosure () -> String, keyCount: Int? = nil) throws(StorageError) {
        if code == 0 { return }
        if code == MDB_MAP_FULL { sawMapFull = true }
        if code == FOG_MDB_DAMAGED { isDamaged = true }
        if code == MDB_BAD_TXN {
            // After a map-full error that the caller swallowed, LMDB refuses the
            // transaction; report it as map full so the body stops and is replayed.
            if sawMapFull { throw .full }
            // Otherwise the transaction failed before: report that cause. With no failure
            // reported before, LMDB met a damaged page and reported it as the end of the data
            // (`MDB_NOTFOUND`) while marking the transaction failed.
            throw firstFailure
                ?? .corrupted("LMDB gave up on the transaction after meeting a damaged page (MDB_BAD_TXN in \(what()))")
        }
        do {
            try lmdbCheck(code, what(), keyCount: keyCount)
        } catch {
            if firstFailure == nil, code != MDB_NOTFOUND, code != MDB_KEYEXIST { firstFailure = error }
            throw error
        }
    }

    /// Throws the damage a guarded call met earlier in this transaction, before another
    /// call reaches LMDB's undefined state.
    @inline(__always)
    func checkUsable() throws(StorageError) {
        if isDamaged { throw LMDBError.damaged.storageError }
    }

    /// Calls `body` with the value stored under `key`, or returns `nil` when the key
    /// is absent. The buffer is valid only inside `body`.
    @inline(__always)
    public func withValue<R>(
        forKey key: [UInt8], in table: Table, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        try checkUsable()
        var data = MDB_val()
        let rc = withMDBVal(key) { k in fog_mdb_get(txn, table.identifier, &k, &data) }
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "get from \(table)", keyCount: key.count)
        return try body(data.buffer)
    }

    /// Calls `body` with the value stored under `key`, given as raw bytes (for keys built
    /// on the stack), or returns `nil` when the key is absent.
    @inline(__always)
    public func withValue<R>(
        forKey key: UnsafeRawBufferPointer, in table: Table, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        try checkUsable()
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var data = MDB_val()
        let rc = fog_mdb_get(txn, table.identifier, &k, &data)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "get from \(table)", keyCount: key.count)
        return try body(data.buffer)
    }

    /// The value stored under `key`, copied out, or `nil` when the key is absent.
    public func value(forKey key: [UInt8], in table: Table) throws -> [UInt8]? {
        try withValue(forKey: key, in: table) { Array($0) }
    }

    /// Whether `key` is present in `table`.
    public func contains(_ key: [UInt8], in table: Table) throws -> Bool {
        try withValue(forKey: key, in: table) { _ in true } ?? false
    }

    /// Opens a cursor over `table`, valid until the transaction ends.
    public func cursor(on table: Table) throws -> LMDBCursor {
        try checkUsable()
        let duplicates = try hasDuplicates(table)
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, table.identifier, &cursor), "open cursor on \(table)")
        return LMDBCursor(handle: cursor!, transaction: self, hasDuplicates: duplicates)
    }

    /// Visits the entries of `table` within `range`, in key order or in reverse.
    ///
    /// `body` receives the key and value buffers (valid only during the call) and
    /// returns `false` to stop. In a table with a multi-value layout it
    /// receives every (key, value) pair, values in order within a key (see
    /// ``LMDBCursor/scan(range:reverse:_:)``). Fulfils
    /// ``StorageReadTransaction/scan(_:range:reverse:_:)``.
    public func scan(
        _ table: Table, range: ScanRange = .all, reverse: Bool = false,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let cursor = try self.cursor(on: table)
        defer { cursor.close() }
        try cursor.scan(range: range, reverse: reverse, body)
    }

    /// The number of entries in `table` (in a table with a multi-value layout,
    /// of (key, value) pairs).
    public func count(of table: Table) throws -> Int {
        try checkUsable()
        var stat = MDB_stat()
        try check(mdb_stat(txn, table.identifier, &stat), "stat \(table)")
        return stat.ms_entries
    }
}

@available(*, unavailable)
extension LMDBReadTransaction: Sendable {}

/// A read-write transaction, run on the environment's writer thread.
///
/// Obtain one from ``LMDBStore/write(_:)``. Everything written becomes visible
/// to readers atomically when the transaction commits; if the closure throws,
/// nothing it wrote is kept.
public final class LMDBWriteTransaction: LMDBReadTransaction {
    /// Whether the transaction runs alone (``LMDBStore/writeAloneAndWait(_:)``): only
    /// then may it ``replaceWithEmpty(_:)`` a table.
    var isAlone = false
    /// The tables ``replaceWithEmpty(_:)`` dropped: if the transaction is rolled back, their
    /// handles must be opened again.
    var recreatedTables: [Table] = []
    /// The works held until the end of the request (or, run directly in a group, of the
    /// group's last request), shared by the requests of the group; `nil` until one is held.
    var writesBeforeCommit: WritesBeforeCommit<LMDBWriteTransaction>?

    /// This transaction, as the read transaction it also is.
    @inlinable public var readView: LMDBReadTransaction { self }

    /// Stores `value` under `key`, replacing any value there. In a table with
    /// a multi-value layout, adds the pair (key, value) to the key's values
    /// instead (nothing changes when the pair is there).
    public func put(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws {
        try checkUsable()
        let rc = withMDBVal(key) { k in
            withMDBVal(value) { v in fog_mdb_put(txn, table.identifier, &k, &v, 0) }
        }
        try check(rc, "put into \(table)", keyCount: key.count)
    }

    /// Stores a value of `count` bytes under `key`, letting `fill` write the bytes in
    /// place (no intermediate copy). `fill` must write exactly `count` bytes.
    public func put(
        count: Int, forKey key: [UInt8], in table: Table, append: Bool,
        _ fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws {
        try checkUsable()
        var data = MDB_val(mv_size: count, mv_data: nil)
        let flags = UInt32(MDB_RESERVE) | (append ? UInt32(MDB_APPEND) : 0)
        let rc = withMDBVal(key) { k in fog_mdb_put(txn, table.identifier, &k, &data, flags) }
        try check(rc, "put into \(table)", keyCount: key.count)
        fill(UnsafeMutableRawBufferPointer(start: data.mv_data, count: count))
    }

    /// Stores `value` under `key` only when the key is absent (with any value, in a table
    /// with a multi-value layout; see ``addValue(_:forKey:in:appending:)``).
    /// - Returns: `false` when the key was already present (nothing is written).
    @discardableResult
    public func insert(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws -> Bool {
        try checkUsable()
        let rc = withMDBVal(key) { k in
            withMDBVal(value) { v in fog_mdb_put(txn, table.identifier, &k, &v, UInt32(MDB_NOOVERWRITE)) }
        }
        if rc == MDB_KEYEXIST { return false }
        try check(rc, "insert into \(table)", keyCount: key.count)
        return true
    }

    /// Removes `key` from `table`, with all its values in a table with
    /// a multi-value layout.
    /// - Returns: whether the key was present.
    @discardableResult
    public func delete(_ key: [UInt8], in table: Table) throws -> Bool {
        try checkUsable()
        let rc = withMDBVal(key) { k in fog_mdb_del(txn, table.identifier, &k, nil) }
        if rc == MDB_NOTFOUND { return false }
        try check(rc, "delete from \(table)", keyCount: key.count)
        return true
    }

    /// Removes every key of `table` within `range`, with all their values.
    /// - Returns: how many entries were removed (in a table with
    ///   a multi-value layout, how many (key, value) pairs).
    ///
    /// The keys are gathered and deleted in chunks of at most 1,024 (each chunk scanned again
    /// from the start of the range, where the deleted keys no longer are), so memory does not
    /// grow with the range, however many keys it holds.
    @discardableResult
    public func deleteAll(in table: Table, range: ScanRange) throws -> Int {
        let chunk = 1_024
        var entries = 0
        while true {
            var keys: [[UInt8]] = []
            var more = false
            try scan(table, range: range) { key, _ in
                // The values of one key come one after the other.
                if keys.last.map({ compareBytes(key, $0) != 0 }) ?? true {
                    if keys.count == chunk {
                        more = true
                        return false
                    }
                    keys.append(Array(key))
                }
                entries += 1
                return true
            }
            for key in keys { try delete(key, in: table) }
            if !more { return entries }
        }
    }

    /// Removes every entry of `table`; the table itself stays.
    public func clear(_ table: Table) throws {
        try checkUsable()
        try check(fog_mdb_drop(txn, table.identifier, 0), "clear \(table)")
    }
}
