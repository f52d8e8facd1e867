import FogStorage
import FogStorageLMDB
import Foundation
import Testing

/// Tables with sorted duplicates: pairs are added, removed, counted and scanned (whole
/// ranges, and from a position inside a key's values), matching a sorted model.
@Suite struct DuplicateTests {
    /// Tables "a" (sorted, fixed-size duplicates) and "b" (plain).
    static func configuration(initialMapSize: Int = 64 << 20) -> LMDBStore.Configuration {
        var configuration = testConfiguration(initialMapSize: initialMapSize)
        configuration.tableLayouts = ["a": .multiValue(fixedSizeValues: true)]
        return configuration
    }

    /// A pair of the model: an edgy key and an 8-byte value.
    struct Pair: Hashable, Comparable, CustomStringConvertible {
        var key: [UInt8]
        var value: [UInt8]
        static func < (a: Pair, b: Pair) -> Bool {
            a.key != b.key ? precedes(a.key, b.key) : precedes(a.value, b.value)
        }
        var description: String { "\(key)/\(decode(value))" }
    }

    /// Fills "a" with random pairs whose keys repeat (few keys, many values each).
    private func fill(_ environment: LMDBStore, _ a: Table, seed: UInt64, count: Int = 600) throws -> [Pair] {
        var rng = SplitMix64(seed: seed)
        let keys = (0..<40).map { _ in rng.edgyBytes(lengths: 1...4) }
        var model: Set<Pair> = []
        while model.count < count {
            // Values over a small range, so that positions often hit stored values.
            model.insert(Pair(key: keys.randomElement(using: &rng)!, value: encode(UInt64.random(in: 1...400, using: &rng))))
        }
        try environment.writeAndWait { [model] txn throws in
            for pair in model { #expect(try txn.addValue(pair.value, forKey: pair.key, in: a)) }
        }
        return model.sorted()
    }

    private func pairs(_ txn: LMDBReadTransaction, _ table: Table, range: ScanRange = .all, reverse: Bool = false) throws -> [Pair] {
        var result: [Pair] = []
        try txn.scan(table, range: range, reverse: reverse) { key, value in
            result.append(Pair(key: Array(key), value: Array(value)))
            return true
        }
        return result
    }

    @Test func tablesReportTheirLayouts() throws {
        try withTestEnvironment(configuration: Self.configuration()) { environment, a, b in
            try environment.read { txn throws in
                #expect(try txn.layout(of: a) == .multiValue(fixedSizeValues: true))
                #expect(try txn.layout(of: b) == .singleValue)
            }
        }
    }

    @Test func pairsAreAddedCountedAndRemovedOneByOne() throws {
        try withTestEnvironment(configuration: Self.configuration()) { environment, a, _ in
            try environment.writeAndWait { txn throws in
                #expect(try txn.addValue(encode(2), forKey: [7], in: a))
                #expect(try txn.addValue(encode(1), forKey: [7], in: a))
                #expect(try !txn.addValue(encode(2), forKey: [7], in: a))
                // A plain put adds a pair too, and tolerates one that is there.
                try txn.put(encode(3), forKey: [7], in: a)
                try txn.put(encode(3), forKey: [7], in: a)
                try txn.put(encode(9), forKey: [8], in: a)
            }
            try environment.read { txn throws in
                #expect(try txn.count(of: a) == 4)
                #expect(try txn.valueCount(forKey: [7], in: a) == 3)
                #expect(try txn.valueCount(forKey: [8], in: a) == 1)
                #expect(try txn.valueCount(forKey: [9], in: a) == 0)
                #expect(try txn.valueCount(forKey: [], in: a) == 0)
                #expect(try txn.value(forKey: [7], in: a) == encode(1), "a get finds the key's first value")
                #expect(try pairs(txn, a).map(\.description) == ["[7]/1", "[7]/2", "[7]/3", "[8]/9"])
            }
            try environment.writeAndWait { txn throws in
                #expect(try txn.removeValue(encode(2), forKey: [7], in: a))
                #expect(try !txn.removeValue(encode(2), forKey: [7], in: a))
                #expect(try !txn.removeValue(encode(9), forKey: [7], in: a))
                #expect(try txn.removeValue(encode(9), forKey: [8], in: a))
            }
            try environment.read { txn throws in
                #expect(try pairs(txn, a).map(\.description) == ["[7]/1", "[7]/3"])
            }
            try environment.writeAndWait { txn throws in #expect(try txn.delete([7], in: a)) }
            try environment.read { txn throws in #expect(try txn.count(of: a) == 0) }
        }
    }

    @Test func pairOperationsRefuseATableWithoutDuplicates() throws {
        try withTestEnvironment(configuration: Self.configuration()) { environment, _, b in
            try environment.writeAndWait { txn throws in
                try txn.put([1], forKey: [1], in: b)
                #expect(throws: StorageError.incompatible) { try txn.addValue([2], forKey: [1], in: b) }
                #expect(throws: StorageError.incompatible) { try txn.appendValue([2], forKey: [2], in: b) }
                #expect(throws: StorageError.incompatible) { try txn.removeValue([2], forKey: [1], in: b) }
                #expect(throws: StorageError.incompatible) { try txn.scan(b, after: ([1], [1])) { _, _ in true } }
                #expect(try txn.valueCount(forKey: [1], in: b) == 1)
                #expect(try txn.value(forKey: [1], in: b) == [1], "the refused delete left the key")
            }
        }
    }

    @Test func rangeScansVisitEveryPairInOrderBothWays() throws {
        try withTestEnvironment(configuration: Self.configuration()) { environment, a, _ in
            let model = try fill(environment, a, seed: 1)
            let keys = Array(Set(model.map(\.key)))
            var rng = SplitMix64(seed: 2)
            func bound() -> [UInt8]? {
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: nil
                case 1, 2: keys.randomElement(using: &rng)!
                default: rng.edgyBytes(lengths: 0...5)
                }
            }
            try environment.read { txn throws in
                #expect(try pairs(txn, a) == model)
                #expect(try pairs(txn, a, reverse: true) == model.reversed())
                #expect(try txn.count(of: a) == model.count)
                for key in keys {
                    #expect(try txn.valueCount(forKey: key, in: a) == model.filter { $0.key == key }.count)
                    let exact = model.filter { $0.key == key }
                    #expect(try pairs(txn, a, range: .exactly(key)) == exact)
                    #expect(try pairs(txn, a, range: .exactly(key), reverse: true) == exact.reversed())
                }
                for _ in 0..<600 {
                    let range = ScanRange(
                        lower: bound(), lowerInclusive: Bool.random(using: &rng), upper: bound(), upperInclusive: Bool.random(using: &rng))
                    let reverse = Bool.random(using: &rng)
                    let forward = model.filter { contains(range, $0.key) }
                    let wanted = reverse ? forward.reversed() : forward
                    let actual = try pairs(txn, a, range: range, reverse: reverse)
                    #expect(actual == wanted, "\(range) reverse: \(reverse)")
                    if actual != wanted { return }
                }
            }
        }
    }

    @Test func scansResumeStrictlyAfterAPositionBothWays() throws {
        try withTestEnvironment(configuration: Self.configuration()) { environment, a, _ in
            let model = try fill(environment, a, seed: 3)
            let keys = Array(Set(model.map(\.key)))
            var rng = SplitMix64(seed: 4)
            func bound() -> [UInt8]? {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0, 1: nil
                case 2: keys.randomElement(using: &rng)!
                default: rng.edgyBytes(lengths: 0...5)
                }
            }
            func position() -> Pair {
                switch Int.random(in: 0..<6, using: &rng) {
                case 0, 1: return model.randomElement(using: &rng)!
                case 2: return Pair(key: keys.randomElement(using: &rng)!, value: encode(UInt64.random(in: 0...401, using: &rng)))
                case 3: return Pair(key: keys.randomElement(using: &rng)!, value: [])
                case 4: return Pair(key: rng.edgyBytes(lengths: 0...5), value: encode(UInt64.random(in: 0...401, using: &rng)))
                default: return Pair(key: keys.randomElement(using: &rng)!, value: [UInt8](repeating: 0xFF, count: 9))
                }
            }
            try environment.read { txn throws in
                for _ in 0..<1_500 {
                    let range = ScanRange(
                        lower: bound(), lowerInclusive: Bool.random(using: &rng), upper: bound(), upperInclusive: Bool.random(using: &rng))
                    let reverse = Bool.random(using: &rng)
                    let after = position()
                    let inRange = model.filter { contains(range, $0.key) }
                    let wanted = reverse ? inRange.filter { $0 < after }.reversed() : inRange.filter { after < $0 }
                    var actual: [Pair] = []
                    try txn.scan(a, range: range, reverse: reverse, after: (after.key, after.value)) { key, value in
                        actual.append(Pair(key: Array(key), value: Array(value)))
                        return true
                    }
                    #expect(actual == wanted, "\(range) reverse: \(reverse) after \(after)")
                    if actual != wanted { return }
                }
            }
        }
    }

    @Test func deleteAllRemovesEveryPairOfTheRange() throws {
        try withTestEnvironment(configuration: Self.configuration()) { environment, a, _ in
            let model = try fill(environment, a, seed: 5)
            let keys = Set(model.map(\.key)).sorted(by: precedes)
            let range = ScanRange(lower: keys[5], lowerInclusive: false, upper: keys[20], upperInclusive: true)
            let removed = try environment.writeAndWait { txn throws in try txn.deleteAll(in: a, range: range) }
            #expect(removed == model.filter { contains(range, $0.key) }.count)
            try environment.read { txn throws in
                #expect(try pairs(txn, a) == model.filter { !contains(range, $0.key) })
            }
        }
    }

    @Test func insertingWithTheAppendingHintStoresTheSamePairsInAnyOrder() throws {
        try withTestEnvironment(configuration: Self.configuration()) { environment, a, _ in
            var rng = SplitMix64(seed: 7)
            var model: Set<Pair> = []
            // Rows mostly increasing, as new records' are, with older ones mixed in, so that
            // keys with one value, with a sub-page and with a sub-tree all see hints that hold
            // and hints that do not.
            var next: UInt64 = 1_000
            try environment.writeAndWait { txn throws in
                for i in 0..<6_000 {
                    let k = key(i % 7 == 0 ? Int.random(in: 0..<1_000, using: &rng) : Int.random(in: 0..<5, using: &rng))
                    let row: UInt64
                    if Int.random(in: 0..<4, using: &rng) == 0 {
                        row = UInt64.random(in: 1...next, using: &rng)
                    } else {
                        next += 1
                        row = next
                    }
                    let pair = Pair(key: k, value: encode(row))
                    #expect(try txn.addValue(pair.value, forKey: pair.key, in: a, appending: true) == model.insert(pair).inserted)
                }
            }
            try environment.read { txn throws in
                #expect(try pairs(txn, a) == model.sorted())
                #expect(try txn.count(of: a) == model.count)
            }
        }
    }

    @Test func appendingInOrderStoresTheSamePairs() throws {
        try withTestEnvironment(configuration: Self.configuration()) { environment, a, _ in
            var rng = SplitMix64(seed: 6)
            var model: Set<Pair> = []
            while model.count < 2_000 {
                model.insert(
                    Pair(key: key(Int.random(in: 0..<300, using: &rng)), value: encode(UInt64.random(in: 1...100_000, using: &rng))))
            }
            let sorted = model.sorted()
            try environment.writeAndWait { txn throws in
                for pair in sorted { try txn.appendValue(pair.value, forKey: pair.key, in: a) }
                // Out of order: a pair that is there, or below its key's last value.
                #expect(throws: StorageError.keyExists) { try txn.appendValue(sorted.last!.value, forKey: sorted.last!.key, in: a) }
                #expect(throws: StorageError.keyExists) { try txn.appendValue(encode(0), forKey: sorted.last!.key, in: a) }
            }
            try environment.read { txn throws in #expect(try pairs(txn, a) == sorted) }
        }
    }

    // MARK: - Recreating a table with other options

    @Test func anExistingTableKeepsItsLayoutUntilReplaced() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appending("env")
            do {
                let environment = try LMDBStore.open(directory: url, configuration: testConfiguration())
                let a = environment.table(named: "a")
                try environment.writeAndWait { txn throws in try txn.put([1], forKey: [1], in: a) }
                environment.close()
            }
            let environment = try LMDBStore.open(directory: url, configuration: Self.configuration())
            defer { environment.close() }
            let a = environment.table(named: "a")
            let b = environment.table(named: "b")
            try environment.read { txn throws in
                #expect(try txn.layout(of: a) == .singleValue, "LMDB opens an existing table with its own options")
                #expect(try txn.value(forKey: [1], in: a) == [1])
            }
            // A rolled-back recreate leaves the table as it was, and usable.
            struct Failure: Error {}
            #expect(throws: Failure.self) {
                try environment.writeAloneAndWait { txn throws in
                    try txn.replaceWithEmpty(a)
                    try txn.addValue(encode(1), forKey: [2], in: a)
                    throw Failure()
                }
            }
            try environment.read { txn throws in
                #expect(try txn.layout(of: a) == .singleValue)
                #expect(try txn.value(forKey: [1], in: a) == [1])
            }
            try environment.writeAndWait { txn throws in try txn.put([3], forKey: [3], in: b) }
            // A committed one empties it and gives it the configured options.
            try environment.writeAloneAndWait { txn throws in
                try txn.replaceWithEmpty(a)
                #expect(try txn.layout(of: a) == .multiValue(fixedSizeValues: true))
                #expect(try txn.count(of: a) == 0)
                try txn.addValue(encode(1), forKey: [2], in: a)
                try txn.addValue(encode(2), forKey: [2], in: a)
            }
            try environment.read { txn throws in
                #expect(try txn.layout(of: a) == .multiValue(fixedSizeValues: true))
                #expect(try txn.valueCount(forKey: [2], in: a) == 2)
                #expect(try txn.value(forKey: [1], in: a) == nil)
                #expect(try txn.value(forKey: [3], in: b) == [3], "other tables are untouched")
            }
        }
    }

    @Test func aRecreateThatFillsTheMapIsReplayed() throws {
        try withTemporaryDirectory { directory in
            let url = directory.appending("env")
            do {
                let environment = try LMDBStore.open(directory: url, configuration: testConfiguration(initialMapSize: 256 << 10))
                let a = environment.table(named: "a")
                try environment.writeAndWait { txn throws in
                    for i in 0..<100 { try txn.put(encode(UInt64(i)), forKey: key(i), in: a) }
                }
                environment.close()
            }
            let environment = try LMDBStore.open(directory: url, configuration: Self.configuration(initialMapSize: 256 << 10))
            defer { environment.close() }
            let a = environment.table(named: "a")
            let runs = try environment.writeAloneAndWait { txn throws -> Int in
                try txn.replaceWithEmpty(a)
                for i in 0..<20_000 { try txn.addValue(encode(UInt64(i)), forKey: key(i % 50), in: a) }
                return 1
            }
            #expect(runs == 1)
            #expect(try environment.statistics().mapSize > 256 << 10, "the map grew, so the transaction was replayed")
            try environment.read { txn throws in
                #expect(try txn.layout(of: a) == .multiValue(fixedSizeValues: true))
                #expect(try txn.count(of: a) == 20_000)
                #expect(try txn.valueCount(forKey: key(7), in: a) == 400)
            }
            environment.close()
            let reopened = try LMDBStore.open(directory: url, configuration: testConfiguration())
            defer { reopened.close() }
            try reopened.read { txn throws in
                #expect(try txn.layout(of: reopened.table(named: "a")) == .multiValue(fixedSizeValues: true))
            }
        }
    }
}
