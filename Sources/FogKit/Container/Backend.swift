import Foundation

/// The engine FogKit runs: specialised for ``OpenedStore``, which is LMDB's store called
/// directly or another backend's through an existential (`Storage/`). Everything else in
/// FogKit is written against the `FogStorage` interface.
typealias StoreEngine = Engine<StoreBackend>

/// The store FogKit keeps its containers in.
typealias StoreBackend = OpenedStore

/// Whether a store is at `location`.
func storeExists(at location: StoreLocation) -> Bool { location.storeExists() }
