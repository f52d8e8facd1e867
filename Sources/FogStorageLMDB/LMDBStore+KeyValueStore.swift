import FogStorage
import Foundation

extension LMDBStore: KeyValueStore {
    /// 511 bytes, LMDB's default maximum key size (also the largest value of a
    /// multi-value table).
    public static var maximumKeySize: Int { 511 }

    /// `false`: LMDB refuses empty keys.
    public static var allowsEmptyKeys: Bool { false }

    /// Whether `location` is a directory holding an LMDB data file (`data.mdb`).
    public static func storeExists(at location: URL) -> Bool {
        FileManager.default.fileExists(atPath: location.appendingPathComponent("data.mdb").path)
    }

    /// Opens the environment in the directory `location` with `configuration` and the
    /// default map and writer settings; see ``open(directory:configuration:)``.
    public static func open(at location: URL, configuration: StoreConfiguration) throws -> LMDBStore {
        try open(directory: location, configuration: Configuration(configuration))
    }

    /// The size of `data.mdb` as bytes used, the map size as bytes reserved, and the
    /// writer's commits; ``statistics()`` has LMDB's own figures.
    public func storeStatistics() throws -> StoreStatistics {
        let s = try statistics()
        return StoreStatistics(
            bytesUsed: s.fileSize, bytesReserved: max(s.mapSize, s.fileSize), commits: s.commits, writeRequests: s.writeRequests)
    }

    /// A compacting ``copy(to:compact:)``: a consistent snapshot written while readers and
    /// writers go on.
    public func backup(to directory: URL) throws {
        try copy(to: directory, compact: true)
    }
}

extension LMDBReadTransaction: StorageReadTransaction {}

extension LMDBWriteTransaction: StorageWriteTransaction {}
