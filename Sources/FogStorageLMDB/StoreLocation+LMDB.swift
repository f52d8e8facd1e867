import FogStorage
import Foundation

extension StoreLocation {
    /// An LMDB store in the folder `directory` (created when the store is).
    public static func directory(_ directory: URL) -> StoreLocation {
        StoreLocation(LMDBStore.self, url: directory)
    }
}
