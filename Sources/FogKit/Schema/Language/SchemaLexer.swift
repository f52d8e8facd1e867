/// A token of schema text, with the 1-based line and column where it starts.
struct SchemaToken: Sendable {
    enum Kind: Sendable, Equatable {
        /// An unquoted word: a keyword (matched case-insensitively) or a name.
        case word(String)
        /// A double-quoted name, quotes removed.
        case quoted(String)
        case leftParen, rightParen, comma, semicolon, less, greater
        /// Text the lexer could not read; the parser reports `message` when it reaches it.
        case invalid(message: String)
        case end
    }

    let kind: Kind
    let line: Int
    let column: Int
    /// The word in upper case, for matching keywords; `nil` for other tokens.
    let keyword: String?

    init(kind: Kind, line: Int, column: Int) {
        self.kind = kind
        self.line = line
        self.column = column
        if case .word(let word) = kind { keyword = word.uppercased() } else { keyword = nil }
    }

    /// Whether the token is the keyword `keyword` (given in upper case), in any case.
    func isKeyword(_ keyword: String) -> Bool { self.keyword == keyword }

    /// The token as a message quotes it.
    var quoted: String {
        switch kind {
        case .word(let word): "`\(word)`"
        case .quoted(let name): "`\"\(name)\"`"
        case .leftParen: "`(`"
        case .rightParen: "`)`"
        case .comma: "`,`"
        case .semicolon: "`;`"
        case .less: "`<`"
        case .greater: "`>`"
        case .invalid: "unreadable text"
        case .end: "the end of the schema"
        }
    }
}

/// Splits schema text into tokens, skipping white space and comments (`-- …` and `// …` to the
/// end of the line, `/* … */`). Works on Unicode scalars; lines end at `\n` (a `\r` before it is
/// white space).
///
/// Text it cannot read becomes an `.invalid` token, and the tokens end there, so that the
/// parser reports the first problem in reading order.
struct SchemaLexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    private static let punctuation: [Unicode.Scalar: SchemaToken.Kind] = [
        "(": .leftParen, ")": .rightParen, ",": .comma, ";": .semicolon, "<": .less, ">": .greater,
    ]

    /// A lexer over `text`; a byte order mark at its start is skipped.
    init(_ text: String) {
        var scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        self.scalars = scalars
    }

    /// All tokens of the text, ending with `.end` or `.invalid`.
    static func tokens(of text: String) -> [SchemaToken] {
        var lexer = SchemaLexer(text)
        var tokens: [SchemaToken] = []
        while true {
            let token = lexer.next()
            tokens.append(token)
            switch token.kind {
            case .end, .invalid: return tokens
            default: continue
            }
        }
    }

    private var column: Int { index - lineStart + 1 }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private mutating func advance() {
        if scalars[index] == "\n" {
            line += 1
            lineStart = index + 1
        }
        index += 1
    }

    private static func isLetter(_ s: Unicode.Scalar) -> Bool { ("a"..."z").contains(s) || ("A"..."Z").contains(s) }
    private static func isNameCharacter(_ s: Unicode.Scalar) -> Bool {
        isLetter(s) || ("0"..."9").contains(s) || s == "_"
    }

    /// The next token.
    mutating func next() -> SchemaToken {
        if let problem = skipSpaceAndComments() { return problem }
        let line = self.line, column = self.column
        func token(_ kind: SchemaToken.Kind) -> SchemaToken { SchemaToken(kind: kind, line: line, column: column) }
        guard let scalar = peek() else { return token(.end) }
        if let punctuation = Self.punctuation[scalar] {
            advance()
            return token(punctuation)
        }
        if scalar == "\"" { return quotedName(token) }
        if Self.isLetter(scalar) || scalar == "_" {
            var word = ""
            while let s = peek(), Self.isNameCharacter(s) {
                word.unicodeScalars.append(s)
                advance()
            }
            return token(.word(word))
        }
        let shown = scalar.properties.generalCategory == .control ? "U+\(String(scalar.value, radix: 16, uppercase: true))" : "\(scalar)"
        return token(.invalid(message: "unexpected character `\(shown)`"))
    }

    /// `"name"`: letters, digits and `_`, not starting with a digit, on one line.
    private mutating func quotedName(_ token: (SchemaToken.Kind) -> SchemaToken) -> SchemaToken {
        advance()
        var name = ""
        while let s = peek(), s != "\"" {
            if s == "\n" || s == "\r" { return token(.invalid(message: "a quoted name is not closed on its line")) }
            name.unicodeScalars.append(s)
            advance()
        }
        guard peek() == "\"" else { return token(.invalid(message: "a quoted name is not closed before the end of the schema")) }
        advance()
        if name.isEmpty { return token(.invalid(message: "a quoted name cannot be empty")) }
        guard name.unicodeScalars.allSatisfy(Self.isNameCharacter), !("0"..."9").contains(name.unicodeScalars.first!) else {
            return token(
                .invalid(
                    message: "`\"\(name)\"` is not a name: a name starts with a letter or `_` and holds only letters, digits and `_`"))
        }
        return token(.quoted(name))
    }

    /// Skips white space and comments; returns an `.invalid` token for an unclosed `/*`.
    private mutating func skipSpaceAndComments() -> SchemaToken? {
        while let s = peek() {
            if s == " " || s == "\t" || s == "\n" || s == "\r" {
                advance()
            } else if (s == "-" && peek(1) == "-") || (s == "/" && peek(1) == "/") {
                while let c = peek(), c != "\n" { advance() }
            } else if s == "/" && peek(1) == "*" {
                let line = self.line, column = self.column
                advance()
                advance()
                while peek() != nil && !(peek() == "*" && peek(1) == "/") { advance() }
                guard peek() != nil else {
                    return SchemaToken(kind: .invalid(message: "a `/*` comment is not closed"), line: line, column: column)
                }
                advance()
                advance()
            } else {
                return nil
            }
        }
        return nil
    }
}
