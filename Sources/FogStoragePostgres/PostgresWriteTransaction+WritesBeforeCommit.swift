import FogStorage

extension PostgresWriteTransaction {
    /// Holds `work` until the end of the request (every write of this store is a transaction
    /// of its own); a later work under the same `key` replaces it. See
    /// ``StorageWriteTransaction/writeBeforeCommit(key:_:)``.
    public func writeBeforeCommit(key: [UInt8], _ work: @escaping (PostgresWriteTransaction) throws -> Void) {
        session.writesBeforeCommit.add(key: key, work)
    }

    /// Runs the held works now, in this transaction.
    public func runWritesBeforeCommit() throws {
        try session.writesBeforeCommit.run(in: self)
    }
}
