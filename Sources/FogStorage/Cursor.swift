internal import CLMDB

/// A position in a table, for ordered scans.
///
/// Obtain one from ``ReadTransaction/cursor(on:)``. A cursor belongs to its
/// transaction and must not outlive it; ``close()`` it when done (a cursor
/// of a read transaction is also closed when the transaction ends).
public final class Cursor {
    let handle: OpaquePointer
    unowned let transaction: ReadTransaction
    private var isClosed = false

    init(handle: OpaquePointer, transaction: ReadTransaction) {
        self.handle = handle
        self.transaction = transaction
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
    private func move(_ op: MDB_cursor_op, key: inout MDB_val, value: inout MDB_val) throws -> Bool {
        precondition(!isClosed, "FogStorage misuse: cursor used after close")
        let rc = mdb_cursor_get(handle, &key, &value, op)
        if rc == MDB_NOTFOUND { return false }
        try transaction.check(rc, "cursor move")
        return true
    }

    /// Visits entries within `range`, ascending or descending; `body` returns
    /// `false` to stop. Buffers are valid only during each call.
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
            if let lower = range.lower {
                found = try withMDBVal(lower) { k in
                    key = k
                    return try move(MDB_SET_RANGE, key: &key, value: &value)
                }
                if found, !range.lowerInclusive, compareBytes(key.buffer, lower) == 0 {
                    found = try move(MDB_NEXT, key: &key, value: &value)
                }
            } else {
                found = try move(MDB_FIRST, key: &key, value: &value)
            }
            while found {
                let k = key.buffer
                guard range.isBelowUpper(k) else { return }
                guard try body(k, value.buffer) else { return }
                found = try move(MDB_NEXT, key: &key, value: &value)
            }
        } else {
            if let upper = range.upper {
                found = try withMDBVal(upper) { k in
                    key = k
                    return try move(MDB_SET_RANGE, key: &key, value: &value)
                }
                if found {
                    // Positioned at the first key >= upper: step back unless it is
                    // equal and the bound is inclusive.
                    if !(range.upperInclusive && compareBytes(key.buffer, upper) == 0) {
                        found = try move(MDB_PREV, key: &key, value: &value)
                    }
                } else {
                    found = try move(MDB_LAST, key: &key, value: &value)
                }
            } else {
                found = try move(MDB_LAST, key: &key, value: &value)
            }
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
        let found = try withMDBVal(key) { kv in
            k = kv
            return try move(MDB_SET_RANGE, key: &k, value: &v)
        }
        return found ? Array(k.buffer) : nil
    }
}

@available(*, unavailable)
extension Cursor: Sendable {}
