import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// The byte loops that check names (`Validation`) against the plain definitions they stand
/// for, on random strings: identifiers, printable ASCII, and the reserved field keys (told
/// apart by length before they are hashed).
@Suite struct NameCheckTests {
    /// Characters a name is made of: letters, digits, `_`, space, other ASCII punctuation,
    /// control characters, DEL and characters outside ASCII.
    static let alphabet: [Character] = Array("aZz_09 -.~\t\u{7F}\u{1F}éü😀") + ["A", "m", "5"]

    static func randomName(_ rng: inout some RandomNumberGenerator) -> String {
        let length = Int.random(in: 0...12, using: &rng)
        return String((0..<length).map { _ in alphabet.randomElement(using: &rng)! })
    }

    static func isIdentifierByDefinition(_ s: String) -> Bool {
        let bytes = Array(s.utf8)
        func isLetter(_ c: UInt8) -> Bool { (65...90).contains(c) || (97...122).contains(c) }
        guard let first = bytes.first, bytes.count <= Validation.maximumNameLength, isLetter(first) else { return false }
        return bytes.allSatisfy { isLetter($0) || (48...57).contains($0) || $0 == 95 }
    }

    @Test func identifiersAndPrintableASCIIMatchTheirDefinitions() {
        var rng = SplitMix64(seed: 0x4E41_4D45)
        for _ in 0..<5_000 {
            let s = Self.randomName(&rng)
            #expect(Validation.isIdentifier(s) == Self.isIdentifierByDefinition(s), "\(s.debugDescription)")
            #expect(Validation.isPrintableASCII(s) == s.utf8.allSatisfy { (0x20..<0x7F).contains($0) }, "\(s.debugDescription)")
        }
        // Longer names, checked eight bytes at a time, with every ASCII byte at every place.
        for _ in 0..<2_000 {
            let s = String((0..<Int.random(in: 0...40, using: &rng)).map { _ in Self.alphabet.randomElement(using: &rng)! })
            #expect(Validation.isPrintableASCII(s) == s.utf8.allSatisfy { (0x20..<0x7F).contains($0) }, "\(s.debugDescription)")
        }
        for byte in UInt8(0)...UInt8(0x7F) {
            for place in 0..<17 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 17)
                bytes[place] = byte
                let s = String(decoding: bytes, as: UTF8.self)
                #expect(Validation.isPrintableASCII(s) == (0x20..<0x7F).contains(byte), "byte \(byte) at \(place)")
            }
        }
        #expect(Validation.isIdentifier(String(repeating: "k", count: 255)))
        #expect(!Validation.isIdentifier(String(repeating: "k", count: 256)))
    }

    @Test func reservedFieldKeysAreFoundWhateverTheirLength() {
        for key in Validation.reservedFieldKeys {
            #expect(Validation.isReservedFieldKey(key), "\(key)")
            // Keys of the same length, or one longer or shorter, that are not reserved.
            for other in [String(key.dropLast()) + "x", key + "s", String(key.dropFirst())]
            where !Validation.reservedFieldKeys.contains(other) {
                #expect(!Validation.isReservedFieldKey(other), "\(other)")
            }
        }
        var rng = SplitMix64(seed: 0x5245_5345)
        for _ in 0..<2_000 {
            let s = Self.randomName(&rng)
            #expect(Validation.isReservedFieldKey(s) == Validation.reservedFieldKeys.contains(s), "\(s.debugDescription)")
        }
        #expect(!Validation.isReservedFieldKey(String(repeating: "k", count: 200)))
    }
}
