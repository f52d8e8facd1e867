import FogStorage
import FogStorageLMDB

/// The engine FogKit runs: the one place that picks the storage backend. Everything
/// else in FogKit is written against the `FogStorage` interface; this is the only file
/// that imports `FogStorageLMDB`.
typealias StoreEngine = Engine<LMDBStore>

extension Engine where Store == LMDBStore {
    /// The durability the store's commits get: the strongest one any open of its
    /// directory in this process asked for, at least ``durability``.
    var effectiveDurability: Container.Durability {
        Container.Durability(rawValue: store.durability.rawValue) ?? durability
    }
}
