import Foundation

/// A token of predicate text, with the 1-based column (in Unicode scalars) where it starts.
struct PredicateToken: Sendable {
    enum Kind: Sendable, Equatable {
        /// An identifier or keyword, as written (keywords are matched case-insensitively).
        case word(String)
        /// `#name`: a key, even when `name` is a reserved word.
        case escapedKey(String)
        /// A quoted string, escapes resolved.
        case string(String)
        /// A number literal, already normalised (integers and integral values → `.int64`).
        case number(PredicateValue)
        /// `%@` (`numeric == false`) or `%d`, `%f`, … (`numeric == true`): argument `index` (0-based).
        case valuePlaceholder(index: Int, specifier: String, numeric: Bool)
        /// `%K`: argument `index` (0-based) is a key.
        case keyPlaceholder(index: Int)
        /// `==`, `=`, `!=`, `<>`, `<`, `<=`, `=<`, `>`, `>=`, `=>`.
        case comparison(ComparisonOperator, spelling: String)
        /// `&&`.
        case ampersands
        /// `||`.
        case bars
        /// `!`.
        case bang
        case leftParen, rightParen, leftBrace, rightBrace, leftBracket, rightBracket, comma, colon, dot
        /// Text the lexer could not read; the parser reports `message` if it gets this far.
        case invalid(message: String)
        case end
    }

    let kind: Kind
    let column: Int

    /// The token as a message quotes it.
    var quoted: String {
        switch kind {
        case .word(let w): "'\(w)'"
        case .escapedKey(let k): "'#\(k)'"
        case .string: "a string"
        case .number(let n): "'\(n.formatted)'"
        case .valuePlaceholder(_, let specifier, _): "'\(specifier)'"
        case .keyPlaceholder: "'%K'"
        case .comparison(_, let spelling): "'\(spelling)'"
        case .ampersands: "'&&'"
        case .bars: "'||'"
        case .bang: "'!'"
        case .leftParen: "'('"
        case .rightParen: "')'"
        case .leftBrace: "'{'"
        case .rightBrace: "'}'"
        case .leftBracket: "'['"
        case .rightBracket: "']'"
        case .comma: "','"
        case .colon: "':'"
        case .dot: "'.'"
        case .invalid: "unreadable text"
        case .end: "the end of the predicate"
        }
    }
}

