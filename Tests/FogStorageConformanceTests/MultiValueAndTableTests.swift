import FogStorage
import Foundation
import Testing

/// Tables whose keys hold a sorted set of values; table layouts, replacement, backups.
@Suite struct MultiValueAndTableTests {
    @Test(arguments: allBackends) func valuesOfAKeyAreASortedSet(_ b: Backend) throws { try sortedSets(b.backend) }
    @Test(arguments: allBackends) func scansResumeAfterAPair(_ b: Backend) throws { try scanAfter(b.backend) }
    @Test(arguments: allBackends) func appendingInOrder(_ b: Backend) throws { try appending(b.backend) }
    @Test(arguments: allBackends) func multiValueOperationsNeedAMultiValueTable(_ b: Backend) throws { try incompatible(b.backend) }
    @Test(arguments: allBackends) func aTableKeepsItsLayoutUntilReplaced(_ b: Backend) throws { try replace(b.backend) }
    @Test(arguments: allBackends) func aBackupOpensAsTheSameStore(_ b: Backend) throws { try backup(b.backend) }

    func sortedSets<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let m = store.table(named: Tables.fixed)
            try store.read { txn throws in #expect(try txn.layout(of: m) == .multiValue(fixedSizeValues: true)) }
            try store.writeAndWait { txn throws in
                for v: UInt64 in [5, 1, 3, 0xFF00, 2] { #expect(try txn.addValue(be(v), forKey: [7], in: m)) }
                #expect(try txn.addValue(be(3), forKey: [7], in: m) == false, "a pair is there once")
                #expect(try txn.addValue(be(9), forKey: [7], in: m, appending: true), "an appending hint for the largest value")
                #expect(try txn.addValue(be(4), forKey: [7], in: m, appending: true), "a wrong hint is harmless")
                try txn.put(be(1), forKey: [6], in: m)
                try txn.put(be(1), forKey: [6], in: m)  // put adds the pair, once
                try txn.addValue(be(2), forKey: [8], in: m)
            }
            try store.read { txn throws in
                let values: [UInt64] = [1, 2, 3, 4, 5, 9, 0xFF00]
                #expect(try txn.entries(m, .exactly([7])) == values.map { Entry([7], be($0)) })
                #expect(try txn.entries(m, .exactly([7]), reverse: true) == values.reversed().map { Entry([7], be($0)) })
                #expect(try txn.valueCount(forKey: [7], in: m) == values.count)
                #expect(try txn.valueCount(forKey: [6], in: m) == 1)
                #expect(try txn.valueCount(forKey: [9], in: m) == 0)
                #expect(try txn.count(of: m) == values.count + 2, "every pair counts")
                #expect(try txn.value(forKey: [7], in: m) == be(1), "a point read gets the first value")
                #expect(try txn.keys(m) == [[6]] + Array(repeating: [7], count: values.count) + [[8]])
                // An excluded bound excludes every value of its key.
                #expect(try txn.entries(m, ScanRange(lower: [6], lowerInclusive: false, upper: [8])).count == values.count)
                #expect(try txn.entries(m, ScanRange(lower: [6], upper: [7], upperInclusive: false)) == [Entry([6], be(1))])
                #expect(
                    try txn.entries(m, ScanRange(lower: [6], upper: [7], upperInclusive: true), reverse: true).first
                        == Entry([7], be(0xFF00)))
            }
            try store.writeAndWait { txn throws in
                #expect(try txn.removeValue(be(3), forKey: [7], in: m))
                #expect(try txn.removeValue(be(3), forKey: [7], in: m) == false)
                #expect(try txn.removeValue(be(3), forKey: [9], in: m) == false)
                #expect(try txn.insert(be(100), forKey: [7], in: m) == false, "insert refuses a present key")
                #expect(try txn.insert(be(100), forKey: [9], in: m))
            }
            try store.read { txn throws in
                #expect(try txn.valueCount(forKey: [7], in: m) == 6)
                #expect(try !txn.entries(m, .exactly([7])).contains(Entry([7], be(3))))
            }
            let removed = try store.writeAndWait { txn throws in
                #expect(try txn.delete([7], in: m), "delete removes the key with all its values")
                return try txn.deleteAll(in: m, range: .all)
            }
            #expect(removed == 3)
            #expect(try store.read { try $0.count(of: m) } == 0)
        }
    }

    /// `scan(after:)` against a model of (key, value) pairs in both directions, from positions
    /// in the table, between pairs, and outside the range.
    func scanAfter<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let m = store.table(named: Tables.multi)
            var pairs: [Entry] = []
            for key: UInt8 in [2, 4, 6] {
                for value: [UInt8] in [[1], [3], [3, 0], [5]] { pairs.append(Entry([key], value)) }
            }
            try store.writeAndWait { txn throws in for pair in pairs.shuffled() { try txn.addValue(pair.value, forKey: pair.key, in: m) } }
            func precedes(_ a: Entry, _ b: Entry) -> Bool { a.key == b.key ? byteOrder(a.value, b.value) : byteOrder(a.key, b.key) }
            try store.read { txn throws in
                let ranges: [ScanRange] = [
                    .all, .exactly([4]), ScanRange(lower: [3], upper: [6]), ScanRange(lower: [4], lowerInclusive: false, upper: nil),
                ]
                for range in ranges {
                    let inRange = pairs.filter { range.isAboveLower($0.key) && range.isBelowUpper($0.key) }
                    for key: UInt8 in 1...7 {
                        for value: [UInt8] in [[0], [1], [2], [3], [3, 0], [4], [5], [9]] {
                            let position = Entry([key], value)
                            var forward: [Entry] = []
                            try txn.scan(m, range: range, reverse: false, after: (position.key, position.value)) { k, v in
                                forward.append(Entry(Array(k), Array(v)))
                                return true
                            }
                            #expect(forward == inRange.filter { precedes(position, $0) }, "\(range) after \(position)")
                            var backward: [Entry] = []
                            try txn.scan(m, range: range, reverse: true, after: (position.key, position.value)) { k, v in
                                backward.append(Entry(Array(k), Array(v)))
                                return true
                            }
                            #expect(backward == inRange.filter { precedes($0, position) }.reversed(), "\(range) before \(position)")
                        }
                    }
                }
            }
        }
    }

    func appending<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let m = store.table(named: Tables.fixed)
            try store.writeAndWait { txn throws in
                for key: UInt8 in 1...3 {
                    for v: UInt64 in 1...4 { try txn.appendValue(be(v), forKey: [key], in: m) }
                }
                #expect(throws: StorageError.keyExists) { try txn.appendValue(be(4), forKey: [3], in: m) }
                #expect(throws: StorageError.keyExists) { try txn.appendValue(be(0), forKey: [3], in: m) }
            }
            #expect(try store.read { try $0.count(of: m) } == 12)
        }
    }

    func incompatible<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            try store.writeAndWait { txn throws in
                try txn.put([1], forKey: [1], in: a)
                #expect(throws: StorageError.incompatible) { try txn.addValue([2], forKey: [1], in: a) }
                #expect(throws: StorageError.incompatible) { try txn.appendValue([2], forKey: [2], in: a) }
                #expect(throws: StorageError.incompatible) { try txn.removeValue([1], forKey: [1], in: a) }
                #expect(throws: StorageError.incompatible) {
                    try txn.scan(a, range: .all, reverse: false, after: ([1], [1])) { _, _ in true }
                }
            }
            #expect(try store.read { try $0.value(forKey: [1], in: a) } == [1])
        }
    }

    /// A table created single-value stays so when reopened with another layout, until
    /// `replaceWithEmpty` gives it the configured one (and a rolled-back replacement leaves it).
    func replace<B: StoreBackend>(_ backend: B) throws {
        let location = try backend.makeLocation()
        defer { backend.removeLocation(location) }
        let single = StoreConfiguration(tables: ["t", "other"], durability: .none)
        var multi = single
        multi.layouts = ["t": .multiValue(fixedSizeValues: false)]
        do {
            let store = try B.Store.open(at: location, configuration: single)
            defer { store.close() }
            let t = store.table(named: "t")
            try store.writeAndWait { txn throws in
                try txn.put([1], forKey: [1], in: t)
                try txn.put([1], forKey: [1], in: store.table(named: "other"))
            }
        }
        #expect(B.Store.storeExists(at: location))
        let store = try B.Store.open(at: location, configuration: multi)
        defer { store.close() }
        let t = store.table(named: "t")
        let other = store.table(named: "other")
        #expect(try store.read { try $0.layout(of: t) } == .singleValue, "an existing table keeps its layout")
        #expect(throws: Planned()) {
            try store.writeAloneAndWait { txn throws in
                try txn.replaceWithEmpty(t)
                try txn.addValue([2], forKey: [2], in: t)
                throw Planned()
            }
        }
        try store.read { txn throws in
            #expect(try txn.layout(of: t) == .singleValue, "a rolled-back replacement leaves the table")
            #expect(try txn.entries(t) == [Entry([1], [1])])
        }
        try store.writeAloneAndWait { txn throws in
            try txn.replaceWithEmpty(t)
            #expect(try txn.count(of: t) == 0)
            try txn.addValue([3], forKey: [2], in: t)
            try txn.addValue([2], forKey: [2], in: t)
        }
        try store.read { txn throws in
            #expect(try txn.layout(of: t) == .multiValue(fixedSizeValues: false))
            #expect(try txn.entries(t) == [Entry([2], [2]), Entry([2], [3])])
            #expect(try txn.entries(other) == [Entry([1], [1])], "other tables are left alone")
        }
    }

    func backup<B: StoreBackend>(_ backend: B) throws {
        let copyLocation = try backend.makeLocation()
        defer { backend.removeLocation(copyLocation) }
        let destination = copyLocation.appendingPathComponent("backup", isDirectory: true)
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let m = store.table(named: Tables.fixed)
            try store.writeAndWait { txn throws in
                for i: UInt8 in 0..<50 { try txn.put([i], forKey: [i], in: a) }
                try txn.addValue(be(1), forKey: [1], in: m)
                try txn.addValue(be(2), forKey: [1], in: m)
            }
            try store.sync()
            guard backend.backsUpToDirectory else {
                #expect(throws: StorageError.self, "a server's store is backed up with the server's tools") {
                    try store.backup(to: destination)
                }
                return
            }
            try store.backup(to: destination)
            // Writes after the backup are not in it.
            try store.writeAndWait { txn throws in try txn.put([0], forKey: [200], in: a) }
        }
        guard backend.backsUpToDirectory else { return }
        #expect(B.Store.storeExists(at: destination))
        var configuration = Tables.configuration
        configuration.createsMissingTables = false
        let copy = try B.Store.open(at: destination, configuration: configuration)
        defer { copy.close() }
        try copy.read { txn throws in
            #expect(try txn.entries(copy.table(named: Tables.a)) == (0..<50).map { Entry([UInt8($0)], [UInt8($0)]) })
            #expect(try txn.entries(copy.table(named: Tables.fixed)) == [Entry([1], be(1)), Entry([1], be(2))])
            #expect(try txn.layout(of: copy.table(named: Tables.fixed)) == .multiValue(fixedSizeValues: true))
        }
    }
}
