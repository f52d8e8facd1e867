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

    /// The distinct tokens of `text`, in order of first appearance.
    static func tokens(_ text: String) -> [String] {
        var result: [String] = []
        var seen: Set<String> = []
        add(text, to: &result, seen: &seen)
        return result
    }

    /// Adds the tokens of `text` that `seen` lacks.
    static func add(_ text: String, to result: inout [String], seen: inout Set<String>) {
        if addASCII(text, to: &result, seen: &seen) { return }
        addFolded(text, to: &result, seen: &seen)
    }

    /// ``add(_:to:seen:)`` for ASCII text, on its bytes; `false`, adding nothing, when `text`
    /// is not ASCII.
    ///
    /// Folding ASCII only lowers `A`–`Z` (it has no diacritics, and it is already composed),
    /// its letters and digits are `A`–`Z`, `a`–`z` and `0`–`9`, and no two ASCII characters form
    /// one letter or digit, so this gives what ``addFolded(_:to:seen:)`` gives without
    /// Foundation's folding (most of a development-mode save's index work, where every string
    /// field is searchable). `TextTokensTests` holds the two to the same tokens.
    static func addASCII(_ text: String, to result: inout [String], seen: inout Set<String>) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return false }
            var start = 0
            var token: [UInt8] = []
            func flush(_ end: Int) {
                if end > start {
                    token.removeAll(keepingCapacity: true)
                    for byte in bytes[start..<end] { token.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) }
                    keep(String(decoding: token, as: UTF8.self), in: &result, seen: &seen)
                }
            }
            for (i, byte) in bytes.enumerated() {
                switch byte {
                case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: continue
                default:
                    flush(i)
                    start = i + 1
                }
            }
            flush(bytes.count)
            return true
        }
    }

    /// ``add(_:to:seen:)`` for any text: Foundation's case and diacritic folding, then letters
    /// and digits as `Character` sees them.
    static func addFolded(_ text: String, to result: inout [String], seen: inout Set<String>) {
        // Composed (NFC) after folding, so that canonically equivalent spellings have the same
        // bytes: the index compares bytes, Swift's `String ==` compares canonical equivalence.
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .precomposedStringWithCanonicalMapping
        var current = ""
        func flush() {
            if !current.isEmpty { keep(current, in: &result, seen: &seen) }
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

    /// Appends the folded `word` to `result` unless it is a stop word or `seen` has it.
    @inline(__always)
    private static func keep(_ word: String, in result: inout [String], seen: inout Set<String>) {
        if !stopWords.contains(word), seen.insert(word).inserted { result.append(word) }
    }

    /// The tokens of the string and string-list values among `values`.
    static func tokens(of values: some Sequence<FieldValue>) -> Set<String> {
        var result: [String] = []
        var seen: Set<String> = []
        for value in values {
            switch value {
            case .string(let s): add(s, to: &result, seen: &seen)
            case .stringList(let list): for s in list { add(s, to: &result, seen: &seen) }
            default: break
            }
        }
        return seen
    }
}
