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
        // Composed (NFC) after folding, so that canonically equivalent spellings have the same
        // bytes: the index compares bytes, Swift's `String ==` compares canonical equivalence.
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .precomposedStringWithCanonicalMapping
        var current = ""
        func flush() {
            if !current.isEmpty, !stopWords.contains(current), seen.insert(current).inserted { result.append(current) }
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
