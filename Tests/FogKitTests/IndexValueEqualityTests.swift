import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// `IndexValue`'s `==` compares integers, hashes and short strings without encoding them, and
/// `unique` drops repeats by a scan for short lists: both must agree with the encoding, which
/// is what an index entry holds.
@Suite struct IndexValueEqualityTests {
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
            // Long by their escaped length though their bytes are fewer than the cut: they
            // share the kept prefix, so their keys are equal.
            String(repeating: "\u{0}", count: cut / 2) + "1", String(repeating: "\u{0}", count: cut / 2) + "2",
        ]
    }()

    private static func value(_ g: inout SplitMix64) -> IndexValue {
        switch g.int(0...7) {
        case 0: .null
        case 1, 2: .string(g.pick(strings))
        case 3: .int(g.pick([0, 1, -1, 42, .max, .min]))
        case 4: .double(g.pick([0.0, -0.0, 1.0, 42.0, .nan, .infinity]))
        case 5: .date(g.pick([0.0, -0.0, 1.5]))
        case 6: .bytes(Data(g.pick(strings).utf8))
        default: .hash(g.pick([0, 7, -7]))
        }
    }

    @Test func equalityAgreesWithTheEncoding() {
        var g = SplitMix64(seed: 1)
        for _ in 0..<20_000 {
            let (a, b) = (Self.value(&g), Self.value(&g))
            #expect((a == b) == (a.encoded == b.encoded), "\(a) and \(b)")
            if a == b { #expect(a.hashValue == b.hashValue, "\(a) and \(b)") }
        }
    }

    @Test(arguments: [0, 1, 3, 16, 17, 40])
    func uniqueKeepsTheFirstOfEachEncoding(count: Int) {
        var g = SplitMix64(seed: UInt64(count) + 7)
        for _ in 0..<500 {
            let values = (0..<count).map { _ in Self.value(&g) }
            var seen = Set<[UInt8]>()
            let expected = values.filter { seen.insert($0.encoded).inserted }
            let kept = IndexValue.unique(values)
            #expect(kept.map(\.encoded) == expected.map(\.encoded))
            // The first of each group, not another with the same encoding (`.int(0)` and
            // `.hash(0)`, `0.0` and `-0.0`).
            #expect(kept.map(\.description) == expected.map(\.description))
        }
    }
}
