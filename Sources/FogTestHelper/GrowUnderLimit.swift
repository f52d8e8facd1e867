import FogStorage
import FogStorageLMDB
import Foundation

/// `FogTestHelper grow-under-limit <directory>`: opens a store with a 16 MiB map, limits
/// the process's address space to 100 MiB more than it uses, and writes 1 MB values until
/// the map cannot grow. Prints `write failed: <error>` for the write that failed, then
/// `read failed: <error>` or `read succeeded` for a read after it, and `closed`. A map that
/// cannot grow must fail the write, not stop the process; LMDB has by then unmapped the
/// old map, so later calls must throw too.
func growUnderLimit(directory: String) throws {
    let store = try LMDBStore.open(
        directory: URL(fileURLWithPath: directory, isDirectory: true),
        configuration: .init(tables: ["a"], initialMapSize: 16 << 20, durability: .none))
    let table = store.table(named: "a")
    try store.writeAndWait { try $0.put([1], forKey: [0, 0, 0, 0], in: table) }
    var limit = rlimit()
    limit.rlim_cur = rlim_t(virtualMemorySize() + (100 << 20))
    limit.rlim_max = rlim_t.max
    guard setrlimit(Int32(RLIMIT_AS.rawValue), &limit) == 0 else { throw HelperError(description: "setrlimit: errno \(errno)") }
    let value = [UInt8](repeating: 7, count: 1 << 20)
    for i in 1..<10_000 {
        do {
            try store.writeAndWait { txn in
                try txn.put(value, forKey: withUnsafeBytes(of: UInt32(i).bigEndian) { Array($0) }, in: table)
            }
        } catch {
            FileHandle.standardOutput.write(Data("write failed: \(error)\n".utf8))
            break
        }
    }
    do {
        _ = try store.read { try $0.value(forKey: [0, 0, 0, 0], in: table) }
        FileHandle.standardOutput.write(Data("read succeeded\n".utf8))
    } catch {
        FileHandle.standardOutput.write(Data("read failed: \(error)\n".utf8))
    }
    store.close()
    FileHandle.standardOutput.write(Data("closed\n".utf8))
}

/// The process's virtual memory size in bytes (`VmSize` in `/proc/self/status`).
private func virtualMemorySize() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmSize:") {
        let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        return kilobytes * 1024
    }
    return 0
}