/// Splits predicate text into tokens. Works on Unicode scalars, so a combining mark after a
/// quote cannot hide the quote; columns count scalars from 1.
///
/// Text it cannot read becomes an `.invalid` token followed by `.end`, so that the parser
/// reports the first problem in reading order: `SUBQUERY(tags, $t, …)` is refused for its
/// `SUBQUERY`, not for its `$t`.
struct PredicateLexer {
    /// Words with a meaning in NSPredicate's grammar; keys spelled like one must be written `#key`.
    static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "ANY", "SOME", "ALL", "NONE", "IN", "CONTAINS", "BEGINSWITH", "ENDSWITH",
        "LIKE", "MATCHES", "BETWEEN", "TOKENMATCHES", "TRUEPREDICATE", "FALSEPREDICATE", "TRUE",
        "FALSE", "YES", "NO", "NIL", "NULL", "SELF", "SUBQUERY", "FUNCTION", "CAST",
    ]

    private let scalars: [Unicode.Scalar]
    private(set) var index = 0
    private var placeholders = 0

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
    }

    /// The tokens, ending with `.end`, and the number of placeholders (`%@`, `%K`, `%d`, …)
    /// before the first `.invalid` token, if any.
    static func tokenize(_ text: String) -> (tokens: [PredicateToken], placeholders: Int) {
        var lexer = PredicateLexer(text)
        var tokens: [PredicateToken] = []
        while true {
            do {
                let token = try lexer.next()
                tokens.append(token)
                if token.kind == .end { return (tokens, lexer.placeholders) }
            } catch {
                let column = error.column
                tokens.append(PredicateToken(kind: .invalid(message: error.message), column: column))
                tokens.append(PredicateToken(kind: .end, column: lexer.scalars.count + 1))
                return (tokens, lexer.placeholders)
            }
        }
    }

    static func error(_ message: String, column: Int) -> FogError {
        FogError(.invalidArguments, message: "Invalid predicate at column \(column): \(message)")
    }

    /// A lexing failure: what and where.
    struct Failure: Error {
        let message: String
        let column: Int
    }

    private static func failure(_ message: String, column: Int) -> Failure {
        Failure(message: message, column: column)
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private static func isLetter(_ c: Unicode.Scalar) -> Bool {
        (c >= "a" && c <= "z") || (c >= "A" && c <= "Z")
    }

    private static func isDigit(_ c: Unicode.Scalar?) -> Bool {
        guard let c else { return false }
        return c >= "0" && c <= "9"
    }

    private static func isWordCharacter(_ c: Unicode.Scalar?) -> Bool {
        guard let c else { return false }
        return isLetter(c) || isDigit(c) || c == "_"
    }

    private mutating func next() throws(Failure) -> PredicateToken {
        while let c = peek(), c.properties.isWhitespace { index += 1 }
        let column = index + 1
        guard let c = peek() else { return PredicateToken(kind: .end, column: column) }
        func token(_ kind: PredicateToken.Kind, length: Int) -> PredicateToken {
            index += length
            return PredicateToken(kind: kind, column: column)
        }
        switch c {
        case "(": return token(.leftParen, length: 1)
        case ")": return token(.rightParen, length: 1)
        case "{": return token(.leftBrace, length: 1)
        case "}": return token(.rightBrace, length: 1)
        case "[": return token(.leftBracket, length: 1)
        case "]": return token(.rightBracket, length: 1)
        case ",": return token(.comma, length: 1)
        case ":": return token(.colon, length: 1)
        case ".": return token(.dot, length: 1)
        case "=":
            switch peek(1) {
            case "=": return token(.comparison(.equal, spelling: "=="), length: 2)
            case "<": return token(.comparison(.lessOrEqual, spelling: "=<"), length: 2)
            case ">": return token(.comparison(.greaterOrEqual, spelling: "=>"), length: 2)
            default: return token(.comparison(.equal, spelling: "="), length: 1)
            }
        case "<":
            switch peek(1) {
            case "=": return token(.comparison(.lessOrEqual, spelling: "<="), length: 2)
            case ">": return token(.comparison(.notEqual, spelling: "<>"), length: 2)
            default: return token(.comparison(.less, spelling: "<"), length: 1)
            }
        case ">":
            if peek(1) == "=" { return token(.comparison(.greaterOrEqual, spelling: ">="), length: 2) }
            return token(.comparison(.greater, spelling: ">"), length: 1)
        case "!":
            if peek(1) == "=" { return token(.comparison(.notEqual, spelling: "!="), length: 2) }
            return token(.bang, length: 1)
        case "&":
            guard peek(1) == "&" else { throw Self.failure("'&' is not an operator; use && or AND", column: column) }
            return token(.ampersands, length: 2)
        case "|":
            guard peek(1) == "|" else { throw Self.failure("'|' is not an operator; CloudKit has no OR", column: column) }
            return token(.bars, length: 2)
        case "\"", "'":
            return PredicateToken(kind: .string(try string(quote: c)), column: column)
        case "%":
            return PredicateToken(kind: try placeholder(), column: column)
        case "#":
            index += 1
            guard let first = peek(), Self.isLetter(first) || first == "_" else {
                throw Self.failure("'#' must be followed by a key", column: column)
            }
            return PredicateToken(kind: .escapedKey(word()), column: column)
        case "@":
            index += 1
            let name = word()
            throw Self.failure("collection operator '@\(name)' is not supported by CloudKit", column: column)
        case "$":
            index += 1
            let name = word()
            throw Self.failure("variable '$\(name)' is not supported; pass values as %@ arguments", column: column)
        case "-":
            guard Self.isDigit(peek(1)) else {
                throw Self.failure("'-' is not supported: predicates have no arithmetic", column: column)
            }
            return PredicateToken(kind: .number(try number()), column: column)
        case "+", "*", "/", "^":
            throw Self.failure("'\(c)' is not supported: predicates have no arithmetic", column: column)
        default:
            if Self.isDigit(c) { return PredicateToken(kind: .number(try number()), column: column) }
            if Self.isLetter(c) || c == "_" { return PredicateToken(kind: .word(word()), column: column) }
            throw Self.failure("unexpected character \(Self.describe(c))", column: column)
        }
    }

    /// `U+00E9 'é'`, or just `U+0007` for an invisible character.
    static func describe(_ c: Unicode.Scalar) -> String {
        let hex = String(c.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        let visible =
            !c.properties.isWhitespace && c.properties.generalCategory != .control
            && c.properties.generalCategory != .format && c.properties.generalCategory != .surrogate
        return visible ? "\(code) '\(c)'" : code
    }

    private mutating func word() -> String {
        let start = index
        while Self.isWordCharacter(peek()) { index += 1 }
        var s = ""
        s.unicodeScalars.append(contentsOf: scalars[start..<index])
        return s
    }

    /// `-?digits(.digits)?([eE][+-]?digits)?`.
    private mutating func number() throws(Failure) -> PredicateValue {
        let start = index
        var isInteger = true
        if peek() == "-" { index += 1 }
        while Self.isDigit(peek()) { index += 1 }
        if peek() == ".", Self.isDigit(peek(1)) {
            isInteger = false
            index += 1
            while Self.isDigit(peek()) { index += 1 }
        }
        if peek() == "e" || peek() == "E" {
            let sign = peek(1) == "+" || peek(1) == "-" ? 1 : 0
            if Self.isDigit(peek(1 + sign)) {
                isInteger = false
                index += 1 + sign
                while Self.isDigit(peek()) { index += 1 }
            }
        }
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars[start..<index])
        if isInteger {
            guard let n = Int64(text) else {
                throw Self.failure("the integer \(text) does not fit in 64 bits", column: start + 1)
            }
            return .constant(.int64(n))
        }
        guard let d = Double(text) else {
            throw Self.failure("'\(text)' is not a number", column: start + 1)
        }
        do throws(PredicateViolation) {
            return try PredicateRules.number(d)
        } catch {
            throw Self.failure(error.message, column: start + 1)
        }
    }

    /// A string in single or double quotes; escapes `\\ \' \" \n \r \t \0 \uXXXX`.
    private mutating func string(quote: Unicode.Scalar) throws(Failure) -> String {
        let start = index
        index += 1
        var value = String.UnicodeScalarView()
        while true {
            guard let c = peek() else {
                throw Self.failure("unterminated string: the quote \(quote) at column \(start + 1) is never closed", column: start + 1)
            }
            index += 1
            if c == quote { break }
            guard c == "\\" else {
                value.append(c)
                continue
            }
            let escapeColumn = index
            guard let e = peek() else {
                throw Self.failure("unterminated string: the quote \(quote) at column \(start + 1) is never closed", column: start + 1)
            }
            index += 1
            switch e {
            case "\\", "'", "\"": value.append(e)
            case "n": value.append("\n")
            case "r": value.append("\r")
            case "t": value.append("\t")
            case "0": value.append("\0")
            case "u":
                var code: UInt32 = 0
                for _ in 0..<4 {
                    guard let h = peek(), h.isASCII, let digit = UInt32(String(h), radix: 16) else {
                        throw Self.failure("escape \\u needs four hexadecimal digits", column: escapeColumn)
                    }
                    code = code * 16 + digit
                    index += 1
                }
                guard let scalar = Unicode.Scalar(code) else {
                    throw Self.failure("escape \\u has no character \(code)", column: escapeColumn)
                }
                value.append(scalar)
            default:
                throw Self.failure("unknown escape '\\\(e.escaped(asASCII: true))' in a string", column: escapeColumn)
            }
        }
        return String(value)
    }

    /// `%@`, `%K`, or a numeric specifier such as `%d`, `%ld`, `%f`.
    private mutating func placeholder() throws(Failure) -> PredicateToken.Kind {
        let column = index + 1
        index += 1
        let argument = placeholders
        switch peek() {
        case "@":
            index += 1
            placeholders += 1
            return .valuePlaceholder(index: argument, specifier: "%@", numeric: false)
        case "K":
            index += 1
            placeholders += 1
            return .keyPlaceholder(index: argument)
        default:
            var specifier = "%"
            while let c = peek(), c == "l" || c == "h" || c == "q" || c == "z", specifier.count < 4 {
                specifier.unicodeScalars.append(c)
                index += 1
            }
            guard let c = peek() else {
                throw Self.failure("'%' at the end of the predicate is not a format specifier", column: column)
            }
            specifier.unicodeScalars.append(c)
            index += 1
            guard "diouxXfFeEgG".unicodeScalars.contains(c) else {
                throw Self.failure(
                    "format specifier '\(specifier.unicodeScalars.map { $0.escaped(asASCII: true) }.joined())' is not supported; use %@ for values and %K for keys",
                    column: column)
            }
            placeholders += 1
            return .valuePlaceholder(index: argument, specifier: specifier, numeric: true)
        }
    }
}
