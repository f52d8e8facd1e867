internal import CLMDB
internal import CLMDBGuard
import FogStorage

extension LMDBReadTransaction {
    /// The layout `table` was created with, which LMDB keeps whatever layout later opens
    /// ask for.
    public func layout(of table: Table) throws -> TableLayout {
        var flags: UInt32 = 0
        try check(mdb_dbi_flags(txn, table.identifier, &flags), "read the flags of \(table)")
        return TableLayout(lmdbFlags: flags)
    }

    /// Whether `table` has a multi-value layout (LMDB's sorted duplicates).
    @inline(__always)
    func hasDuplicates(_ table: Table) throws -> Bool {
        try checkUsable()
        var flags: UInt32 = 0
        try check(mdb_dbi_flags(txn, table.identifier, &flags), "read the flags of \(table)")
        return flags & UInt32(MDB_DUPSORT) != 0
    }
}

extension LMDBWriteTransaction {
    /// Deletes `table` and creates it again, empty, with the layout the environment's
    /// configuration gives it (``LMDBStore/Configuration/tableLayouts``): the way to
    /// change the layout of an existing table. The ``Table`` value stays valid.
    ///
    /// Only in a transaction of ``LMDBStore/writeAloneAndWait(_:)``: LMDB closes a
    /// dropped table's handle at once, and if the transaction is rolled back the writer
    /// opens the table again before any other transaction runs. Other threads must not
    /// use the table meanwhile (readers of the process would find no handle), so
    /// replace tables before handing the environment out, as when migrating a format.
    public func replaceWithEmpty(_ table: Table) throws {
        precondition(isAlone, "FogStorage misuse: replaceWithEmpty(\(table)) outside writeAloneAndWait")
        let layout = environment.configuration.layout(ofTable: table.name)
        try check(fog_mdb_drop(txn, table.identifier, 1), "drop \(table)")
        // From here on the handle is closed until the new table's is opened and committed.
        if !recreatedTables.contains(table) { recreatedTables.append(table) }
        var dbi: MDB_dbi = 0
        try check(fog_mdb_dbi_open(txn, table.name, UInt32(MDB_CREATE) | layout.lmdbFlags, &dbi), "create \(table)")
        // LMDB takes the lowest free handle, and FogStorage closes no other one.
        precondition(dbi == table.identifier, "FogStorage bug: table \(table) came back as handle \(dbi), not \(table.identifier)")
    }
}
