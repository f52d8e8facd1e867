import Foundation

/// The tokens of full-text search: folded (case- and diacritic-insensitive), split at every
/// character that is not a letter or a digit, without CloudKit's stop words.
enum TextTokens {
    /// The words CloudKit's full-text search ignores (reference §5.4).
    static let stopWords: Set<String> = [
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not",
        "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was",
        "will", "with",
    ]

    /// ``stopWords``, compared with those of a word's length rather than hashed.
    private static let stopWordsByLength = StringsByLength(stopWords)

    /// Whether `word` (folded) is one of CloudKit's stop words.
    @inline(__always)
    static func isStopWord(_ word: String) -> Bool {
        stopWordsByLength.contains(word)
    }

    /// The distinct tokens of `text`, in order of first appearance.
    static func tokens(_ text: String) -> [String] {
        var result = TokenList()
        add(text, to: &result)
        return result.tokens
    }

    /// Adds the tokens of `text` that `result` lacks.
    static func add(_ text: String, to result: inout TokenList) {
        if addASCII(text, to: &result) { return }
        addFolded(text, to: &result)
    }

    /// ``add(_:to:)`` for ASCII text, on its bytes; `false`, adding nothing, when `text`
    /// is not ASCII.
    ///
    /// Folding ASCII only lowers `A`–`Z` (it has no diacritics, and it is already composed),
    /// its letters and digits are `A`–`Z`, `a`–`z` and `0`–`9`, and no two ASCII characters form
    /// one letter or digit, so this gives what ``addFolded(_:to:)`` gives without
    /// Foundation's folding (most of a development-mode save's index work, where every string
    /// field is searchable). `TextTokensTests` holds the two to the same tokens.
    static func addASCII(_ text: String, to result: inout TokenList) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return false }
            // Each word becomes its lowered string directly (a word of up to 15 bytes is a
            // small string, held inline): no buffer of bytes in between.
            var start = 0
            var i = 0
            while i <= bytes.count {
                if i < bytes.count, isLetterOrDigit(bytes[i]) {
                    i += 1
                    continue
                }
                if i > start {
                    let word = UnsafeBufferPointer(rebasing: bytes[start..<i])
                    let token = String(unsafeUninitializedCapacity: word.count) { out in
                        for k in 0..<word.count {
                            let byte = word[k]
                            out[k] = byte &- 0x41 < 26 ? byte | 0x20 : byte
                        }
                        return word.count
                    }
                    keep(token, in: &result)
                }
                i += 1
                start = i
            }
            return true
        }
    }

    /// Whether the ASCII byte `byte` is a letter or a digit (`0`–`9`, `A`–`Z`, `a`–`z`).
    @inline(__always)
    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        byte &- 0x30 < 10 || (byte | 0x20) &- 0x61 < 26
    }

    /// ``add(_:to:)`` for any text: Foundation's case and diacritic folding, then letters
    /// and digits as `Character` sees them.
    static func addFolded(_ text: String, to result: inout TokenList) {
        // Composed (NFC) after folding, so that canonically equivalent spellings have the same
        // bytes: the index compares bytes, Swift's `String ==` compares canonical equivalence.
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .precomposedStringWithCanonicalMapping
        var current = ""
        func flush() {
            if !current.isEmpty { keep(current, in: &result) }
            current = ""
        }
        for character in folded {
            if character.isLetter || character.isNumber {
                current.append(character)
            } else {
                flush()
            }
        }
        flush()
    }

    /// Adds the folded `word` to `result` unless it is a stop word or `result` has it.
    @inline(__always)
    private static func keep(_ word: String, in result: inout TokenList) {
        if !isStopWord(word) { result.insert(word) }
    }

    /// The distinct tokens of the string and string-list values among `values`.
    static func tokens(of values: some Sequence<FieldValue>) -> TokenList {
        var result = TokenList()
        for value in values {
            switch value {
            case .string(let s): add(s, to: &result)
            case .stringList(let list): for s in list { add(s, to: &result) }
            default: break
            }
        }
        return result
    }
}

/// Distinct tokens in order of first appearance.
///
/// A searchable field holds a handful of words, so up to 16 tokens a scan that compares short
/// strings (by length first) finds a repeat for less than hashing the word would cost; past
/// 16 a hash set takes over. (Hashing each word twice, for the stop words and for the set of
/// tokens seen, was most of the tokenizing of a short title.)
struct TokenList {
    /// The tokens, in order of first appearance.
    private(set) var tokens: [String] = []
    private var index: Set<String>?

    /// Adds `token` unless it is there.
    mutating func insert(_ token: String) {
        if index != nil {
            if index!.insert(token).inserted { tokens.append(token) }
            return
        }
        if contains(token) { return }
        tokens.append(token)
        if tokens.count > 16 { index = Set(tokens) }
    }

    /// Whether `token` is there.
    func contains(_ token: String) -> Bool {
        if let index { return index.contains(token) }
        let length = token.utf8.count
        for t in tokens where t.utf8.count == length && t == token { return true }
        return false
    }
}
