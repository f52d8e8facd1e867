import FogStorage
import FogStorageLMDB
import Foundation
import Testing

@Suite struct CursorTests {
    /// Fills table "a" with `count` random keys over an edge-rich alphabet (and
    /// table "b" with decoys), and returns the model of table "a".
    private func fill(
        _ environment: LMDBStore, _ a: Table, _ b: Table, seed: UInt64, count: Int = 400
    ) throws -> [[UInt8]: [UInt8]] {
        var rng = SplitMix64(seed: seed)
        var model: [[UInt8]: [UInt8]] = [:]
        while model.count < count { model[rng.edgyBytes(lengths: 1...5)] = rng.bytes(lengths: 0...16) }
        let decoys = (0..<50).map { _ in rng.edgyBytes(lengths: 1...5) }
        try environment.writeAndWait { [model] txn in
            for (key, value) in model { try txn.put(value, forKey: key, in: a) }
            for key in decoys { try txn.put([0xDD], forKey: key, in: b) }
        }
        return model
    }

    private func expected(_ model: [[UInt8]: [UInt8]], _ range: ScanRange, reverse: Bool) -> [Entry] {
        expected(sortedEntries(model), range, reverse: reverse)
    }

    private func expected(_ sorted: [Entry], _ range: ScanRange, reverse: Bool) -> [Entry] {
        let forward = sorted.filter { contains(range, $0.key) }
        return reverse ? forward.reversed() : forward
    }

    // MARK: - Whole-table scans

    @Test func scanAllVisitsEveryEntryInOrderBothWays() throws {
        try withTestEnvironment { environment, a, b in
            let model = try fill(environment, a, b, seed: 1)
            try environment.read { txn throws in
                #expect(try txn.entries(a) == sortedEntries(model))
                #expect(try txn.entries(a, reverse: true) == sortedEntries(model).reversed())
                #expect(try txn.entries(a, range: ScanRange(lower: nil, upper: nil, upperInclusive: true)) == sortedEntries(model))
            }
        }
    }

    @Test func scanningAnEmptyTableVisitsNothing() throws {
        try withTestEnvironment { environment, a, _ in
            try environment.read { txn throws in
                for reverse in [false, true] {
                    for range in [
                        ScanRange.all, .prefix([1]), ScanRange(lower: [1], upper: [2]), ScanRange(lower: [1], upper: nil),
                        ScanRange(lower: nil, upper: [1], upperInclusive: true),
                    ] {
                        #expect(try txn.entries(a, range: range, reverse: reverse).isEmpty)
                    }
                }
            }
        }
    }

    // MARK: - Ranges

    @Test func boundsAreInclusiveOrExclusiveAsAsked() throws {
        try withTestEnvironment { environment, a, _ in
            try environment.writeAndWait { txn throws in
                for i in [10, 20, 30, 40, 50] { try txn.put([UInt8(i)], forKey: [UInt8(i)], in: a) }
            }
            func keys(_ lower: UInt8?, _ li: Bool, _ upper: UInt8?, _ ui: Bool, reverse: Bool = false) throws -> [UInt8] {
                let range = ScanRange(lower: lower.map { [$0] }, lowerInclusive: li, upper: upper.map { [$0] }, upperInclusive: ui)
                return try environment.read { try $0.keys(a, range: range, reverse: reverse) }.map { $0[0] }
            }
            for reverse in [false, true] {
                func check(_ result: [UInt8], _ ascending: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
                    #expect(result == (reverse ? ascending.reversed() : ascending), "reverse: \(reverse)", sourceLocation: sourceLocation)
                }
                check(try keys(20, true, 40, false, reverse: reverse), [20, 30])
                check(try keys(20, false, 40, false, reverse: reverse), [30])
                check(try keys(20, true, 40, true, reverse: reverse), [20, 30, 40])
                check(try keys(20, false, 40, true, reverse: reverse), [30, 40])
                // Bounds between keys.
                check(try keys(15, true, 45, false, reverse: reverse), [20, 30, 40])
                check(try keys(15, false, 45, true, reverse: reverse), [20, 30, 40])
                // Bounds outside the keys.
                check(try keys(0, true, 255, true, reverse: reverse), [10, 20, 30, 40, 50])
                check(try keys(50, true, nil, false, reverse: reverse), [50])
                check(try keys(50, false, nil, false, reverse: reverse), [])
                check(try keys(nil, true, 10, true, reverse: reverse), [10])
                check(try keys(nil, true, 10, false, reverse: reverse), [])
                check(try keys(51, true, nil, false, reverse: reverse), [])
                check(try keys(nil, true, 9, true, reverse: reverse), [])
                // Empty ranges.
                check(try keys(30, true, 30, false, reverse: reverse), [])
                check(try keys(30, false, 30, true, reverse: reverse), [])
                check(try keys(30, true, 30, true, reverse: reverse), [30])
                check(try keys(40, true, 20, true, reverse: reverse), [])
                check(try keys(21, true, 29, true, reverse: reverse), [])
            }
        }
    }

