internal import CLMDB
import Foundation

/// `FogTestHelper hold-readers <store directory> <count | all>`: opens the store's LMDB
/// environment, begins `count` read transactions (or as many as the reader table has
/// room for), prints `holding <n>` and sleeps until it is killed. The tests kill it with
/// SIGKILL to leave its reader slots behind, as a crashed process would.
func holdReaders(directory: String, count: String) throws -> Never {
    var env: OpaquePointer?
    try check(mdb_env_create(&env), "create")
    try check(mdb_env_set_maxdbs(env, 64), "set maxdbs")
    try check(mdb_env_open(env, directory, UInt32(MDB_NOTLS | MDB_RDONLY), 0o644), "open \(directory)")
    let wanted = count == "all" ? Int.max : Int(count) ?? 0
    var held: [OpaquePointer] = []
    while held.count < wanted {
        var txn: OpaquePointer?
        let rc = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn)
        if rc == MDB_READERS_FULL && count == "all" { break }
        try check(rc, "begin read transaction \(held.count)")
        held.append(txn!)
    }
    FileHandle.standardOutput.write(Data("holding \(held.count)\n".utf8))
    while true { sleep(60) }
}

struct HelperError: Error, CustomStringConvertible {
    var description: String
}

func check(_ rc: Int32, _ what: String) throws {
    if rc != 0 { throw HelperError(description: "\(what): \(String(cString: mdb_strerror(rc)))") }
}
