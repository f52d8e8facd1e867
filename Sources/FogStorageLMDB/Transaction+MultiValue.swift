internal import CLMDB
internal import CLMDBGuard
import FogStorage

extension LMDBReadTransaction {
    /// Visits the (key, value) pairs of `table` within `range` that come strictly after
    /// `position` in the scan's direction; see ``LMDBCursor/scan(range:reverse:after:_:)``.
    /// Only for a table with a multi-value layout.
    public func scan(
        _ table: Table, range: ScanRange = .all, reverse: Bool = false, after position: (key: [UInt8], value: [UInt8]),
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let cursor = try self.cursor(on: table)
        defer { cursor.close() }
        try cursor.scan(range: range, reverse: reverse, after: position, body)
    }

    /// The number of values stored under `key` in `table`: 0 when the key is absent, at
    /// most 1 in a table without a multi-value layout.
    public func valueCount(forKey key: [UInt8], in table: Table) throws -> Int {
        let cursor = try self.cursor(on: table)
        defer { cursor.close() }
        return try cursor.valueCount(forKey: key)
    }
}

extension LMDBWriteTransaction {
    /// Adds the pair (`key`, `value`) to a table with a multi-value layout.
    ///
    /// - Parameter appending: Whether `value` is likely greater than every value of `key`
    ///   (a new, largest id). It is then appended to the key's values (`MDB_APPENDDUP`), so
    ///   that the pages of a key with many values fill up instead of being split in half.
    ///   When it is not greater, it is inserted where it belongs, at the cost of a second
    ///   search.
    /// - Returns: `false` when the pair was already there (nothing is written).
    /// - Throws: ``StorageError/incompatible`` for a table without sorted duplicates.
    @discardableResult
    public func addValue(_ value: [UInt8], forKey key: [UInt8], in table: Table, appending: Bool = false) throws -> Bool {
        guard try hasDuplicates(table) else { throw StorageError.incompatible }
        if appending {
            let rc = withMDBVal(key) { k in
                withMDBVal(value) { v in fog_mdb_put(txn, table.identifier, &k, &v, UInt32(MDB_APPENDDUP)) }
            }
            // `MDB_KEYEXIST`: not above the key's last value, or there; insert it normally.
            if rc != MDB_KEYEXIST {
                try check(rc, "insert into \(table)", keyCount: key.count)
                return true
            }
        }
        let rc = withMDBVal(key) { k in
            withMDBVal(value) { v in fog_mdb_put(txn, table.identifier, &k, &v, UInt32(MDB_NODUPDATA)) }
        }
        if rc == MDB_KEYEXIST { return false }
        try check(rc, "insert into \(table)", keyCount: key.count)
        return true
    }

    /// Adds the pair (`key`, `value`), which must sort after every pair of the table, to a
    /// table with a multi-value layout: for loading a table in order, which
    /// fills its pages instead of splitting them in half.
    /// - Throws: ``StorageError/keyExists`` when the pair is there or sorts before the last
    ///   value of its key; ``StorageError/incompatible`` for a table without sorted duplicates.
    public func appendValue(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws {
        guard try hasDuplicates(table) else { throw StorageError.incompatible }
        var rc = withMDBVal(key) { k in
            withMDBVal(value) { v in fog_mdb_put(txn, table.identifier, &k, &v, UInt32(MDB_APPEND)) }
        }
        if rc == MDB_KEYEXIST {
            // The key is not above the last key: another value of the last key.
            rc = withMDBVal(key) { k in
                withMDBVal(value) { v in fog_mdb_put(txn, table.identifier, &k, &v, UInt32(MDB_APPENDDUP)) }
            }
        }
        try check(rc, "append to \(table)", keyCount: key.count)
    }

    /// Removes the pair (`key`, `value`) from a table with
    /// a multi-value layout, leaving the key's other values.
    /// - Returns: whether the pair was there.
    /// - Throws: ``StorageError/incompatible`` for a table without sorted duplicates (where
    ///   LMDB would remove the key whatever its value).
    @discardableResult
    public func removeValue(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws -> Bool {
        guard try hasDuplicates(table) else { throw StorageError.incompatible }
        let rc = withMDBVal(key) { k in
            withMDBVal(value) { v in fog_mdb_del(txn, table.identifier, &k, &v) }
        }
        if rc == MDB_NOTFOUND { return false }
        try check(rc, "delete from \(table)", keyCount: key.count)
        return true
    }
}
