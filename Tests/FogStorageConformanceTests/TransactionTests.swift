import FogKitTesting
import FogStorage
import Foundation
import Synchronization
import Testing

/// Point reads and writes, snapshots, atomicity, and the limits on keys and values.
@Suite struct TransactionTests {
    @Test(arguments: allBackends) func pointReadsAndWrites(_ b: Backend) throws { try pointReadsAndWrites(b.backend) }
    @Test(arguments: allBackends) func aReadSeesItsSnapshotOnly(_ b: Backend) throws { try readIsolation(b.backend) }
    @Test(arguments: allBackends) func aWriteThatThrowsAppliesNothing(_ b: Backend) throws { try throwingWrite(b.backend) }
    @Test(arguments: allBackends) func concurrentWritesFailAlone(_ b: Backend) async throws { try await concurrentWrites(b.backend) }
    @Test(arguments: allBackends) func aWriteSeesItsOwnWrites(_ b: Backend) throws { try ownWrites(b.backend) }
    @Test(arguments: allBackends) func keySizeLimits(_ b: Backend) throws { try keySizes(b.backend) }
    @Test(arguments: allBackends) func emptyValues(_ b: Backend) throws { try emptyValues(b.backend) }
    @Test(arguments: allBackends) func largeValues(_ b: Backend) throws { try largeValues(b.backend) }
    @Test(arguments: allBackends) func tablesAreSeparate(_ b: Backend) throws { try tablesAreSeparate(b.backend) }
    @Test(arguments: allBackends) func aClosedStoreThrowsClosed(_ b: Backend) throws { try closed(b.backend) }
    @Test(arguments: allBackends) func deleteAllOfALargeRange(_ b: Backend) throws { try deleteAllOfALargeRange(b.backend) }
    @Test(arguments: allBackends) func snapshotIDsNameWhatAReadSees(_ b: Backend) throws { try snapshotIDs(b.backend) }

