import FogStorage

extension LMDBWriteTransaction {
    /// Holds `work` until the end of the request; when the writer runs a group of requests
    /// directly in one transaction, until the end of the group, a later work under the same
    /// `key` replacing it. See ``StorageWriteTransaction/writeBeforeCommit(key:_:)``.
    public func writeBeforeCommit(key: [UInt8], _ work: @escaping (LMDBWriteTransaction) throws -> Void) {
        if writesBeforeCommit == nil { writesBeforeCommit = WritesBeforeCommit() }
        writesBeforeCommit?.add(key: key, work)
    }

    /// Runs the held works now, in this transaction.
    public func runWritesBeforeCommit() throws {
        try writesBeforeCommit?.run(in: self)
    }
}
