import Foundation

extension PredicateParser {
    /// One side of a condition: a key (not yet checked) or a constant.
    enum Operand {
        case name(String)
        case value(PredicateOperand)
    }

    /// An operand and the token where it starts.
    struct Located {
        let operand: Operand
        let token: PredicateToken
    }

    enum OperatorKind {
        case comparison(ComparisonOperator)
        case between, `in`, contains, beginsWith, tokenMatches
    }

    /// An operator, with its `[…]` modifier letters if any.
    struct Operator {
        let kind: OperatorKind
        let token: PredicateToken
        let modifier: String?
        let modifierToken: PredicateToken?

        /// The operator as written, for messages.
        var spelling: String {
            let base: String
            switch token.kind {
            case .comparison(_, let spelling): base = spelling
            case .word(let word): base = word.uppercased()
            default: base = token.quoted
            }
            return modifier.map { "\(base)[\($0)]" } ?? base
        }
    }

    // MARK: - Tokens and errors

    var current: PredicateToken { tokens[position] }

    func peek(_ offset: Int) -> PredicateToken { tokens[min(position + offset, tokens.count - 1)] }

    mutating func advance() {
        if position < tokens.count - 1 { position += 1 }
    }

    /// The token's word in upper case when it is a reserved word.
    func keyword(_ token: PredicateToken) -> String? {
        guard case .word(let word) = token.kind else { return nil }
        let upper = word.uppercased()
        return PredicateLexer.reservedWords.contains(upper) ? upper : nil
    }

