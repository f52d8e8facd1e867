import FogKitTesting
import Testing

@testable import FogKit

/// The ASCII path of full-text tokens against the general one (Foundation's folding, then
/// letters and digits by `Character`).
@Suite struct TextTokensTests {
    /// Both paths' tokens of `text`, in order.
    private func bothPaths(_ text: String) -> (ascii: [String]?, folded: [String]) {
        var asciiTokens = TokenList()
        let isASCII = TextTokens.addASCII(text, to: &asciiTokens)
        var foldedTokens = TokenList()
        TextTokens.addFolded(text, to: &foldedTokens)
        return (isASCII ? asciiTokens.tokens : nil, foldedTokens.tokens)
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

    @Test func theTokenListKeepsDistinctTokensInOrderBeforeAndAfterItsHashSetTakesOver() {
        var random = SplitMix64(seed: 0x70C3)
        let words = (0..<40).map { "w\($0)" } + ["a", "ab", "longer-than-fifteen-bytes-\u{e9}", "", "W1"]
        for _ in 0..<500 {
            var list = TokenList()
            var expected: [String] = []
            var seen: Set<String> = []
            for _ in 0..<Int(random.next() % 60) {
                let word = words[Int(random.next() % UInt64(words.count))]
                list.insert(word)
                if seen.insert(word).inserted { expected.append(word) }
                #expect(list.contains(word))
            }
            #expect(list.tokens == expected)
            for word in words { #expect(list.contains(word) == seen.contains(word), "\(word)") }
        }
    }

    @Test func stopWordsAreFoundByLengthAsTheSetHasThem() {
        for word in TextTokens.stopWords { #expect(TextTokens.isStopWord(word), "\(word)") }
        let others = ["", "b", "ann", "thei", "theirs", "there1", "The", "AND", "into ", "wit", "withs", "c++", "é"]
        for word in others { #expect(!TextTokens.isStopWord(word), "\(word)") }
        var random = SplitMix64(seed: 0x5709)
        let letters = Array("aehinorstw")
        for _ in 0..<5_000 {
            let word = String((0..<Int(random.next() % 7)).map { _ in letters[Int(random.next() % UInt64(letters.count))] })
            #expect(TextTokens.isStopWord(word) == TextTokens.stopWords.contains(word), "\(word)")
        }
    }
}
