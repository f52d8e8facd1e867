import FogKitTesting
import Testing

@testable import FogKit

/// The ASCII path of full-text tokens against the general one (Foundation's folding, then
/// letters and digits by `Character`).
@Suite struct TextTokensTests {
    /// Both paths' tokens of `text`, in order.
    private func bothPaths(_ text: String) -> (ascii: [String]?, folded: [String]) {
        var asciiTokens: [String] = []
        var asciiSeen: Set<String> = []
        let isASCII = TextTokens.addASCII(text, to: &asciiTokens, seen: &asciiSeen)
        var foldedTokens: [String] = []
        var foldedSeen: Set<String> = []
        TextTokens.addFolded(text, to: &foldedTokens, seen: &foldedSeen)
        return (isASCII ? asciiTokens : nil, foldedTokens)
    }

    @Test func everyASCIICharacterSplitsOrJoinsAsTheFoldingPathSays() {
        for code in UInt8(0)..<0x80 {
            let character = String(UnicodeScalar(code))
            for text in ["ab\(character)Cd", "\(character)", "X\(character)", "\(character)9", "The\(character)\(character)THE end"] {
                let (ascii, folded) = bothPaths(text)
                #expect(ascii == folded, "byte \(code) in \(text.debugDescription)")
            }
        }
    }

    @Test func randomASCIITextGivesTheFoldingPathsTokens() {
        var random = SplitMix64(seed: 0x7E47)
        let pieces = [
            "Hello", "WORLD", "the", "The", "AND", "a", "Z", "z9", "42", "x-ray", "e-mail", "don't", "C++", "3.14", "\r\n", "\t",
            " ", "  ", ",", ".", "!", "_", "@", "#", "~", "^", "`", "Ab12Cd", "ELEVATOR", "In", "iNTo",
        ]
        for _ in 0..<2_000 {
            var text = ""
            for _ in 0..<Int(random.next() % 12) {
                if random.next() % 4 == 0 {
                    text.unicodeScalars.append(UnicodeScalar(UInt8(random.next() % 0x80)))
                } else {
                    text += pieces[Int(random.next() % UInt64(pieces.count))]
                }
            }
            let (ascii, folded) = bothPaths(text)
            #expect(ascii == folded, "\(text.debugDescription)")
        }
    }

    @Test func textBeyondASCIITakesTheFoldingPath() {
        for text in ["Café", "naïve résumé", "STRASSE straße", "日本語 テキスト", "e\u{301}cole", "emoji 🎉 ok"] {
            let (ascii, folded) = bothPaths(text)
            #expect(ascii == nil, "\(text.debugDescription)")
            #expect(TextTokens.tokens(text) == folded)
        }
        #expect(TextTokens.tokens("Café au LAIT, the café") == ["cafe", "au", "lait"])
    }
}
