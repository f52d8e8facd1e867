internal import CLMDB
import FogStorage
import Foundation

/// Read transactions begun on a store's LMDB environment and never ended: a test fixture
/// that takes reader slots of the lock file the way a reader that crashed keeps them.
///
/// It opens its own environment read-only, outside the process-wide registry of
/// ``LMDBStore``, so the slots it takes belong to no store of this process. Fault tests run
/// it in a child process and kill that process with `SIGKILL`, leaving the slots behind.
public final class ReaderSlotHolder {
    private let environment: OpaquePointer
    private var transactions: [OpaquePointer] = []

    /// The number of read transactions held.
    public var count: Int { transactions.count }

    /// Opens the environment in `directory` and begins `count` read transactions, or, for
    /// `nil`, as many as the reader table has room for.
    ///
    /// - Throws: ``StorageError`` when the environment cannot be opened or a transaction
    ///   cannot begin (for a given `count`, also when the reader table is full).
    public init(directory: URL, count: Int?) throws {
        var env: OpaquePointer?
        try lmdbCheck(mdb_env_create(&env), "create environment")
        environment = env!
        do {
            try lmdbCheck(mdb_env_set_maxdbs(environment, 64))
            try lmdbCheck(mdb_env_open(environment, directory.path, UInt32(MDB_NOTLS | MDB_RDONLY), 0o644), "open \(directory.path)")
            while transactions.count < count ?? .max {
                var txn: OpaquePointer?
                let rc = mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &txn)
                if rc == MDB_READERS_FULL && count == nil { break }
                try lmdbCheck(rc, "begin read transaction \(transactions.count)")
                transactions.append(txn!)
            }
        } catch {
            release()
            throw error
        }
    }

    /// Ends the transactions and closes the environment.
    public func release() {
        for txn in transactions { mdb_txn_abort(txn) }
        transactions = []
        mdb_env_close(environment)
    }
}
