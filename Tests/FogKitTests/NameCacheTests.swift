import Testing

@testable import FogKit

/// The name cache never sizes itself by an id from damaged data (`DamagedStoreTests` found a
/// copy whose name entry held an id of about six billion: caching it asked for 47 GB).
@Suite struct NameCacheTests {
    @Test func anIDFarBeyondTheOthersOrNotPositiveIsNotCached() {
        let cache = NameCache()
        cache.publish(names: [("ok", 1), ("next", 2), ("huge", 5_939_134_474), ("negative", -3), ("zero", 0)])
        let snapshot = cache.snapshot
        #expect(snapshot.names.count == 3)
        #expect(snapshot.ids == ["ok": 1, "next": 2])
        // Ids handed out one by one keep growing the array.
        cache.publish(names: [("later", 2 + Int64(NameCache.maximumIDGap) - 1)])
        #expect(cache.snapshot.ids["later"] != nil)
    }
}
