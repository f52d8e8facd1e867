import Foundation

/// A recursive-descent parser for CloudKit's predicate language (reference §5.2–5.3).
///
/// ```
/// predicate   := conjunction END
/// conjunction := unary ((AND | &&) unary)*
/// unary       := (NOT | !) unary | '(' conjunction ')' | primary
/// primary     := TRUEPREDICATE | FALSEPREDICATE
///              | (ANY | SOME) key (= | == | CONTAINS | IN | BEGINSWITH) operand
///              | (ANY | SOME) list (= | ==) key
///              | distanceToLocation:fromLocation:(key, location) (< | <=) number
///              | self CONTAINS string | allTokens TOKENMATCHES[cdl] string
///              | key operator operand | constant IN key
/// ```
///
/// Every construct CloudKit refuses is an ``FogError/Code/invalidArguments`` error whose
/// message names the construct and its 1-based column. Nesting of parentheses and `NOT`
/// is limited to ``maximumDepth`` levels, so no input can exhaust the stack.
struct PredicateParser {
    /// The deepest nesting of parentheses, `NOT`s and `CAST`s accepted.
    static let maximumDepth = 100

    let tokens: [PredicateToken]
    let arguments: [Any]
    var position = 0
    var depth = 0

    /// Parses `format`, substituting `arguments` for its placeholders in order.
    static func parse(_ format: String, arguments: [Any]) throws(FogError) -> PredicateNode {
        let (tokens, placeholders) = PredicateLexer.tokenize(format)
        guard let first = tokens.first, first.kind != .end else {
            throw PredicateLexer.error("the predicate is empty", column: 1)
        }
        var parser = PredicateParser(tokens: tokens, arguments: arguments)
        let node = try parser.parseConjunction()
        let rest = parser.current
        switch rest.kind {
        case .end: break
        case .rightParen: throw parser.fail("unbalanced parentheses: ')' has no matching '('", rest)
        case .invalid: throw parser.unexpected(rest, expecting: "")
        default: throw parser.fail("unexpected \(rest.quoted) after a complete condition; join conditions with AND", rest)
        }
        if placeholders < arguments.count {
            throw PredicateLexer.error(
                "\(arguments.count) argument\(arguments.count == 1 ? " was" : "s were") given but the predicate has \(placeholders) placeholder\(placeholders == 1 ? "" : "s")",
                column: rest.column)
        }
        return node
    }

    /// Argument `index` of the placeholder `token`.
    func argument(_ index: Int, for token: PredicateToken) throws(FogError) -> Any {
        guard index < arguments.count else {
            throw fail(
                "argument \(index + 1) for \(token.quoted) is missing: \(arguments.count) argument\(arguments.count == 1 ? " was" : "s were") given",
                token)
        }
        return arguments[index]
    }

    // MARK: - Compound predicates

    mutating func parseConjunction() throws(FogError) -> PredicateNode {
        var nodes = [try parseUnary()]
        while true {
            let token = current
            if token.kind == .ampersands || keyword(token) == "AND" {
                advance()
                nodes.append(try parseUnary())
            } else if token.kind == .bars || keyword(token) == "OR" {
                throw fail("\(token.kind == .bars ? "||" : "OR") is not supported: CloudKit combines conditions with AND only", token)
            } else {
                return PredicateRules.and(nodes)
            }
        }
    }

    mutating func parseUnary() throws(FogError) -> PredicateNode {
        let token = current
        try enter(token)
        defer { depth -= 1 }
        if token.kind == .bang || keyword(token) == "NOT" {
            advance()
            let operand = try parseUnary()
            return try rule(token) { () throws(PredicateViolation) in try PredicateRules.not(operand) }
        }
        if token.kind == .leftParen {
            advance()
            let node = try parseConjunction()
            guard current.kind == .rightParen else {
                if current.kind == .end {
                    throw fail("unbalanced parentheses: '(' at column \(token.column) is never closed", token)
                }
                throw unexpected(current, expecting: "')' or AND")
            }
            advance()
            return node
        }
        return try parsePrimary()
    }

    // MARK: - Simple predicates

