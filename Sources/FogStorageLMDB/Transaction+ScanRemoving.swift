internal import CLMDB
internal import CLMDBGuard
import FogStorage

extension LMDBWriteTransaction {
    /// Visits the entries of the single-value `table` within `range` in ascending key order
    /// and removes those `body` answers ``ScanRemoval/remove`` for through the scan's own
    /// cursor (`mdb_cursor_del`), so a removal costs no search from the root; after it the
    /// cursor stands on the next entry, which `MDB_NEXT` then returns. Fulfils
    /// ``StorageWriteTransaction/scanRemoving(_:range:_:)``.
    /// - Throws: ``StorageError/incompatible`` for a multi-value table.
    @discardableResult
    public func scanRemoving(
        _ table: Table, range: ScanRange,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> ScanRemoval
    ) throws -> Int {
        let cursor = try self.cursor(on: table)
        defer { cursor.close() }
        guard !cursor.hasDuplicates else { throw StorageError.incompatible }
        var key = MDB_val()
        var value = MDB_val()
        let range = range.normalized
        var found = try cursor.moveToFirst(of: range, key: &key, value: &value)
        var removed = 0
        while found {
            let k = key.buffer
            guard range.isBelowUpper(k) else { break }
            switch try body(k, value.buffer) {
            case .keep: break
            case .remove:
                try checkUsable()
                try check(fog_mdb_cursor_del(cursor.handle, 0), "delete from \(table)")
                removed += 1
            case .stop: return removed
            }
            found = try cursor.move(MDB_NEXT, key: &key, value: &value)
        }
        return removed
    }
}
