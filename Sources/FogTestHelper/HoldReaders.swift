import FogStorageLMDB
import Foundation

/// `FogTestHelper hold-readers <store directory> <count | all>`: takes `count` reader slots
/// of the store (or as many as are free) with a ``ReaderSlotHolder``, prints `holding <n>`
/// and sleeps until it is killed. The tests kill it with SIGKILL to leave its reader slots
/// behind, as a crashed process would.
func holdReaders(directory: String, count: String) throws -> Never {
    let holder = try ReaderSlotHolder(
        directory: URL(fileURLWithPath: directory, isDirectory: true), count: count == "all" ? nil : Int(count) ?? 0)
    FileHandle.standardOutput.write(Data("holding \(holder.count)\n".utf8))
    while true { sleep(60) }
}

struct HelperError: Error, CustomStringConvertible {
    var description: String
}
