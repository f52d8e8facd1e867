internal import CLMDB
internal import CLMDBGuard
import FogStorage

/// The one place where LMDB return codes become Swift errors.
///
/// Ordinary failures throw the ``StorageError`` of their ``LMDBError``; a bad table handle can only mean a
/// bug in FogStorage and stops the program. (`MDB_BAD_TXN` is thrown: it
/// follows any earlier failure in the same transaction that the caller caught.)
@inline(__always)
func lmdbCheck(_ code: Int32, _ what: @autoclosure () -> String = "", keyCount: Int? = nil) throws(StorageError) {
    if code == 0 { return }
    if code == MDB_BAD_DBI {
        preconditionFailure("FogStorage bug: \(LMDBError(rawValue: code)) in \(what())")
    }
    let error = LMDBError(rawValue: code)
    throw keyCount.map { error.storageError(keyCount: $0) } ?? error.storageError
}

/// Runs `body` with an `MDB_val` that points at `bytes` without copying.
@inline(__always)
func withMDBVal<R>(_ bytes: [UInt8], _ body: (inout MDB_val) throws -> R) rethrows -> R {
    try bytes.withUnsafeBytes { raw in
        var val = MDB_val(mv_size: raw.count, mv_data: UnsafeMutableRawPointer(mutating: raw.baseAddress))
        return try body(&val)
    }
}

extension MDB_val {
    /// The bytes the value points at; valid only while the transaction is open.
    @inline(__always)
    var buffer: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: mv_data, count: mv_size)
    }
}

/// Commits `txn` (`mdb_txn_commit`, guarded). LMDB frees the transaction whatever the outcome,
/// except when the guard stopped the commit on a damaged page: then it is aborted here, so
/// that in every case the handle is gone when this returns.
func commitTransaction(_ txn: OpaquePointer?) -> Int32 {
    let rc = fog_mdb_txn_commit(txn)
    if rc == FOG_MDB_DAMAGED { mdb_txn_abort(txn) }
    return rc
}
