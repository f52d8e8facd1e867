import FogStorageLMDB
import Foundation

/// The engine FogKit runs: the one place that picks the storage backend. Everything
/// else in FogKit is written against the `FogStorage` interface; this is the only file
/// that imports `FogStorageLMDB`.
typealias StoreEngine = Engine<StoreBackend>

/// The store FogKit keeps its containers in.
typealias StoreBackend = LMDBStore

/// Whether `directory` holds a store of the backend FogKit runs.
func storeExists(at directory: URL) -> Bool { StoreBackend.storeExists(at: directory) }
