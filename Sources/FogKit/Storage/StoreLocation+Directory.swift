import Crypto
import FogStorage
import FogStorageLMDB
import Foundation

extension StoreLocation {
    /// The embedded store (LMDB) in the folder `directory`, created with the store when
    /// missing: FogKit's default.
    ///
    /// ```swift
    /// let container = try Container(identifier: "iCloud.com.example.notes", store: .directory(folder))
    /// ```
    public static func directory(_ directory: URL) -> StoreLocation {
        StoreLocation(LMDBStore.self, url: directory)
    }

    /// Whether the store is an embedded one in a local folder.
    public var isDirectory: Bool { isBackend(LMDBStore.self) }
}

extension StoreLocation {
    /// A folder of this process for a store that is not in a folder: where its asset files
    /// are kept for callers to read. Named after the store's address, so every container of
    /// the process on one store shares it.
    var workingDirectory: URL {
        let digest = SHA256.hash(data: Data(url.absoluteString.utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
        return FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-store-\(digest)", isDirectory: true)
    }
}

extension StoreLocation {
    /// The folder this process keeps the store's files in: the store's own folder, or for a
    /// store on a database server a working folder of this machine (named after the store's
    /// address), where the files of fetched assets are written for callers to read and a
    /// server keeps what it stages.
    public var localFolder: URL { isDirectory ? url : workingDirectory }
}
