import Foundation
import Testing

@testable import FogKit

/// FNV-1a hashes are stored (hashed index values, change token checksums): the contiguous
/// fast path must give the published values, as the byte-by-byte path does.
@Suite struct Fnv1aTests {
    /// Published FNV-1a 64-bit test vectors.
    static let vectors: [(String, UInt64)] = [
        ("", 0xcbf2_9ce4_8422_2325), ("a", 0xaf63_dc4c_8601_ec8c), ("foobar", 0x8594_4171_f739_67e8),
    ]

    @Test func contiguousAndIteratedBytesGiveThePublishedHashes() {
        for (text, expected) in Self.vectors {
            #expect(fnv1a(text.utf8) == expected)
            #expect(fnv1a(Array(text.utf8)) == expected)
            // A sequence without contiguous storage takes the iterator.
            #expect(fnv1a(text.utf8.lazy.map { $0 }) == expected)
        }
    }

    @Test func bothPathsAgreeOnLongerText() {
        let text = String(repeating: "é0\u{0}x", count: 100)
        #expect(fnv1a(text.utf8) == fnv1a(text.utf8.lazy.map { $0 }))
        #expect(fnv1a(Data(text.utf8)) == fnv1a(AnySequence(text.utf8)))
        // Slices that do not start at 0, as change token checksums pass them.
        let bytes = Array(text.utf8)
        #expect(fnv1a(bytes[7...]) == fnv1a(bytes[7...].lazy.map { $0 }))
        #expect(fnv1a(Data(bytes)[9..<300]) == fnv1a(bytes[9..<300].lazy.map { $0 }))
    }
}