    mutating func parsePrimary() throws(FogError) -> PredicateNode {
        let token = current
        if let word = keyword(token) {
            switch word {
            case "TRUEPREDICATE":
                advance()
                return .value(true)
            case "FALSEPREDICATE":
                advance()
                return .value(false)
            case "ANY", "SOME":
                advance()
                return try parseAny(token)
            case "ALL": throw fail("ALL is not supported by CloudKit; use ANY or SOME for list membership", token)
            case "NONE": throw fail("NONE is not supported by CloudKit; use NOT (list CONTAINS value)", token)
            case "OR": throw fail("OR is not supported: CloudKit combines conditions with AND only", token)
            case "AND", "IN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES", "BETWEEN", "TOKENMATCHES":
                throw fail("expected a condition but found \(word)", token)
            default: break
            }
        }
        if case .word(let name) = token.kind, peek(1).kind == .colon {
            if name == "distanceToLocation" { return try parseDistance() }
            throw fail("function '\(name):' is not supported by CloudKit", token)
        }
        let lhs = try parseOperand(left: true)
        let op = try parseOperator()
        return try combine(lhs, op)
    }

    /// `key op operand`, `self CONTAINS text`, `allTokens TOKENMATCHES[cdl] text`, `constant IN key`.
    mutating func combine(_ lhs: Located, _ op: Operator) throws(FogError) -> PredicateNode {
        switch lhs.operand {
        case .name("self"):
            guard case .contains = op.kind else {
                throw fail("self can only be used as self CONTAINS 'text' (token search), not with \(op.spelling)", lhs.token)
            }
            if let modifier = op.modifier {
                throw fail(
                    "modifier [\(modifier)] on self CONTAINS is not supported: token search is always case- and diacritic-insensitive",
                    op.modifierToken ?? op.token)
            }
            let text = try parseValue(for: op)
            return try rule(text.token) { () throws(PredicateViolation) in try PredicateRules.tokenSearch(text.value, allTokens: false) }
        case .name("allTokens"):
            guard case .tokenMatches = op.kind else {
                throw fail("allTokens can only be used as allTokens TOKENMATCHES[cdl] 'text', not with \(op.spelling)", lhs.token)
            }
            try checkTokenMatchesModifier(op)
            let text = try parseValue(for: op)
            return try rule(text.token) { () throws(PredicateViolation) in try PredicateRules.tokenSearch(text.value, allTokens: true) }
        case .name(let name):
            if case .tokenMatches = op.kind {
                throw fail("TOKENMATCHES only works as allTokens TOKENMATCHES[cdl] 'text'", op.token)
            }
            try rejectModifier(op)
            let key = try rule(lhs.token) { () throws(PredicateViolation) in try PredicateRules.key(name) }
            switch op.kind {
            case .comparison(let comparison):
                let value = try parseValue(for: op)
                return try rule(value.token) { () throws(PredicateViolation) in try PredicateRules.comparison(key, comparison, value.value)
                }
            case .between:
                let bounds = try parseList(for: op)
                guard bounds.values.count == 2 else {
                    throw fail("BETWEEN needs exactly two bounds {lower, upper}, not \(bounds.values.count)", bounds.token)
                }
                return try rule(bounds.token) { () throws(PredicateViolation) in
                    try PredicateRules.between(key, bounds.values[0], bounds.values[1])
                }
            case .in:
                let list = try parseList(for: op)
                return try rule(list.token) { () throws(PredicateViolation) in try PredicateRules.in(key, list.values) }
            case .contains:
                let value = try parseValue(for: op)
                return try rule(value.token) { () throws(PredicateViolation) in try PredicateRules.listContains(key, value.value) }
            case .beginsWith:
                let value = try parseValue(for: op)
                return try rule(value.token) { () throws(PredicateViolation) in try PredicateRules.beginsWith(key, value.value) }
            case .tokenMatches:
                throw fail("TOKENMATCHES only works as allTokens TOKENMATCHES[cdl] 'text'", op.token)
            }
        case .value(let constant):
            guard case .in = op.kind else {
                throw fail("the left side of \(op.spelling) must be a field name, not a constant", lhs.token)
            }
            try rejectModifier(op)
            let rhs = try parseOperand(left: false)
            guard case .name(let name) = rhs.operand else {
                throw fail("a constant IN a constant is not a condition: the right side of IN must be a list field", rhs.token)
            }
            let key = try rule(rhs.token) { () throws(PredicateViolation) in try PredicateRules.key(name) }
            let element = try rule(lhs.token) { () throws(PredicateViolation) in try PredicateRules.scalar(constant, for: "value IN list") }
            return try rule(lhs.token) { () throws(PredicateViolation) in try PredicateRules.listContains(key, element) }
        }
    }

