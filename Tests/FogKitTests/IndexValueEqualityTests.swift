import Foundation
import Testing

// IndexValue's `==` compares integers, hashes and short strings without encoding them, and
// `unique` drops repeats by a scan for short lists: both must agree with the encoding, which
// is what an index entry holds.
@testable import FogKit

@Suite struct IndexValueEqualityTests {
    /// A small generator (SplitMix64), so that every run checks the same values.
    private struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    /// Strings that collide in interesting ways: canonically equivalent spellings, a NUL
    /// that the encoding escapes, lengths around where keys are cut, and long strings that
    /// share the kept prefix.
    private static let strings: [String] = {
        let cut = IndexValue.maximumKeptLength
        let long = String(repeating: "x", count: cut)
        return [
            "", "a", "b", "ab", "\u{e9}", "e\u{301}", "a\u{0}", "a\u{0}b", "t42",
            String(repeating: "y", count: cut / 2), String(repeating: "y", count: cut / 2 + 1),
            String(repeating: "\u{0}", count: cut / 2 + 1), long, long + "1", long + "2", long + "\u{0}",
        ]
    }()

    private static func value(_ g: inout Generator) -> IndexValue {
        switch g.below(8) {
        case 0: .null
        case 1, 2: .string(strings[g.below(strings.count)])
        case 3: .int([0, 1, -1, 42, .max, .min][g.below(6)])
        case 4: .double([0.0, -0.0, 1.0, 42.0, .nan, .infinity][g.below(6)])
        case 5: .date([0.0, -0.0, 1.5][g.below(3)])
        case 6: .bytes(Data(strings[g.below(strings.count)].utf8))
        default: .hash([0, 7, -7][g.below(3)])
        }
    }

    @Test func equalityAgreesWithTheEncoding() {
        var g = Generator(state: 1)
        for _ in 0..<20_000 {
            let (a, b) = (Self.value(&g), Self.value(&g))
            #expect((a == b) == (a.encoded == b.encoded), "\(a) and \(b)")
            if a == b { #expect(a.hashValue == b.hashValue, "\(a) and \(b)") }
        }
    }

    @Test(arguments: [0, 1, 3, 16, 17, 40])
    func uniqueKeepsTheFirstOfEachEncoding(count: Int) {
        var g = Generator(state: UInt64(count) + 7)
        for _ in 0..<500 {
            let values = (0..<count).map { _ in Self.value(&g) }
            var seen = Set<[UInt8]>()
            let expected = values.filter { seen.insert($0.encoded).inserted }
            #expect(IndexValue.unique(values).map(\.encoded) == expected.map(\.encoded))
        }
    }
}