    /// Counts one level of nesting; too deep is an error.
    mutating func enter(_ token: PredicateToken) throws(FogError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw fail("nesting deeper than \(Self.maximumDepth) levels is not supported", token)
        }
    }

    func fail(_ message: String, _ token: PredicateToken) -> FogError {
        PredicateLexer.error(message, column: token.column)
    }

    func unexpected(_ token: PredicateToken, expecting expected: String) -> FogError {
        if case .invalid(let message) = token.kind { return fail(message, token) }
        if token.kind == .end { return fail("the predicate ends where \(expected) was expected", token) }
        if case .word(let word) = token.kind, keyword(token) == nil {
            return fail("expected \(expected) but found unknown word '\(word)'", token)
        }
        return fail("expected \(expected) but found \(token.quoted)", token)
    }

    /// Runs a rule, reporting its violation at `token`'s column.
    func rule<T>(_ token: PredicateToken, _ body: () throws(PredicateViolation) -> T) throws(FogError) -> T {
        do {
            return try body()
        } catch {
            throw fail(error.message, token)
        }
    }

    mutating func expect(_ kind: PredicateToken.Kind, in construct: String) throws(FogError) {
        guard current.kind == kind else {
            throw unexpected(current, expecting: "\(PredicateToken(kind: kind, column: 0).quoted) in \(construct)")
        }
        advance()
    }

    // MARK: - Operators

    mutating func parseOperator() throws(FogError) -> Operator {
        let token = current
        let kind: OperatorKind
        switch token.kind {
        case .comparison(let op, _):
            kind = .comparison(op)
        case .word:
            switch keyword(token) {
            case "BETWEEN": kind = .between
            case "IN": kind = .in
            case "CONTAINS": kind = .contains
            case "BEGINSWITH": kind = .beginsWith
            case "TOKENMATCHES": kind = .tokenMatches
            case "ENDSWITH":
                throw fail("ENDSWITH is not supported by CloudKit; only BEGINSWITH matches part of a string", token)
            case "LIKE":
                throw fail("LIKE is not supported by CloudKit; use BEGINSWITH or token search (self CONTAINS)", token)
            case "MATCHES":
                throw fail("MATCHES (regular expressions) is not supported by CloudKit", token)
            default:
                throw unexpected(token, expecting: "an operator")
            }
        default:
            throw unexpected(token, expecting: "an operator")
        }
        advance()
        guard current.kind == .leftBracket else {
            return Operator(kind: kind, token: token, modifier: nil, modifierToken: nil)
        }
        let open = current
        advance()
        guard case .word(let letters) = current.kind else {
            throw unexpected(current, expecting: "modifier letters such as [cd]")
        }
        advance()
        guard current.kind == .rightBracket else {
            if current.kind == .end { throw fail("unbalanced brackets: '[' at column \(open.column) is never closed", open) }
            throw unexpected(current, expecting: "']'")
        }
        advance()
        return Operator(kind: kind, token: token, modifier: letters, modifierToken: open)
    }

    /// CloudKit allows `[…]` modifiers only on `TOKENMATCHES`.
    func rejectModifier(_ op: Operator) throws(FogError) {
        guard let modifier = op.modifier, let token = op.modifierToken else { return }
        if case .contains = op.kind {
            throw fail(
                "\(op.spelling) is not supported: CloudKit's CONTAINS is list membership, and modifiers like [\(modifier)] are allowed only in allTokens TOKENMATCHES[cdl]",
                token)
        }
        throw fail(
            "modifier [\(modifier)] on \(op.spelling.prefix { $0 != "[" }) is not supported: CloudKit allows modifiers only in allTokens TOKENMATCHES[cdl]",
            token)
    }

    /// `TOKENMATCHES` needs exactly the `[cdl]` modifier (in any order).
    func checkTokenMatchesModifier(_ op: Operator) throws(FogError) {
        guard let modifier = op.modifier, let token = op.modifierToken else {
            throw fail("TOKENMATCHES requires the [cdl] modifier: allTokens TOKENMATCHES[cdl] 'text'", op.token)
        }
        let letters = modifier.lowercased()
        guard letters.count == 3, Set(letters) == Set("cdl") else {
            throw fail("TOKENMATCHES requires the [cdl] modifier, not [\(modifier)]", token)
        }
    }

    // MARK: - Operands

    /// A key or a constant. On the left a bare word is a key; on the right a bare `now` is the
    /// current date (a field called `now` is written `#now` there).
    mutating func parseOperand(left: Bool) throws(FogError) -> Located {
        let token = current
        func value(_ operand: PredicateOperand) -> Located { Located(operand: .value(operand), token: token) }
        switch token.kind {
        case .word(let word):
            switch keyword(token) {
            case "TRUE"?, "YES"?:
                advance()
                return value(.scalar(.constant(.int64(1))))
            case "FALSE"?, "NO"?:
                advance()
                return value(.scalar(.constant(.int64(0))))
            case "NIL"?, "NULL"?:
                throw fail("\(word) is not supported: CloudKit predicates cannot test for nil", token)
            case "SELF"?:
                advance()
                return try keyOperand("self", token)
            case "CAST"?:
                return value(try parseCast())
            case "SUBQUERY"?:
                throw fail("SUBQUERY is not supported by CloudKit", token)
            case "FUNCTION"?:
                throw fail("FUNCTION is not supported by CloudKit", token)
            case nil:
                advance()
                if current.kind == .leftParen {
                    guard word == "now" else { throw fail("function '\(word)()' is not supported by CloudKit", token) }
                    advance()
                    guard current.kind == .rightParen else { throw unexpected(current, expecting: "')' after now(") }
                    advance()
                    return value(.scalar(.now))
                }
                if word == "now", !left { return value(.scalar(.now)) }
                return try keyOperand(word, token)
            case let other?:
                throw fail("expected \(left ? "a field name" : "a value") but found \(other)", token)
            }
        case .escapedKey(let name):
            advance()
            return try keyOperand(name, token)
        case .keyPlaceholder(let index):
            let argumentValue = try argument(index, for: token)
            advance()
            let name = try rule(token) { () throws(PredicateViolation) in
                do throws(PredicateViolation) {
                    return try PredicateArguments.key(argumentValue)
                } catch {
                    throw PredicateViolation("argument \(index + 1) for '%K': \(error.message)")
                }
            }
            return try keyOperand(name, token)
        case .string(let s):
            advance()
            return value(.scalar(.constant(.string(s))))
        case .number(let number):
            advance()
            return value(.scalar(number))
        case .valuePlaceholder(let index, let specifier, let numeric):
            let argumentValue = try argument(index, for: token)
            advance()
            let operand = try rule(token) { () throws(PredicateViolation) in
                do throws(PredicateViolation) {
                    return try PredicateArguments.operand(argumentValue)
                } catch {
                    throw PredicateViolation("argument \(index + 1) for '\(specifier)': \(error.message)")
                }
            }
            if numeric {
                guard case .scalar(let scalar) = operand, scalar.kind == .number else {
                    throw fail("argument \(index + 1) for '\(specifier)' must be a number, not \(operand.kindDescription)", token)
                }
            }
            return value(operand)
        case .leftBrace:
            return value(try parseBraceList())
        default:
            throw unexpected(token, expecting: left ? "a field name" : "a value")
        }
    }

    /// A key, refusing key paths (`a.b`) and subscripts (`a[0]`).
    mutating func keyOperand(_ name: String, _ token: PredicateToken) throws(FogError) -> Located {
        if current.kind == .dot {
            var path = name
            while current.kind == .dot {
                advance()
                if case .invalid = current.kind { throw unexpected(current, expecting: "") }
                guard case .word(let next) = current.kind else {
                    path += "."
                    break
                }
                path += "." + next
                advance()
            }
            throw fail(
                "key path '\(path)' is not supported: CloudKit keys name a field of the record itself, not of related records",
                token)
        }
        if current.kind == .leftBracket {
            throw fail("subscript on '\(name)' is not supported by CloudKit", current)
        }
        return Located(operand: .name(name), token: token)
    }

    /// The right side of an operator that takes one constant.
    mutating func parseValue(for op: Operator) throws(FogError) -> (value: PredicateValue, token: PredicateToken) {
        let rhs = try parseOperand(left: false)
        switch rhs.operand {
        case .name(let name):
            throw fail(
                "the right side of \(op.spelling) must be a constant, not the field '\(name)': CloudKit does not compare two fields",
                rhs.token)
        case .value(let operand):
            let value = try rule(rhs.token) { () throws(PredicateViolation) in try PredicateRules.scalar(operand, for: op.spelling) }
            return (value, rhs.token)
        }
    }

    /// The right side of an operator that takes a list of constants (`IN`, `BETWEEN`).
    mutating func parseList(for op: Operator) throws(FogError) -> (values: [PredicateValue], token: PredicateToken) {
        let rhs = try parseOperand(left: false)
        switch rhs.operand {
        case .name(let name):
            throw fail(
                "the right side of \(op.spelling) must be a list of constants, not the field '\(name)'", rhs.token)
        case .value(let operand):
            let values = try rule(rhs.token) { () throws(PredicateViolation) in try PredicateRules.list(operand, for: op.spelling) }
            return (values, rhs.token)
        }
    }

    /// `{a, b, …}`: constants only, no nested lists.
    mutating func parseBraceList() throws(FogError) -> PredicateOperand {
        let open = current
        advance()
        var elements: [PredicateOperand] = []
        if current.kind == .rightBrace {
            advance()
            return .list([])
        }
        while true {
            if current.kind == .leftBrace { throw fail("a list inside a list is not supported", current) }
            let element = try parseOperand(left: false)
            switch element.operand {
            case .name(let name): throw fail("a list holds constants, not the field '\(name)'", element.token)
            case .value(.list): throw fail("a list inside a list is not supported", element.token)
            case .value(let value): elements.append(value)
            }
            switch current.kind {
            case .comma: advance()
            case .rightBrace:
                advance()
                return .list(elements)
            case .end: throw fail("unbalanced braces: '{' at column \(open.column) is never closed", open)
            default: throw unexpected(current, expecting: "',' or '}'")
            }
        }
    }
}