    @Test func randomRangesMatchASortedModel() throws {
        try withTestEnvironment { environment, a, b in
            let model = try fill(environment, a, b, seed: 2)
            let keys = Array(model.keys)
            let sorted = sortedEntries(model)
            var rng = SplitMix64(seed: 3)
            func bound() -> [UInt8]? {
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: nil
                case 1, 2: keys.randomElement(using: &rng)!  // an existing key
                default: rng.edgyBytes(lengths: 1...6)  // usually absent
                }
            }
            try environment.read { txn throws in
                for _ in 0..<600 {
                    let range = ScanRange(
                        lower: bound(), lowerInclusive: Bool.random(using: &rng),
                        upper: bound(), upperInclusive: Bool.random(using: &rng))
                    let reverse = Bool.random(using: &rng)
                    let actual = try txn.entries(a, range: range, reverse: reverse)
                    let wanted = expected(sorted, range, reverse: reverse)
                    #expect(actual == wanted, "\(range) reverse: \(reverse)")
                    if actual != wanted { return }
                }
            }
        }
    }

    @Test func prefixScansMatchASortedModel() throws {
        try withTestEnvironment { environment, a, b in
            var model = try fill(environment, a, b, seed: 4)
            // Keys made of 0xFF only, which have no prefix successor.
            try environment.writeAndWait { txn throws in
                for n in 1...4 { try txn.put([UInt8(n)], forKey: Array(repeating: 0xFF, count: n), in: a) }
            }
            for n in 1...4 { model[Array(repeating: 0xFF, count: n)] = [UInt8(n)] }
            var rng = SplitMix64(seed: 5)
            var prefixes: [[UInt8]] = [
                [0x00], [0xFF], [0xFF, 0xFF], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF], [0x00, 0xFF], [0x7F, 0xFF, 0xFF],
                [0x42], [0x80, 0x00],
            ]
            for _ in 0..<150 {
                let key = model.keys.randomElement(using: &rng)!
                prefixes.append(Array(key.prefix(Int.random(in: 1...key.count, using: &rng))))
            }
            let sorted = sortedEntries(model)
            try environment.read { txn throws in
                for prefix in prefixes {
                    let wanted = sorted.filter { $0.key.starts(with: prefix) }
                    #expect(try txn.entries(a, range: .prefix(prefix)) == wanted, "prefix \(prefix)")
                    #expect(try txn.entries(a, range: .prefix(prefix), reverse: true) == wanted.reversed(), "prefix \(prefix) reversed")
                }
            }
        }
    }

    @Test func anEmptyPrefixScansTheWholeTable() throws {
        try withTestEnvironment { environment, a, b in
            let model = try fill(environment, a, b, seed: 6, count: 50)
            let range = ScanRange.prefix([])
            #expect(range.lower == [])
            #expect(range.upper == nil)
            try environment.read { txn throws in
                #expect(try txn.entries(a, range: range) == sortedEntries(model))
                #expect(try txn.entries(a, range: range, reverse: true) == sortedEntries(model).reversed())
            }
        }
    }

    @Test func emptyByteStringBoundsActAsTheSmallestKey() throws {
        // The empty string sorts before every key: as an inclusive or exclusive
        // lower bound it excludes nothing, as an upper bound it excludes everything.
        try withTestEnvironment { environment, a, b in
            let model = try fill(environment, a, b, seed: 7, count: 50)
            try environment.read { txn throws in
                for reverse in [false, true] {
                    for range in [
                        ScanRange(lower: [], lowerInclusive: true, upper: nil), ScanRange(lower: [], lowerInclusive: false, upper: nil),
                        ScanRange(lower: [], upper: [], upperInclusive: true), ScanRange(lower: nil, upper: []),
                    ] {
                        #expect(
                            try txn.entries(a, range: range, reverse: reverse) == expected(model, range, reverse: reverse),
                            "\(range) reverse: \(reverse)")
                    }
                }
            }
        }
    }

    @Test func returningFalseStopsTheScan() throws {
        try withTestEnvironment { environment, a, b in
            let model = try fill(environment, a, b, seed: 8, count: 100)
            let sorted = sortedEntries(model)
            try environment.read { txn throws in
                for reverse in [false, true] {
                    for limit in [1, 2, 37, 100] {
                        var visited: [Entry] = []
                        try txn.scan(a, reverse: reverse) { key, value in
                            visited.append(Entry(key: Array(key), value: Array(value)))
                            return visited.count < limit
                        }
                        let all = reverse ? Array(sorted.reversed()) : sorted
                        #expect(visited == Array(all.prefix(limit)), "limit \(limit) reverse: \(reverse)")
                    }
                    // Stopping inside a bounded range.
                    let range = ScanRange(lower: sorted[10].key, upper: sorted[60].key)
                    var count = 0
                    try txn.scan(a, range: range, reverse: reverse) { _, _ in
                        count += 1
                        return count < 5
                    }
                    #expect(count == 5)
                }
            }
        }
    }

    @Test func errorsThrownByTheBodyPropagate() throws {
        try withTestEnvironment { environment, a, _ in
            try environment.writeAndWait { txn in for i in 0..<10 { try txn.put([], forKey: key(i), in: a) } }
            var visited = 0
            #expect(throws: TestError(id: 3)) {
                try environment.read { txn throws in
                    try txn.scan(a) { _, _ in
                        visited += 1
                        if visited == 3 { throw TestError(id: 3) }
                        return true
                    }
                }
            }
            #expect(visited == 3)
            // The reader went back to the pool in a usable state.
            #expect(try environment.read { try $0.count(of: a) } == 10)
        }
    }

    // MARK: - Cursors

    @Test func cursorScanAndCloseTwice() throws {
        try withTestEnvironment { environment, a, b in
            let model = try fill(environment, a, b, seed: 9, count: 60)
            try environment.read { txn throws in
                let cursor = try txn.cursor(on: a)
                var keys: [[UInt8]] = []
                try cursor.scan(range: .all, reverse: false) { key, _ in
                    keys.append(Array(key))
                    return true
                }
                #expect(keys == sortedEntries(model).map(\.key))
                // The same cursor can scan again, backwards.
                keys = []
                try cursor.scan(range: .all, reverse: true) { key, _ in
                    keys.append(Array(key))
                    return true
                }
                #expect(keys == sortedEntries(model).map(\.key).reversed())
                cursor.close()
                cursor.close()
            }
        }
    }

    @Test func seekAtLeastFindsTheFirstKeyNotBelow() throws {
        try withTestEnvironment { environment, a, b in
            try environment.read { txn throws in
                let cursor = try txn.cursor(on: a)
                defer { cursor.close() }
                #expect(try cursor.seek(atLeast: [0x00]) == nil, "empty table")
            }
            let model = try fill(environment, a, b, seed: 10)
            let sorted = sortedEntries(model).map(\.key)
            var rng = SplitMix64(seed: 11)
            try environment.read { txn throws in
                let cursor = try txn.cursor(on: a)
                defer { cursor.close() }
                #expect(try cursor.seek(atLeast: sorted[0]) == sorted[0])
                #expect(try cursor.seek(atLeast: sorted[17]) == sorted[17])
                #expect(try cursor.seek(atLeast: sorted[17] + [0x00]) == sorted[18])
                #expect(try cursor.seek(atLeast: sorted.last!) == sorted.last)
                #expect(try cursor.seek(atLeast: sorted.last! + [0x00]) == nil)
                #expect(try cursor.seek(atLeast: Array(repeating: 0xFF, count: 10)) == nil)
                for _ in 0..<300 {
                    let probe = rng.edgyBytes(lengths: 1...6)
                    let wanted = sorted.first { !precedes($0, probe) }
                    #expect(try cursor.seek(atLeast: probe) == wanted, "seek \(probe)")
                }
            }
        }
    }

    @Test func seekAtLeastTheEmptyKeyFindsTheFirstKey() throws {
        try withTestEnvironment { environment, a, _ in
            try environment.writeAndWait { txn throws in
                try txn.put([], forKey: [0x05], in: a)
                try txn.put([], forKey: [0x00], in: a)
            }
            try environment.read { txn throws in
                let cursor = try txn.cursor(on: a)
                defer { cursor.close() }
                #expect(try cursor.seek(atLeast: []) == [0x00])
            }
        }
    }

    @Test func scansSeeTheirOwnTransactionsWrites() throws {
        try withTestEnvironment { environment, a, _ in
            try environment.writeAndWait { txn in for i in 0..<5 { try txn.put([], forKey: key(i * 2), in: a) } }
            let keys = try environment.writeAndWait { txn throws in
                try txn.put([], forKey: key(3), in: a)
                try txn.delete(key(4), in: a)
                return try txn.keys(a)
            }
            #expect(keys == [0, 2, 3, 6, 8].map(key))
        }
    }

    // MARK: - Prefix successors

    @Test func successorOfPrefixEdgeCases() {
        #expect(ScanRange.successor(ofPrefix: []) == nil)
        #expect(ScanRange.successor(ofPrefix: [0xFF]) == nil)
        #expect(ScanRange.successor(ofPrefix: [0xFF, 0xFF, 0xFF]) == nil)
        #expect(ScanRange.successor(ofPrefix: [0x00]) == [0x01])
        #expect(ScanRange.successor(ofPrefix: [0xFE]) == [0xFF])
        #expect(ScanRange.successor(ofPrefix: [0x12, 0x34]) == [0x12, 0x35])
        #expect(ScanRange.successor(ofPrefix: [0x01, 0xFF]) == [0x02])
        #expect(ScanRange.successor(ofPrefix: [0x01, 0xFF, 0xFF]) == [0x02])
        #expect(ScanRange.successor(ofPrefix: [0x01, 0xFE, 0xFF]) == [0x01, 0xFF])
        #expect(ScanRange.successor(ofPrefix: [0xFF, 0x00]) == [0xFF, 0x01])
        #expect(ScanRange.successor(ofPrefix: [0xFF, 0x00, 0xFF]) == [0xFF, 0x01])
        #expect(ScanRange.successor(ofPrefix: [0x00, 0x00]) == [0x00, 0x01])
    }

    @Test func successorOfPrefixIsTheSmallestStringAboveThePrefixedOnes() {
        var rng = SplitMix64(seed: 12)
        for _ in 0..<2000 {
            let prefix = rng.edgyBytes(lengths: 0...5)
            guard let successor = ScanRange.successor(ofPrefix: prefix) else {
                #expect(prefix.allSatisfy { $0 == 0xFF })
                continue
            }
            #expect(!successor.starts(with: prefix))
            #expect(precedes(prefix, successor))
            // Above every extension of the prefix...
            let extended = prefix + rng.edgyBytes(lengths: 0...4)
            #expect(precedes(extended, successor), "\(extended) < \(successor)")
            // ...and nothing between the prefix and it lacks the prefix.
            let other = rng.edgyBytes(lengths: 1...6)
            if !precedes(other, prefix) && precedes(other, successor) {
                #expect(other.starts(with: prefix), "\(other) between \(prefix) and \(successor)")
            }
        }
    }

    @Test func prefixRangeHasTheExpectedBounds() {
        let range = ScanRange.prefix([0x01, 0xFF])
        #expect(range.lower == [0x01, 0xFF])
        #expect(range.lowerInclusive)
        #expect(range.upper == [0x02])
        #expect(!range.upperInclusive)
        let open = ScanRange.prefix([0xFF, 0xFF])
        #expect(open.lower == [0xFF, 0xFF])
        #expect(open.upper == nil)
        #expect(ScanRange.all.lower == nil && ScanRange.all.upper == nil)
        #expect(ScanRange.all == ScanRange(lower: nil, upper: nil))
    }
}
