import FogKitTesting
import FogStorage
import Foundation
import Testing

/// `scanRemoving`: a scan in key order that removes the entries its body chooses, where it
/// stands (LMDB removes through the scan's cursor; other stores may gather and delete).
@Suite struct ScanRemovingTests {
    @Test(arguments: allBackends, [1, 2, 3] as [UInt64])
    func removesExactlyWhatTheBodyChooses(_ b: Backend, seed: UInt64) throws { try randomRemovals(b.backend, seed: seed) }
    @Test(arguments: allBackends) func removingEveryEntryLeavesAUsableTable(_ b: Backend) throws { try removeEverything(b.backend) }
    @Test(arguments: allBackends) func aMultiValueTableIsRefused(_ b: Backend) throws { try multiValueRefused(b.backend) }
    @Test(arguments: allBackends) func aWriteWhoseBodyThrowsKeepsEveryEntry(_ b: Backend) throws { try throwingBody(b.backend) }
    @Test(arguments: allBackends) func removingTheTailLeavesTheHead(_ b: Backend) throws { try removeTail(b.backend) }

    private func key(_ i: Int) -> [UInt8] { [UInt8(i >> 8), UInt8(i & 0xFF)] }

    /// Table "a" of `store` with the keys 0..<count, each with a value of `valueSize` bytes.
    private func fill<Store: KeyValueStore>(_ store: Store, count: Int, valueSize: Int) throws -> Table {
        let a = store.table(named: Tables.a)
        try store.writeAndWait { txn throws in
            for i in 0..<count { try txn.put([UInt8](repeating: 1, count: valueSize), forKey: key(i), in: a) }
        }
        return a
    }

    /// 3,000 keys with values of random size (many pages; one in twenty on overflow pages of
    /// its own), a random range (either bound in or out) and a random stop;
    /// the body removes runs of entries and single ones, and reads another table as it goes.
    /// What it saw must be the range's keys in order up to the stop, and what is left must
    /// be the keys it did not remove.
    func randomRemovals<B: StoreBackend>(_ backend: B, seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let count = 3_000
        let values = (0..<count).map { _ in
            let size = random.chance(0.05) ? random.int(3_000...9_000) : random.int(1...300)
            return [UInt8](repeating: UInt8.random(in: 0...255, using: &random), count: size)
        }
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let other = store.table(named: Tables.b)
            try store.writeAndWait { txn throws in
                for i in 0..<count { try txn.put(values[i], forKey: key(i), in: a) }
                try txn.put([7], forKey: [7], in: other)
            }
            let lower = random.int(0...count / 3)
            let upper = random.int(count * 2 / 3...count)
            let upperInclusive = upper < count && random.chance(0.5)
            let range = ScanRange(lower: key(lower), lowerInclusive: random.chance(0.5), upper: key(upper), upperInclusive: upperInclusive)
            let stopAfter = random.chance(0.5) ? random.int(1...(upper - lower)) : Int.max
            var removing = false
            var seen: [[UInt8]] = []
            var chosen: Set<[UInt8]> = []
            let removed = try store.writeAndWait { txn throws in
                try txn.scanRemoving(a, range: range) { k, v in
                    if seen.count == stopAfter { return .stop }
                    let i = Int(k[0]) << 8 | Int(k[1])
                    #expect(Array(v) == values[i], "the value of \(i)")
                    let seenOther = try txn.value(forKey: [7], in: other)
                    #expect(seenOther == [7])
                    seen.append(Array(k))
                    if random.chance(0.15) { removing.toggle() }
                    guard removing || random.chance(0.05) else { return .keep }
                    chosen.insert(Array(k))
                    return .remove
                }
            }
            let firstSeen = range.lowerInclusive ? lower : lower + 1
            let inRange = (firstSeen..<(upperInclusive ? upper + 1 : upper)).map(key)
            #expect(seen == Array(inRange.prefix(stopAfter)))
            #expect(removed == chosen.count)
            try store.read { txn throws in
                #expect(try txn.keys(a) == (0..<count).map(key).filter { !chosen.contains($0) })
                for i in 0..<count where !chosen.contains(key(i)) {
                    #expect(try txn.value(forKey: key(i), in: a) == values[i])
                }
            }
        }
    }

    func removeEverything<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = try fill(store, count: 2_000, valueSize: 100)
            let removed = try store.writeAndWait { txn throws in
                let n = try txn.scanRemoving(a, range: .all) { _, _ in .remove }
                #expect(try txn.count(of: a) == 0)
                try txn.put([2], forKey: key(5), in: a)
                return n
            }
            #expect(removed == 2_000)
            try store.read { txn throws in #expect(try txn.entries(a) == [Entry(key(5), [2])]) }
        }
    }

    /// The last entries of the table removed, the ones before kept: the cursor runs off the
    /// table's end right after a removal.
    func removeTail<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = try fill(store, count: 1_500, valueSize: 60)
            let removed = try store.writeAndWait { txn throws in
                try txn.scanRemoving(a, range: .all) { k, _ in (Int(k[0]) << 8 | Int(k[1])) >= 1_000 ? .remove : .keep }
            }
            #expect(removed == 500)
            try store.read { txn throws in #expect(try txn.keys(a) == (0..<1_000).map(key)) }
            try store.writeAndWait { txn throws in try txn.put([4], forKey: key(2_000), in: a) }
            try store.read { txn throws in #expect(try txn.count(of: a) == 1_001) }
        }
    }

    func multiValueRefused<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let m = store.table(named: Tables.multi)
            try store.writeAndWait { txn throws in
                try txn.addValue([1], forKey: [1], in: m)
                try txn.addValue([2], forKey: [1], in: m)
            }
            try store.writeAndWait { txn throws in
                #expect(throws: StorageError.incompatible) { try txn.scanRemoving(m, range: .all) { _, _ in .remove } }
            }
            try store.read { txn throws in #expect(try txn.count(of: m) == 2) }
        }
    }

    struct Refused: Error {}

    func throwingBody<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            try store.writeAndWait { txn throws in
                for i in 0..<500 { try txn.put([1], forKey: key(i), in: a) }
            }
            #expect(throws: Refused.self) {
                try store.writeAndWait { txn throws in
                    try txn.scanRemoving(a, range: .all) { k, _ in
                        if Array(k) == key(300) { throw Refused() }
                        return .remove
                    }
                }
            }
            try store.read { txn throws in #expect(try txn.count(of: a) == 500) }
        }
    }
}
