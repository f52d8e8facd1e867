internal import CLMDB
internal import CLMDBGuard
import FogStorage

extension LMDBCursor {
    /// Visits the (key, value) pairs within `range` that come strictly after `position`
    /// in the scan's direction: ascending, the pairs greater than it; with `reverse`, the
    /// pairs smaller than it, descending. `body` returns `false` to stop; buffers are valid
    /// only during each call.
    ///
    /// Pairs order by key, then by value (byte order both). This is how a scan resumes
    /// where an earlier one stopped, inside the values of a key. `position` need not be
    /// in the table; when it is outside `range` on the side the scan starts from, the
    /// scan starts at the range's bound. Only for a table with
    /// a multi-value layout; otherwise throws ``StorageError/incompatible``.
    public func scan(
        range: ScanRange, reverse: Bool, after position: (key: [UInt8], value: [UInt8]),
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        guard hasDuplicates else { throw StorageError.incompatible }
        let range = range.normalized
        // A position before the range's start: the whole range follows it.
        if !reverse, !range.isAboveLower(position.key) { return try scan(range: range, reverse: false, body) }
        if reverse, !range.isBelowUpper(position.key) { return try scan(range: range, reverse: true, body) }
        // An empty key is below every pair (LMDB refuses empty keys).
        if position.key.isEmpty {
            if reverse { return }
            return try scan(range: range, reverse: false, body)
        }
        var key = MDB_val()
        var value = MDB_val()
        var found: Bool
        // The first value of the position's key that is not below the position's value
        // (an empty value is below every value, and LMDB refuses empty values here).
        var atOrAfter = false
        if position.value.isEmpty {
            found = try move(atLeast: position.key, key: &key, value: &value)
            atOrAfter = found && compareBytes(key.buffer, position.key) == 0
        } else {
            atOrAfter = try withMDBVal(position.key) { k in
                try withMDBVal(position.value) { v in
                    key = k
                    value = v
                    return try move(MDB_GET_BOTH_RANGE, key: &key, value: &value)
                }
            }
            // Point `key` and `value` into the map rather than at the arrays.
            found = atOrAfter ? try move(MDB_GET_CURRENT, key: &key, value: &value) : false
        }
        if atOrAfter {
            // At the position's key, on its first value at or after the position's value.
            if reverse {
                found = try move(MDB_PREV, key: &key, value: &value)
            } else if compareBytes(value.buffer, position.value) == 0 {
                found = try move(MDB_NEXT, key: &key, value: &value)
            }
        } else {
            // Every value of the position's key is below its value, or the key is absent.
            found = try move(atLeast: position.key, key: &key, value: &value)
            let sameKey = found && compareBytes(key.buffer, position.key) == 0
            if !reverse {
                if sameKey { found = try move(MDB_NEXT_NODUP, key: &key, value: &value) }
            } else if sameKey {
                found = try move(MDB_LAST_DUP, key: &key, value: &value)
            } else {
                found = try move(found ? MDB_PREV : MDB_LAST, key: &key, value: &value)
            }
        }
        try visit(from: found, key: &key, value: &value, range: range, reverse: reverse, body)
    }

    /// The number of values stored under `key`: 0 when the key is absent, at most 1 in a
    /// table without a multi-value layout. Leaves the cursor at the key.
    public func valueCount(forKey key: [UInt8]) throws -> Int {
        guard !key.isEmpty else { return 0 }
        var k = MDB_val()
        var v = MDB_val()
        let found = try withMDBVal(key) { kv in
            k = kv
            return try move(MDB_SET, key: &k, value: &v)
        }
        guard found else { return 0 }
        guard hasDuplicates else { return 1 }
        var count = 0
        try transaction.check(fog_mdb_cursor_count(handle, &count), "count the values of a key")
        return count
    }
}