    /// After `ANY` / `SOME`: `list = x`, `list CONTAINS x`, `list IN {…}`, `list BEGINSWITH x`,
    /// or `{…} = key`.
    mutating func parseAny(_ any: PredicateToken) throws(FogError) -> PredicateNode {
        let lhs = try parseOperand(left: true)
        let op = try parseOperator()
        try rejectModifier(op)
        switch lhs.operand {
        case .value(let constant):
            guard case .comparison(.equal) = op.kind else {
                throw fail("ANY {list} only supports = and ==, not \(op.spelling)", op.token)
            }
            let rhs = try parseOperand(left: false)
            guard case .name(let name) = rhs.operand else {
                throw fail("ANY {list} = … needs a field on the right", rhs.token)
            }
            let key = try rule(rhs.token) { () throws(PredicateViolation) in try PredicateRules.key(name) }
            let values = try rule(lhs.token) { () throws(PredicateViolation) in try PredicateRules.list(constant, for: "ANY {list} =") }
            return try rule(lhs.token) { () throws(PredicateViolation) in try PredicateRules.in(key, values) }
        case .name(let name):
            if name == "self" || name == "allTokens" {
                throw fail("ANY needs a list field, not \(name)", lhs.token)
            }
            let key = try rule(lhs.token) { () throws(PredicateViolation) in try PredicateRules.key(name) }
            switch op.kind {
            case .comparison(.equal), .contains:
                let value = try parseValue(for: op)
                return try rule(value.token) { () throws(PredicateViolation) in try PredicateRules.listContains(key, value.value) }
            case .in:
                let list = try parseList(for: op)
                return try rule(list.token) { () throws(PredicateViolation) in try PredicateRules.listContainsAny(key, list.values) }
            case .beginsWith:
                let value = try parseValue(for: op)
                return try rule(value.token) { () throws(PredicateViolation) in try PredicateRules.listAnyBeginsWith(key, value.value) }
            default:
                throw fail(
                    "\(any.quoted) with \(op.spelling) is not supported: ANY and SOME work with =, CONTAINS, IN and BEGINSWITH", op.token)
            }
        }
    }

    /// `distanceToLocation:fromLocation:(key, location) < radius` (or `<=`); the radius is in kilometres.
    mutating func parseDistance() throws(FogError) -> PredicateNode {
        advance()
        let signature = "distanceToLocation:fromLocation:"
        try expect(.colon, in: signature)
        guard case .word("fromLocation") = current.kind else { throw unexpected(current, expecting: "'\(signature)'") }
        advance()
        try expect(.colon, in: signature)
        try expect(.leftParen, in: signature)
        let field = try parseOperand(left: true)
        guard case .name(let name) = field.operand else {
            throw fail("the first argument of \(signature) must be a location field", field.token)
        }
        let key = try rule(field.token) { () throws(PredicateViolation) in try PredicateRules.key(name) }
        try expect(.comma, in: signature)
        let centre = try parseOperand(left: false)
        guard case .value(.location(let location)) = centre.operand else {
            let what = if case .value(let v) = centre.operand { v.kindDescription } else { "a field" }
            throw fail("the second argument of \(signature) must be a Location, not \(what)", centre.token)
        }
        let center = try rule(centre.token) { () throws(PredicateViolation) in try PredicateRules.center(location) }
        try expect(.rightParen, in: signature)
        let op = try parseOperator()
        try rejectModifier(op)
        let inclusive: Bool
        switch op.kind {
        case .comparison(.less): inclusive = false
        case .comparison(.lessOrEqual): inclusive = true
        case .comparison(.greater), .comparison(.greaterOrEqual):
            throw fail("\(signature) with \(op.spelling) is not supported: CloudKit only finds records inside a circle (< or <=)", op.token)
        default:
            throw fail("\(signature) with \(op.spelling) is not supported: use < or <= and a radius in kilometres", op.token)
        }
        let radius = try parseValue(for: op)
        return try rule(radius.token) { () throws(PredicateViolation) in
            try PredicateRules.distance(key, center: center, radius: radius.value, inclusive: inclusive)
        }
    }
}
