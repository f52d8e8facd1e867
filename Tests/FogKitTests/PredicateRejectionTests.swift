import Foundation
import Testing

@testable import FogKit

/// Everything CloudKit refuses (reference §5.2 rules, §5.3 table) is refused when the predicate
/// is parsed, as `invalidArguments`, with a message naming the construct and its column.
@Suite struct PredicateRejectionTests {
    /// A format, its arguments, text the message must contain, and the 1-based column.
    struct Case: CustomTestStringConvertible, @unchecked Sendable {
        let format: String
        let arguments: [Any]
        let construct: String
        let column: Int

        init(_ format: String, _ arguments: [Any], _ construct: String, column: Int) {
            self.format = format
            self.arguments = arguments
            self.construct = construct
            self.column = column
        }

        init(_ format: String, _ construct: String, column: Int) {
            self.init(format, [], construct, column: column)
        }

        var testDescription: String { String(format.prefix(60)) }
    }

    static let here = Location(latitude: 1, longitude: 2)

    static let cases: [Case] = [
        // Compounds CloudKit does not have.
        Case("a == 1 OR b == 2", "OR", column: 8),
        Case("a == 1 or b == 2", "OR", column: 8),
        Case("a == 1 || b == 2", "||", column: 8),
        Case("OR a == 1", "OR", column: 1),
        Case("(a == 1 OR b == 2) AND c == 3", "OR", column: 9),
        // Key paths, aggregates, subqueries, functions, variables.
        Case("author.name == 'x'", "author.name", column: 1),
        Case("a.b.c CONTAINS 'x'", "a.b.c", column: 1),
        Case("%K == 1", ["author.name"], "author.name", column: 1),
        Case("ALL tags == 'x'", "ALL", column: 1),
        Case("NONE tags == 'x'", "NONE", column: 1),
        Case("SUBQUERY(tags, $t, $t == 'x').@count > 0", "SUBQUERY", column: 1),
        Case("a == 1 AND b == $x", "$x", column: 17),
        Case("SUBQUERY(tags, t, t == 'x') == 1", "SUBQUERY", column: 1),
        Case("tags.@count > 1", "@count", column: 6),
        Case("@count > 1", "@count", column: 1),
        Case("sum:(scores) > 1", "sum:", column: 1),
        Case("count:(tags) > 1", "count:", column: 1),
        Case("tokenize:using:(t, 'x') == 1", "tokenize:", column: 1),
        Case("a == lowercase(b)", "lowercase()", column: 6),
        Case("FUNCTION(a, 'x') == 1", "FUNCTION", column: 1),
        Case("a == $x", "$x", column: 6),
        Case("a[0] == 1", "subscript", column: 2),
        // NOT where CloudKit forbids it.
        Case("NOT (a == 1 AND b == 2)", "NOT over an AND", column: 1),
        Case("x == 1 AND !(a == 1 && b == 2)", "NOT over an AND", column: 12),
        Case("NOT self CONTAINS 'x'", "NOT over self CONTAINS", column: 1),
        Case("NOT allTokens TOKENMATCHES[cdl] 'x'", "NOT over allTokens TOKENMATCHES", column: 1),
        Case("NOT distanceToLocation:fromLocation:(loc, %@) < 5", [here], "NOT over distanceToLocation:fromLocation:", column: 1),
        Case("NOT a BETWEEN {1, 2}", "NOT over BETWEEN", column: 1),
        Case("NOT NOT a == 1", "NOT over NOT", column: 1),
        Case("NOT TRUEPREDICATE", "NOT over TRUEPREDICATE", column: 1),
        // Operators and modifiers CloudKit does not have.
        Case("name CONTAINS[c] 'x'", "CONTAINS[c]", column: 14),
        Case("self CONTAINS[cd] 'x'", "[cd]", column: 14),
        Case("name ENDSWITH 'x'", "ENDSWITH", column: 6),
        Case("name LIKE 'x*'", "LIKE", column: 6),
        Case("name MATCHES '.*'", "MATCHES", column: 6),
        Case("name ==[c] 'x'", "[c]", column: 8),
        Case("name BEGINSWITH[cd] 'x'", "[cd]", column: 16),
        Case("name IN[c] {'x'}", "[c]", column: 8),
        Case("allTokens TOKENMATCHES 'x'", "[cdl]", column: 11),
        Case("allTokens TOKENMATCHES[cd] 'x'", "[cdl]", column: 23),
        Case("name TOKENMATCHES[cdl] 'x'", "TOKENMATCHES", column: 6),
        Case("allTokens == 'x'", "allTokens", column: 1),
        Case("self == 'x'", "self", column: 1),
        Case("distanceToLocation:fromLocation:(location, %@) > 5", [here], "distanceToLocation:fromLocation: with >", column: 48),
        Case("distanceToLocation:fromLocation:(location, %@) >= 5", [here], "distanceToLocation:fromLocation: with >=", column: 48),
        Case("distanceToLocation:fromLocation:(location, %@) == 5", [here], "distanceToLocation:fromLocation: with ==", column: 48),
        Case("distanceToLocation:fromLocation:(location, %@) < -1", [here], "negative", column: 50),
        Case("distanceToLocation:fromLocation:(location, 'x') < 1", "Location", column: 44),
        Case(
            "distanceToLocation:fromLocation:(location, %@) < 1", [Location(latitude: 91, longitude: 0)], "not a valid coordinate",
            column: 44),
        Case("ANY tags != 'x'", "ANY", column: 10),
        Case("ANY tags < 'x'", "<", column: 10),
        Case("ANY {'a'} != c", "!=", column: 11),
        // nil.
        Case("a == nil", "nil", column: 6),
        Case("a != NULL", "NULL", column: 6),
        Case("a == %@", [Optional<Int>.none as Any], "nil", column: 6),
        // Fields compared with fields, constants on the left, wrong shapes.
        Case("a == b", "field 'b'", column: 6),
        Case("1 == a", "left side", column: 1),
        Case("'x' IN {'x'}", "right side of IN", column: 8),
        Case("a IN 'x'", "needs a list", column: 6),
        Case("a IN b", "field 'b'", column: 6),
        Case("tags CONTAINS {'a'}", "list", column: 15),
        Case("a BETWEEN {1}", "exactly two", column: 11),
        Case("a BETWEEN {1, 'x'}", "same type", column: 11),
        Case("a BETWEEN %@", [[1, 2, 3]], "exactly two", column: 11),
        Case("a IN {1, 'x'}", "mixes", column: 6),
        Case("a IN {{1}}", "list inside a list", column: 7),
        Case("a IN {b}", "field 'b'", column: 7),
        Case("location == %@", [here], "location", column: 13),
        Case("a < %@", [Data([1])], "<", column: 5),
        Case("a >= %@", [Record.ID(recordName: "r")], ">=", column: 6),
        Case("name BEGINSWITH 3", "string", column: 17),
        // System keys.
        Case("recordID == 'abc'", "recordID", column: 13),
        Case("recordID < %@", [Record.ID(recordName: "r")], "<", column: 12),
        Case("recordID CONTAINS %@", [Record.ID(recordName: "r")], "recordID", column: 19),
        Case("creationDate > 5", "creationDate", column: 16),
        Case("creationDate BEGINSWITH 'x'", "creationDate", column: 25),
        Case("recordType == 'Note'", "recordType", column: 1),
        Case("recordChangeTag == 'x'", "recordChangeTag", column: 1),
        Case("_private == 1", "_private", column: 1),
        // Literals and the lexer.
        Case("a == 'x", "unterminated string", column: 6),
        Case("a == \"x", "unterminated string", column: 6),
        Case(#"a == 'x\q'"#, #"\q"#, column: 8),
        Case(#"a == 'x\u12'"#, #"\u"#, column: 8),
        Case("a == 99999999999999999999", "64 bits", column: 6),
        Case("a == 1 + 2", "'+'", column: 8),
        Case("a == - 2", "'-'", column: 6),
        Case("a & b", "'&'", column: 3),
        Case("a == 1 | b == 2", "'|'", column: 8),
        Case("a == %s", "%s", column: 6),
        Case("a == %", "%", column: 6),
        Case("a == #", "'#'", column: 6),
        Case("a == ~", "'~'", column: 6),
        Case("a == é", "U+00E9 'é'", column: 6),
        Case("a == \u{7}", "U+0007", column: 6),
        Case(#"a == CAST(1, "NSURL")"#, "NSURL", column: 14),
        Case(#"a == CAST("xyz", "NSData")"#, "NSData", column: 11),
        Case(#"a == CAST('x', "NSDate")"#, "NSDate", column: 11),
        // Structure.
        Case("", "empty", column: 1),
        Case("   ", "empty", column: 1),
        Case("a FOO 1", "unknown word 'FOO'", column: 3),
        Case("a", "ends", column: 2),
        Case("a ==", "ends", column: 5),
        Case("a == 1 AND", "ends", column: 11),
        Case("a == 1 b == 2", "unexpected 'b'", column: 8),
        Case("a == 1)", "')'", column: 7),
        Case("(a == 1", "'(' at column 1 is never closed", column: 1),
        Case("((a == 1)", "'(' at column 1 is never closed", column: 1),
        Case("a IN {1, 2", "'{' at column 6 is never closed", column: 6),
        Case("a ==[c 1", "']'", column: 8),
        Case("AND a == 1", "AND", column: 1),
        Case("a == 1 AND AND b == 1", "AND", column: 12),
        Case("TRUEPREDICATE FALSEPREDICATE", "unexpected 'FALSEPREDICATE'", column: 15),
        Case(String(repeating: "(", count: 10_000) + "a == 1", "nesting deeper than 100", column: 101),
        Case(String(repeating: "NOT ", count: 500) + "a == 1", "nesting deeper than 100", column: 401),
        Case(String(repeating: "!", count: 500) + "a == 1", "nesting deeper than 100", column: 101),
        Case("a == " + String(repeating: "CAST(", count: 500), "nesting deeper than 100", column: 501),
        // Arguments.
        Case("a == %@", "argument 1 for '%@' is missing", column: 6),
        Case("a == %@ AND b == %K", ["x"], "argument 2 for '%K' is missing", column: 18),
        Case("a == 1", [2], "1 argument was given", column: 7),
        Case("a == %@", [URL(fileURLWithPath: "/")], "argument 1", column: 6),
        Case("a == %@", [[[1]]], "list inside a list", column: 6),
        Case("%K == 1", [5], "%K", column: 1),
        Case("a == %d", ["x"], "must be a number", column: 6),
        Case("a == %@", [Double.nan], "not finite", column: 6),
        Case("a == %@", [UInt64.max], "64-bit", column: 6),
        Case("a == %@", [NSNumber(value: UInt64.max)], "64-bit", column: 6),
        Case("a == %@", [FieldValue.stringList(["x"])], "not a list", column: 6),
        Case("a IN %@", ["x"], "needs a list", column: 6),
        Case("a IN %@", [[1, "x"]], "mixes", column: 6),
    ]

    @Test(arguments: cases)
    func isRejectedWithConstructAndColumn(_ c: Case) {
        do {
            let predicate = try QueryPredicate(format: c.format, argumentArray: c.arguments)
            Issue.record("\(c.format.prefix(60)) parsed as \(predicate)")
        } catch let error as FogError {
            #expect(error.code == .invalidArguments)
            #expect(error.message.contains(c.construct), "\(error.message)")
            #expect(error.message.contains("column \(c.column):"), "\(error.message)")
        } catch {
            Issue.record("not a FogError: \(error)")
        }
    }

    @Test func unsupportedArgumentTypesNameTheArgumentAndItsType() {
        struct Custom {}
        let error = #expect(throws: FogError.self) {
            try QueryPredicate(format: "a == 1 AND b == %@ AND c == %@", "ok", Custom())
        }
        #expect(error?.message.contains("argument 2") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("Custom") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("column 29:") == true, "\(error?.message ?? "")")
    }

    @Test func aLongAndChainIsFine() throws {
        let format = (0..<5_000).map { "f\($0) == \($0)" }.joined(separator: " AND ")
        let predicate = try QueryPredicate(format: format)
        guard case .and(let nodes) = predicate.node else {
            Issue.record("not an AND")
            return
        }
        #expect(nodes.count == 5_000)
        #expect(predicate.description == format)
    }
}
