internal import CLMDB

extension ReadTransaction {
    /// The options `table` was created with, which LMDB keeps whatever options later opens
    /// ask for (see ``Table/Options``).
    public func options(of table: Table) throws -> Table.Options {
        var flags: UInt32 = 0
        try check(mdb_dbi_flags(txn, table.dbi, &flags), "read the flags of \(table)")
        return Table.Options(lmdbFlags: flags)
    }

    /// Whether `table` has ``Table/Options/sortedDuplicates``.
    @inline(__always)
    func hasDuplicates(_ table: Table) throws -> Bool {
        var flags: UInt32 = 0
        try check(mdb_dbi_flags(txn, table.dbi, &flags), "read the flags of \(table)")
        return flags & UInt32(MDB_DUPSORT) != 0
    }
}

extension WriteTransaction {
    /// Deletes `table` and creates it again, empty, with the options the environment's
    /// configuration gives it (``Environment/Configuration/tableOptions``): the way to
    /// change the options of an existing table. The ``Table`` value stays valid.
    ///
    /// Only in a transaction of ``Environment/writeAloneAndWait(_:)``: LMDB closes a
    /// dropped table's handle at once, and if the transaction is rolled back the writer
    /// opens the table again before any other transaction runs. Other threads must not
    /// use the table meanwhile (readers of the process would find no handle), so
    /// recreate tables before handing the environment out, as when migrating a format.
    public func recreate(_ table: Table) throws {
        precondition(isAlone, "FogStorage misuse: recreate(\(table)) outside writeAloneAndWait")
        let options = environment.configuration.options(ofTable: table.name)
        try check(mdb_drop(txn, table.dbi, 1), "drop \(table)")
        // From here on the handle is closed until the new table's is opened and committed.
        if !recreatedTables.contains(table) { recreatedTables.append(table) }
        var dbi: MDB_dbi = 0
        try check(mdb_dbi_open(txn, table.name, UInt32(MDB_CREATE) | options.lmdbFlags, &dbi), "create \(table)")
        // LMDB takes the lowest free handle, and FogStorage closes no other one.
        precondition(dbi == table.dbi, "FogStorage bug: table \(table) came back as handle \(dbi), not \(table.dbi)")
    }
}