    /// Read-only transactions with one snapshot id saw the same data: between two reads
    /// without a commit the id stays, after a commit (even one that wrote nothing new) it
    /// changes, and a write's read view has none. A backend may have no ids at all.
    func snapshotIDs<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            try store.writeAndWait { txn throws in try txn.put([1], forKey: [1], in: a) }
            let first = try store.read { $0.snapshotID }
            let again = try store.read { $0.snapshotID }
            #expect(first == again)
            try store.writeAndWait { txn throws in try txn.put([2], forKey: [1], in: a) }
            let afterWrite = try store.read { $0.snapshotID }
            try store.writeAndWait { txn throws in
                try txn.put([2], forKey: [1], in: a)
                #expect(txn.readView.snapshotID == nil)
                #expect(txn.snapshotID == nil)
            }
            let afterSameValue = try store.read { $0.snapshotID }
            if let first {
                let ids = [first, try #require(afterWrite), try #require(afterSameValue)]
                #expect(Set(ids).count == 3, "\(ids)")
            } else {
                #expect(afterWrite == nil && afterSameValue == nil)
            }
        }
    }

    /// `deleteAll` of a range of more keys than a backend may gather at once removes exactly
    /// the range, in a single-value and a multi-value table.
    func deleteAllOfALargeRange<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let m = store.table(named: Tables.multi)
            func key(_ i: Int) -> [UInt8] { [UInt8(i >> 8), UInt8(i & 0xFF)] }
            try store.writeAndWait { txn throws in
                for i in 0..<5_000 {
                    try txn.put([1], forKey: key(i), in: a)
                    try txn.addValue([0, 0, 0, 0, 0, 0, 0, 1], forKey: key(i), in: m)
                    try txn.addValue([0, 0, 0, 0, 0, 0, 0, 2], forKey: key(i), in: m)
                }
            }
            let removed = try store.writeAndWait { txn throws in
                (
                    try txn.deleteAll(in: a, range: ScanRange(lower: key(100), upper: key(4_900))),
                    try txn.deleteAll(in: m, range: ScanRange(lower: key(100), upper: key(4_900)))
                )
            }
            #expect(removed.0 == 4_800)
            #expect(removed.1 == 9_600)
            try store.read { txn throws in
                #expect(try txn.count(of: a) == 200)
                #expect(try txn.count(of: m) == 400)
                #expect(try txn.keys(a) == (0..<100).map(key) + (4_900..<5_000).map(key))
            }
        }
    }

    func pointReadsAndWrites<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            try store.writeAndWait { txn throws in
                try txn.put([1, 1], forKey: [1], in: a)
                try txn.put([2], forKey: [2], in: a)
                try txn.put([1, 2], forKey: [1], in: a)  // replaces
                #expect(try txn.insert([9], forKey: [2], in: a) == false, "insert keeps a present key")
                #expect(try txn.insert([3], forKey: [3], in: a))
                try txn.put(count: 4, forKey: [4], in: a) { buffer in
                    for i in 0..<4 { buffer[i] = UInt8(40 + i) }
                }
                try txn.put([5], forKey: [5], in: a)
                #expect(try txn.delete([5], in: a))
                #expect(try txn.delete([5], in: a) == false)
            }
            try store.read { txn throws in
                #expect(txn.isReadOnly)
                #expect(try txn.value(forKey: [1], in: a) == [1, 2])
                #expect(try txn.value(forKey: [2], in: a) == [2])
                #expect(try txn.value(forKey: [3], in: a) == [3])
                #expect(try txn.value(forKey: [4], in: a) == [40, 41, 42, 43])
                #expect(try txn.value(forKey: [5], in: a) == nil)
                #expect(try txn.contains([1], in: a))
                #expect(try !txn.contains([1, 0], in: a))
                #expect(try txn.withValue(forKey: [1], in: a) { $0.count } == 2)
                #expect(try txn.withValue(forKey: [6], in: a) { _ in true } == nil)
                let raw: [UInt8] = [4]
                #expect(try raw.withUnsafeBytes { key in try txn.withValue(forKey: key, in: a) { Array($0) } } == [40, 41, 42, 43])
                #expect(try txn.valueCount(forKey: [1], in: a) == 1)
                #expect(try txn.valueCount(forKey: [6], in: a) == 0)
                #expect(try txn.count(of: a) == 4)
                #expect(try txn.layout(of: a) == .singleValue)
            }
            let removed = try store.writeAndWait { txn throws in try txn.deleteAll(in: a, range: ScanRange(lower: [2], upper: [4])) }
            #expect(removed == 2)
            #expect(try store.read { try $0.keys(a) } == [[1], [4]])
            try store.writeAndWait { txn throws in try txn.clear(a) }
            #expect(try store.read { try $0.count(of: a) } == 0)
        }
    }

    /// A read transaction keeps its snapshot while a write commits meanwhile.
    func readIsolation<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            try store.writeAndWait { txn throws in try txn.put([1], forKey: [1], in: a) }
            let began = DispatchSemaphore(value: 0)
            let committed = DispatchSemaphore(value: 0)
            let seen = Mutex<[[UInt8]?]>([])
            let reader = Thread {
                try? store.read { txn throws in
                    seen.withLock { $0.append(try? txn.value(forKey: [1], in: a)) }
                    began.signal()
                    committed.wait()
                    // The write below committed after this snapshot began.
                    seen.withLock { $0.append(try? txn.value(forKey: [1], in: a)) }
                    seen.withLock { $0.append(try? txn.value(forKey: [2], in: a)) }
                    seen.withLock { $0.append((try? txn.count(of: a)).map { [UInt8($0)] }) }
                }
                began.signal()
            }
            reader.start()
            began.wait()
            // A small write, so the store has no reason to wait for the reader.
            try store.writeAndWait { txn throws in
                try txn.put([9], forKey: [1], in: a)
                try txn.put([2], forKey: [2], in: a)
            }
            committed.signal()
            began.wait()
            #expect(seen.withLock { $0 } == [[1], [1], nil, [1]])
            // A read that begins after the commit sees it.
            #expect(try store.read { try $0.entries(a) } == [Entry([1], [9]), Entry([2], [2])])
        }
    }

    /// A body that throws leaves nothing of what it wrote, in every table and kind of write.
    func throwingWrite<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let m = store.table(named: Tables.multi)
            try store.writeAndWait { txn throws in
                try txn.put([1], forKey: [1], in: a)
                try txn.put([2], forKey: [2], in: a)
                try txn.addValue([1], forKey: [1], in: m)
            }
            let before = try store.read { txn throws in (try txn.entries(a), try txn.entries(m)) }
            #expect(throws: Planned()) {
                try store.writeAndWait { txn throws in
                    try txn.put([9], forKey: [1], in: a)
                    try txn.put([3], forKey: [3], in: a)
                    try txn.delete([2], in: a)
                    try txn.addValue([2], forKey: [1], in: m)
                    try txn.removeValue([1], forKey: [1], in: m)
                    try txn.clear(a)
                    throw Planned()
                }
            }
            #expect(throws: Planned()) {
                try store.writeAloneAndWait { txn throws in
                    try txn.put([9], forKey: [1], in: a)
                    throw Planned()
                }
            }
            let after = try store.read { txn throws in (try txn.entries(a), try txn.entries(m)) }
            #expect(after.0 == before.0)
            #expect(after.1 == before.1)
        }
    }

    /// Writes issued together may share a commit, but one that throws leaves the others whole.
    func concurrentWrites<B: StoreBackend>(_ backend: B) async throws {
        try await withStore(backend) { store async throws in
            let a = store.table(named: Tables.a)
            let results = await withTaskGroup(of: (Int, Bool).self) { group in
                for i in 0..<32 {
                    group.addTask {
                        do {
                            try await store.write { txn throws in
                                try txn.put([UInt8(i)], forKey: [UInt8(i), 0], in: a)
                                try txn.put([UInt8(i)], forKey: [UInt8(i), 1], in: a)
                                if i % 4 == 1 { throw Planned() }
                            }
                            return (i, true)
                        } catch {
                            return (i, false)
                        }
                    }
                }
                var results: [Int: Bool] = [:]
                for await (i, ok) in group { results[i] = ok }
                return results
            }
            for i in 0..<32 { #expect(results[i] == (i % 4 != 1), "request \(i)") }
            let expected: [[UInt8]] = (0..<32).filter { $0 % 4 != 1 }.flatMap { i -> [[UInt8]] in [[UInt8(i), 0], [UInt8(i), 1]] }
            #expect(try store.read { try $0.keys(a) } == expected)
            let statistics = try store.storeStatistics()
            #expect(statistics.writeRequests >= 32)
            #expect(statistics.commits >= 1 && statistics.commits <= statistics.writeRequests)
            #expect(statistics.bytesReserved >= statistics.bytesUsed)
        }
    }

    func ownWrites<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            try store.writeAndWait { txn throws in
                try txn.put([1], forKey: [1], in: a)
                #expect(try txn.value(forKey: [1], in: a) == [1])
                #expect(try txn.keys(a) == [[1]])
                let view = txn.readView
                #expect(!view.isReadOnly, "the read view of a write reads uncommitted data")
                #expect(try view.value(forKey: [1], in: a) == [1])
                try txn.delete([1], in: a)
                #expect(try view.value(forKey: [1], in: a) == nil)
            }
        }
    }

    /// Keys up to `maximumKeySize` bytes; an empty key only where the store allows it.
    func keySizes<B: StoreBackend>(_ backend: B) throws {
        let maximum = B.Store.maximumKeySize
        #expect(maximum >= 255, "FogKit's keys need at least 255 bytes")
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let longest = [UInt8](repeating: 0xAB, count: maximum)
            try store.writeAndWait { txn throws in try txn.put([1], forKey: longest, in: a) }
            #expect(try store.read { try $0.value(forKey: longest, in: a) } == [1])
            #expect(throws: StorageError.keyTooLarge) {
                try store.writeAndWait { txn throws in try txn.put([1], forKey: longest + [0], in: a) }
            }
            if B.Store.allowsEmptyKeys {
                try store.writeAndWait { txn throws in try txn.put([7], forKey: [], in: a) }
                #expect(try store.read { try $0.value(forKey: [], in: a) } == [7])
                #expect(try store.read { try $0.keys(a).first } == [])
            } else {
                #expect(throws: StorageError.emptyKey) {
                    try store.writeAndWait { txn throws in try txn.put([7], forKey: [], in: a) }
                }
                #expect(throws: StorageError.emptyKey) { try store.read { txn throws in try txn.value(forKey: [], in: a) } }
                // A rejected key does not spoil the transaction that caught the error.
                try store.writeAndWait { txn throws in
                    #expect(throws: StorageError.emptyKey) { try txn.put([7], forKey: [], in: a) }
                    try txn.put([8], forKey: [8], in: a)
                }
                #expect(try store.read { try $0.value(forKey: [8], in: a) } == [8])
            }
        }
    }

    /// Single-value tables take empty values.
    func emptyValues<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            try store.writeAndWait { txn throws in
                try txn.put([], forKey: [1], in: a)
                try txn.put(count: 0, forKey: [2], in: a) { _ in }
            }
            try store.read { txn throws in
                #expect(try txn.value(forKey: [1], in: a) == [])
                #expect(try txn.value(forKey: [2], in: a) == [])
                #expect(try txn.contains([1], in: a))
                #expect(try txn.entries(a) == [Entry([1], []), Entry([2], [])])
            }
        }
    }

    /// Values of a megabyte and more, written whole or filled in place.
    func largeValues<B: StoreBackend>(_ backend: B) throws {
        var rng = SplitMix64(seed: 1)
        let big = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let bigger = (0..<(3 << 20)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            try store.writeAndWait { txn throws in
                try txn.put(big, forKey: [1], in: a)
                try txn.put(count: bigger.count, forKey: [2], in: a) { buffer in buffer.copyBytes(from: bigger) }
                try txn.put([0], forKey: [3], in: a)
            }
            try store.read { txn throws in
                #expect(try txn.value(forKey: [1], in: a) == big)
                #expect(try txn.withValue(forKey: [2], in: a) { $0.elementsEqual(bigger) } == true)
                #expect(try txn.entries(a).map(\.value.count) == [big.count, bigger.count, 1])
            }
            // Replaced by a small value, and back.
            try store.writeAndWait { txn throws in try txn.put([5], forKey: [1], in: a) }
            #expect(try store.read { try $0.value(forKey: [1], in: a) } == [5])
            try store.writeAndWait { txn throws in try txn.put(big, forKey: [1], in: a) }
            #expect(try store.read { try $0.value(forKey: [1], in: a) } == big)
        }
    }

    func tablesAreSeparate<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let b = store.table(named: Tables.b)
            #expect(a != b)
            #expect(store.table(named: Tables.a) == a)
            try store.writeAndWait { txn throws in
                try txn.put([1], forKey: [1], in: a)
                try txn.put([2], forKey: [1], in: b)
                try txn.put([3], forKey: [3], in: b)
            }
            try store.writeAndWait { txn throws in try txn.clear(a) }
            try store.read { txn throws in
                #expect(try txn.count(of: a) == 0)
                #expect(try txn.entries(b) == [Entry([1], [2]), Entry([3], [3])])
            }
        }
    }

    func closed<B: StoreBackend>(_ backend: B) throws {
        let location = try backend.makeLocation()
        defer { backend.removeLocation(location) }
        let store = try B.Store.open(at: location, configuration: Tables.configuration)
        #expect(!store.isClosed)
        store.close()
        #expect(store.isClosed)
        #expect(throws: StorageError.closed) { try store.read { _ in () } }
        #expect(throws: StorageError.closed) { try store.writeAndWait { _ in () } }
    }
}
