import FogKitTesting
import FogStorage
import Foundation
import Testing

/// Keys are kept in byte order, and scans honour every shape of range in both directions.
@Suite struct OrderingAndRangeTests {
    @Test(arguments: allBackends) func keysAreInByteOrder(_ b: Backend) throws { try keysAreInByteOrder(b.backend) }
    @Test(arguments: allBackends) func rangeBoundsAreHonouredBothWays(_ b: Backend) throws { try rangeBounds(b.backend) }
    @Test(arguments: allBackends) func emptyRangesVisitNothing(_ b: Backend) throws { try emptyRanges(b.backend) }
    @Test(arguments: allBackends) func prefixesWithFFBytes(_ b: Backend) throws { try prefixesWithFF(b.backend) }
    @Test(arguments: allBackends) func scansStopWhenAsked(_ b: Backend) throws { try scansStop(b.backend) }
    @Test(arguments: allBackends) func randomRangesMatchAModel(_ b: Backend) throws { try randomRanges(b.backend) }

    /// Shorter keys sort before their extensions; bytes compare unsigned; 0x00 and 0xFF
    /// are ordinary bytes.
    func keysAreInByteOrder<B: StoreBackend>(_ backend: B) throws {
        let keys: [[UInt8]] = [
            [0x00], [0x00, 0x00], [0x00, 0xFF], [0x01], [0x01, 0x00], [0x01, 0x00, 0x00], [0x01, 0x01],
            [0x7F], [0x80], [0x80, 0x00], [0xFE, 0xFF, 0xFF], [0xFF], [0xFF, 0x00], [0xFF, 0xFF], [0xFF, 0xFF, 0xFF],
            Array("a".utf8), Array("ab".utf8), Array("b".utf8),
        ]
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            try store.writeAndWait { txn throws in
                for (i, key) in keys.shuffled().enumerated() { try txn.put([UInt8(i)], forKey: key, in: a) }
            }
            let sorted = keys.sorted(by: byteOrder)
            try store.read { txn throws in
                #expect(try txn.keys(a) == sorted)
                #expect(try txn.keys(a, reverse: true) == sorted.reversed())
                #expect(try txn.count(of: a) == keys.count)
            }
        }
    }

    func rangeBounds<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let keys: [[UInt8]] = (1...9).map { [UInt8($0 * 10)] }  // 10, 20, ..., 90
            try store.writeAndWait { txn throws in for key in keys { try txn.put(key, forKey: key, in: a) } }
            try store.read { txn throws in
                func check(_ range: ScanRange, _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
                    #expect(try txn.keys(a, range).map { $0[0] } == expected, "\(range)", sourceLocation: sourceLocation)
                    #expect(
                        try txn.keys(a, range, reverse: true).map { $0[0] } == expected.reversed(), "reverse \(range)",
                        sourceLocation: sourceLocation)
                }
                try check(ScanRange(lower: [30], lowerInclusive: true, upper: [60], upperInclusive: false), [30, 40, 50])
                try check(ScanRange(lower: [30], lowerInclusive: false, upper: [60], upperInclusive: false), [40, 50])
                try check(ScanRange(lower: [30], lowerInclusive: true, upper: [60], upperInclusive: true), [30, 40, 50, 60])
                try check(ScanRange(lower: [30], lowerInclusive: false, upper: [60], upperInclusive: true), [40, 50, 60])
                // Bounds that are not keys.
                try check(ScanRange(lower: [35], upper: [65]), [40, 50, 60])
                try check(ScanRange(lower: [35], lowerInclusive: false, upper: [65], upperInclusive: true), [40, 50, 60])
                // Open bounds, and bounds outside the keys.
                try check(ScanRange(lower: nil, upper: [30]), [10, 20])
                try check(ScanRange(lower: [80], upper: nil), [80, 90])
                try check(ScanRange(lower: [0], upper: [255]), [10, 20, 30, 40, 50, 60, 70, 80, 90])
                try check(ScanRange(lower: [90], lowerInclusive: false, upper: nil), [])
                try check(ScanRange(lower: nil, upper: [10], upperInclusive: false), [])
                try check(.exactly([50]), [50])
                try check(.exactly([55]), [])
                // A longer bound sorts after its prefix: [30, 0] excludes [30].
                try check(ScanRange(lower: [30, 0], upper: [50, 0]), [40, 50])
                try check(ScanRange(lower: [30, 0], upper: [50]), [40])
                // An empty lower bound is below every key.
                try check(ScanRange(lower: [], upper: [30]), [10, 20])
                try check(ScanRange(lower: [], lowerInclusive: false, upper: [30]), [10, 20])
            }
        }
    }

    func emptyRanges<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            try store.read { txn throws in
                #expect(try txn.keys(a).isEmpty, "an empty table")
                #expect(try txn.keys(a, reverse: true).isEmpty)
            }
            try store.writeAndWait { txn throws in for i in 1...5 { try txn.put([], forKey: [UInt8(i)], in: a) } }
            try store.read { txn throws in
                let empty: [ScanRange] = [
                    ScanRange(lower: [3], upper: [3]),  // upper exclusive
                    ScanRange(lower: [3], lowerInclusive: false, upper: [3], upperInclusive: true),
                    ScanRange(lower: [4], upper: [2]),  // lower above upper
                    ScanRange(lower: [4], upper: [2], upperInclusive: true),
                    ScanRange(lower: [9], upper: nil),
                    ScanRange(lower: nil, upper: [1]),
                    ScanRange(lower: nil, upper: []),
                    .prefix([6]),
                ]
                for range in empty {
                    #expect(try txn.keys(a, range).isEmpty, "\(range)")
                    #expect(try txn.keys(a, range, reverse: true).isEmpty, "reverse \(range)")
                }
            }
        }
    }

    func prefixesWithFF<B: StoreBackend>(_ backend: B) throws {
        #expect(ScanRange.successor(ofPrefix: [0x01, 0xFF]) == [0x02])
        #expect(ScanRange.successor(ofPrefix: [0xFF, 0xFF]) == nil)
        #expect(ScanRange.successor(ofPrefix: []) == nil)
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let keys: [[UInt8]] = [
                [0x01], [0x01, 0xFE], [0x01, 0xFF], [0x01, 0xFF, 0x00], [0x01, 0xFF, 0xFF], [0x02], [0x02, 0x00],
                [0xFF], [0xFF, 0xFF], [0xFF, 0xFF, 0x00], [0xFF, 0xFF, 0xFF, 0xFF],
            ]
            try store.writeAndWait { txn throws in for key in keys { try txn.put([1], forKey: key, in: a) } }
            try store.read { txn throws in
                for prefix: [UInt8] in [
                    [0x01], [0x01, 0xFF], [0x01, 0xFF, 0xFF], [0xFF], [0xFF, 0xFF], [0xFF, 0xFF, 0xFF], [0x02], [0x03],
                ] {
                    let expected = keys.filter { $0.starts(with: prefix) }
                    #expect(try txn.keys(a, .prefix(prefix)) == expected, "\(prefix)")
                    #expect(try txn.keys(a, .prefix(prefix), reverse: true) == expected.reversed(), "reverse \(prefix)")
                }
                #expect(try txn.keys(a, .prefix([])) == keys, "the empty prefix holds every key")
            }
        }
    }

    func scansStop<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            try store.writeAndWait { txn throws in for i in 0..<10 { try txn.put([], forKey: [UInt8(i)], in: a) } }
            try store.read { txn throws in
                #expect(try txn.entries(a, limit: 3).map(\.key) == [[0], [1], [2]])
                #expect(try txn.entries(a, reverse: true, limit: 3).map(\.key) == [[9], [8], [7]])
                #expect(try txn.entries(a, .prefix([5]), limit: 1).map(\.key) == [[5]])
            }
        }
    }

    /// Random keys and random ranges against a sorted array.
    func randomRanges<B: StoreBackend>(_ backend: B) throws {
        var rng = SplitMix64(seed: 7)
        func randomKey() -> [UInt8] {
            let alphabet: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF]
            return (0..<Int.random(in: 1...4, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
        }
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let keys = Set((0..<200).map { _ in randomKey() }).sorted(by: byteOrder)
            try store.writeAndWait { txn throws in for key in keys { try txn.put(key, forKey: key, in: a) } }
            try store.read { txn throws in
                for _ in 0..<300 {
                    let range = ScanRange(
                        lower: Bool.random(using: &rng) ? randomKey() : nil, lowerInclusive: Bool.random(using: &rng),
                        upper: Bool.random(using: &rng) ? randomKey() : nil, upperInclusive: Bool.random(using: &rng))
                    let expected = keys.filter { key in
                        let aboveLower = range.lower.map { range.lowerInclusive ? !byteOrder(key, $0) : byteOrder($0, key) } ?? true
                        let belowUpper = range.upper.map { range.upperInclusive ? !byteOrder($0, key) : byteOrder(key, $0) } ?? true
                        return aboveLower && belowUpper
                    }
                    #expect(try txn.keys(a, range) == expected, "\(range)")
                    #expect(try txn.keys(a, range, reverse: true) == expected.reversed(), "reverse \(range)")
                }
            }
        }
    }
}
