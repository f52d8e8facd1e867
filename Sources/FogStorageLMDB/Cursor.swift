internal import CLMDB
internal import CLMDBGuard
import FogStorage

/// A position in a table, for ordered scans.
///
/// Obtain one from ``LMDBReadTransaction/cursor(on:)``. A cursor belongs to its
/// transaction and must not outlive it; ``close()`` it when done (a cursor
/// of a read transaction is also closed when the transaction ends).
public final class LMDBCursor {
    let handle: OpaquePointer
    unowned let transaction: LMDBReadTransaction
    /// Whether the table has a multi-value layout: a key then holds several
    /// values, which the moves visit one by one.
    let hasDuplicates: Bool
    private var isClosed = false

    init(handle: OpaquePointer, transaction: LMDBReadTransaction, hasDuplicates: Bool) {
        self.handle = handle
        self.transaction = transaction
        self.hasDuplicates = hasDuplicates
    }

    /// Closes the cursor. Safe to call more than once.
    public func close() {
        if !isClosed {
            isClosed = true
            mdb_cursor_close(handle)
        }
    }

    deinit { close() }

    @inline(__always)
    func move(_ op: MDB_cursor_op, key: inout MDB_val, value: inout MDB_val) throws -> Bool {
        precondition(!isClosed, "FogStorage misuse: cursor used after close")
        try transaction.checkUsable()
        let rc = fog_mdb_cursor_get(handle, &key, &value, op)
        if rc == MDB_NOTFOUND { return false }
        try transaction.check(rc, "cursor move")
        return true
    }

    /// Moves to the first key equal to or greater than `bound` (to its first value).
    @inline(__always)
    func move(atLeast bound: [UInt8], key: inout MDB_val, value: inout MDB_val) throws -> Bool {
        try withMDBVal(bound) { k in
            key = k
            return try move(MDB_SET_RANGE, key: &key, value: &value)
        }
    }

    /// Visits entries within `range`, ascending or descending; `body` returns
    /// `false` to stop. Buffers are valid only during each call.
    ///
    /// In a table with a multi-value layout the scan visits every
    /// (key, value) pair: the values of a key in order (in reverse order when
    /// `reverse`). The bounds apply to keys, so an excluded bound excludes all the
    /// values of that key.
    public func scan(
        range: ScanRange, reverse: Bool,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var key = MDB_val()
        var value = MDB_val()
        var found: Bool
        // LMDB refuses empty keys; an empty bound is below every key.
        let range = range.normalized
        if reverse, let upper = range.upper, upper.isEmpty { return }
        if !reverse {
            found = try moveToFirst(of: range, key: &key, value: &value)
        } else {
            if let upper = range.upper {
                found = try move(atLeast: upper, key: &key, value: &value)
                if found {
                    // Positioned at the first key >= upper: step back unless it is
                    // equal and the bound is inclusive (then start at its last value).
                    if range.upperInclusive && compareBytes(key.buffer, upper) == 0 {
                        if hasDuplicates { found = try move(MDB_LAST_DUP, key: &key, value: &value) }
                    } else {
                        found = try move(MDB_PREV, key: &key, value: &value)
                    }
                } else {
                    found = try move(MDB_LAST, key: &key, value: &value)
                }
            } else {
                found = try move(MDB_LAST, key: &key, value: &value)
            }
        }
        try visit(from: found, key: &key, value: &value, range: range, reverse: reverse, body)
    }

    /// Moves to the first entry of the normalized `range` in ascending order (its lower
    /// bound's first entry, or the one after when the bound is excluded); `false` when no
    /// key is at or above the bound.
    @inline(__always)
    func moveToFirst(of range: ScanRange, key: inout MDB_val, value: inout MDB_val) throws -> Bool {
        guard let lower = range.lower else { return try move(MDB_FIRST, key: &key, value: &value) }
        let found = try move(atLeast: lower, key: &key, value: &value)
        if found, !range.lowerInclusive, compareBytes(key.buffer, lower) == 0 {
            return try move(hasDuplicates ? MDB_NEXT_NODUP : MDB_NEXT, key: &key, value: &value)
        }
        return found
    }

    /// Visits the entry the cursor is at (when `found`) and the ones after it in the
    /// scan's direction, while they are within `range`.
    @inline(__always)
    func visit(
        from found: Bool, key: inout MDB_val, value: inout MDB_val, range: ScanRange, reverse: Bool,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var found = found
        if !reverse {
            while found {
                let k = key.buffer
                guard range.isBelowUpper(k) else { return }
                guard try body(k, value.buffer) else { return }
                found = try move(MDB_NEXT, key: &key, value: &value)
            }
        } else {
            while found {
                let k = key.buffer
                guard range.isAboveLower(k) else { return }
                guard try body(k, value.buffer) else { return }
                found = try move(MDB_PREV, key: &key, value: &value)
            }
        }
    }

    /// Moves to the first key equal to or greater than `key` and returns a copy of
    /// that key, or `nil` when every key is smaller.
    public func seek(atLeast key: [UInt8]) throws -> [UInt8]? {
        var k = MDB_val()
        var v = MDB_val()
        if key.isEmpty {
            return try move(MDB_FIRST, key: &k, value: &v) ? Array(k.buffer) : nil
        }
        return try move(atLeast: key, key: &k, value: &v) ? Array(k.buffer) : nil
    }
}

@available(*, unavailable)
extension LMDBCursor: Sendable {}
