import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// Properties of the predicate front end over many random inputs: the canonical text of any
/// valid syntax tree parses back to an equal tree, and garbage gives a predicate or an
/// `invalidArguments` error — never a crash, never a hang.
@Suite struct PredicatePropertyTests {
    // MARK: - Random syntax trees

    private static let keyPool = [
        "a", "score", "tags", "x_1", "Title", "in", "AND", "not", "Contains", "now", "size", "first", "self1",
        "distanceToLocation", "cast", "Yes", "nil", "truepredicate",
    ]
    private static let referenceKeys = ["recordID", "creatorUserRecordID", "lastModifiedUserRecordID", "parent", "share"]
    private static let dateKeys = ["creationDate", "modificationDate"]
    private static let scalarPool: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "'", "\"", "\\", "\n", "\r", "\t", "\0", "\u{7F}", "\u{1B}", "é", "\u{301}", "😀", "%",
        "@", "{", "}", "(", ")", "#", "$", "ß", "\u{FEFF}", "\u{2028}", "中",
    ]

    private static func string(_ rng: inout SplitMix64) -> String {
        var s = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...8, using: &rng) { s.append(scalarPool.randomElement(using: &rng)!) }
        if Bool.random(using: &rng) {
            s.append(contentsOf: ["AND", " OR ", "%@", "%K", "NOT", "\\u0041"].randomElement(using: &rng)!.unicodeScalars)
        }
        return String(s)
    }

    private static func finiteDouble(_ rng: inout SplitMix64) -> Double {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return Double.random(in: -1000...1000, using: &rng)
        case 1:
            return [0.1, -0.0, 1e-7, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.leastNormalMagnitude, 9.2e18, 1e20, 0.5]
                .randomElement(using: &rng)!
        default:
            while true {
                let d = Double(bitPattern: rng.next())
                if d.isFinite { return d }
            }
        }
    }

    private static func value(_ rng: inout SplitMix64, kind: Int? = nil) -> PredicateValue {
        switch kind ?? Int.random(in: 0..<7, using: &rng) {
        case 0: return .constant(.string(string(&rng)))
        case 1: return .constant(.int64([0, 1, -1, .max, .min, Int64.random(in: .min ... .max, using: &rng)].randomElement(using: &rng)!))
        case 2: return try! PredicateRules.number(finiteDouble(&rng))
        case 3:
            guard case .scalar(let date) = try! PredicateRules.operand(.date(Date(timeIntervalSinceReferenceDate: finiteDouble(&rng))))
            else { fatalError("a date is a scalar") }
            return date
        case 4: return .constant(.bytes(Data((0..<Int.random(in: 0...6, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })))
        case 5:
            let zone =
                Bool.random(using: &rng)
                ? RecordZone.ID.default
                : RecordZone.ID(zoneName: string(&rng), ownerName: Bool.random(using: &rng) ? CurrentUserDefaultName : string(&rng))
            return PredicateRules.reference(Record.ID(recordName: string(&rng), zoneID: zone))
        default: return .now
        }
    }

    private static func values(_ rng: inout SplitMix64) -> [PredicateValue] {
        let kind = Int.random(in: 0..<7, using: &rng)
        return (0..<Int.random(in: 0...4, using: &rng)).map { _ in value(&rng, kind: kind) }
    }

    private static func key(_ rng: inout SplitMix64) -> PredicateKey {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: return PredicateKey(name: referenceKeys.randomElement(using: &rng)!)
        case 1: return PredicateKey(name: dateKeys.randomElement(using: &rng)!)
        default: return PredicateKey(name: keyPool.randomElement(using: &rng)!)
        }
    }

    /// A random valid node: built by the rules, retried until they accept it.
    private static func node(_ rng: inout SplitMix64, depth: Int = 0) -> PredicateNode {
        while true {
            let k = key(&rng)
            let attempt: PredicateNode?
            switch Int.random(in: 0..<(depth < 2 ? 13 : 11), using: &rng) {
            case 0: attempt = .value(Bool.random(using: &rng))
            case 1, 2: attempt = try? PredicateRules.comparison(k, ComparisonOperator.allCases.randomElement(using: &rng)!, value(&rng))
            case 3: attempt = try? PredicateRules.between(k, value(&rng), value(&rng))
            case 4: attempt = try? PredicateRules.in(k, values(&rng))
            case 5: attempt = try? PredicateRules.listContains(k, value(&rng))
            case 6: attempt = try? PredicateRules.listContainsAny(k, values(&rng))
            case 7: attempt = try? PredicateRules.beginsWith(k, .constant(.string(string(&rng))))
            case 8: attempt = try? PredicateRules.listAnyBeginsWith(k, .constant(.string(string(&rng))))
            case 9: attempt = .tokenSearch(string(&rng), allTokens: Bool.random(using: &rng))
            case 10:
                let center = Location(
                    latitude: Double.random(in: -90...90, using: &rng), longitude: Double.random(in: -180...180, using: &rng))
                attempt = try? PredicateRules.distance(
                    k, center: center, radius: PredicateRules.number(abs(finiteDouble(&rng))), inclusive: Bool.random(using: &rng))
            case 11: attempt = try? PredicateRules.not(node(&rng, depth: depth + 1))
            default:
                attempt = PredicateRules.and((0..<Int.random(in: 2...4, using: &rng)).map { _ in node(&rng, depth: depth + 1) })
            }
            if let attempt { return attempt }
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func canonicalTextRoundTrips() throws {
        var rng = SplitMix64(seed: 0x9E_D1CA_7E)
        var kinds = Set<String>()
        for i in 0..<3_000 {
            let predicate = QueryPredicate(node: Self.node(&rng))
            let text = predicate.description
            let parsed: QueryPredicate
            do {
                parsed = try QueryPredicate(format: text)
            } catch {
                Issue.record("#\(i) \(text) does not parse: \(error)")
                continue
            }
            #expect(parsed == predicate, "#\(i) \(text) → \(parsed)")
            #expect(parsed.hashValue == predicate.hashValue, "#\(i)")
            #expect(parsed.description == text, "#\(i)")
            kinds.insert(String(describing: predicate.node).prefix { $0 != "(" }.description)
        }
        #expect(kinds.count >= 12, "\(kinds)")
    }

    // MARK: - Garbage

    private static let vocabulary = [
        "(", ")", "{", "}", "[", "]", ",", ":", ".", "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "&&",
        "||", "!", "AND", "OR", "NOT", "ANY", "SOME", "ALL", "NONE", "IN", "CONTAINS", "BEGINSWITH", "ENDSWITH",
        "LIKE", "MATCHES", "BETWEEN", "TOKENMATCHES", "[cdl]", "[c]", "TRUEPREDICATE", "FALSEPREDICATE", "TRUE",
        "NO", "nil", "NULL", "self", "allTokens", "distanceToLocation:fromLocation:", "now", "now()", "CAST",
        "\"NSDate\"", "\"CLLocation\"", "\"CKReference\"", "\"NSData\"", "%@", "%K", "%d", "%f", "%s", "%", "'red'",
        "\"x\\\"y\"", "'open", "\\u00", "1", "-2.5", "1e9", "-", "99999999999999999999", "a", "tags", "recordID",
        "creationDate", "a.b", "#in", "#", "$x", "@count", "SUBQUERY", "FUNCTION", "sum:", "é", "\\", "😀", "\u{301}",
    ]

    private static let seeds = [
        "isCurrent == 1", "publishedAt <= %@", "%K == %@", "NOT (recordID IN %@) AND author == %@",
        "ANY tags = 'red'", "tags CONTAINS 'red'", "'red' IN tags", "color IN {'red','green'}",
        "name BEGINSWITH 'red'", "self CONTAINS 'bob smith'", "distanceToLocation:fromLocation:(location, %@) < %f",
        "creationDate > %@", "allTokens TOKENMATCHES[cdl] 'x'", "score BETWEEN {1, 2}", "creationDate < now()",
        #"d == CAST(1.5, "NSDate") AND r == CAST({"n", "z", "o"}, "CKReference")"#,
    ]

    nonisolated(unsafe) private static let argumentPool: [Any] = [
        "tags", "red", "a.b", 1, 2.5, -1, Double.nan, true, [1, 2], ["a", "b"], [[1]], Date(timeIntervalSinceReferenceDate: 1),
        Data([1]), Location(latitude: 1, longitude: 2), Record.ID(recordName: "r"), [Record.ID(recordName: "r")],
        Record.Reference(recordID: Record.ID(recordName: "r"), action: .none), FieldValue.stringList(["x"]), NSNull(),
        Optional<Int>.none as Any, UInt64.max,
    ]

    /// Parses `format` with arguments drawn to roughly fit its placeholders; checks the outcome.
    private static func check(_ format: String, _ rng: inout SplitMix64) {
        let placeholders = format.components(separatedBy: "%").count - 1
        let count = max(0, placeholders + Int.random(in: -1...1, using: &rng) * (Int.random(in: 0..<4, using: &rng) == 0 ? 1 : 0))
        let arguments = (0..<count).map { _ in argumentPool.randomElement(using: &rng)! }
        do {
            let predicate = try QueryPredicate(format: format, argumentArray: arguments)
            let again = try? QueryPredicate(format: predicate.description)
            #expect(again == predicate, "\(format.prefix(200)) → \(predicate.description.prefix(200))")
        } catch let error as FogError {
            #expect(error.code == .invalidArguments, "\(format.prefix(200))")
            #expect(error.message.contains("column "), "\(format.prefix(200)): \(error.message)")
        } catch {
            Issue.record("\(format.prefix(200)): not a FogError: \(error)")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func randomTokensNeverCrash() {
        var rng = SplitMix64(seed: 0x70C3)
        for _ in 0..<4_000 {
            let separator = Int.random(in: 0..<4, using: &rng) == 0 ? "" : " "
            let format = (0..<Int.random(in: 1...20, using: &rng))
                .map { _ in Self.vocabulary.randomElement(using: &rng)! }
                .joined(separator: separator)
            Self.check(format, &rng)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func randomBytesNeverCrash() {
        var rng = SplitMix64(seed: 0xB17E5)
        for i in 0..<3_000 {
            let bytes = (0..<Int.random(in: 0...64, using: &rng)).map { _ in
                i % 2 == 0 ? UInt8.random(in: 0...255, using: &rng) : UInt8.random(in: 32...126, using: &rng)
            }
            Self.check(String(decoding: bytes, as: UTF8.self), &rng)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func mutatedValidPredicatesNeverCrash() {
        var rng = SplitMix64(seed: 0x3D7A7E)
        for _ in 0..<4_000 {
            var scalars = Array(Self.seeds.randomElement(using: &rng)!.unicodeScalars)
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let at = Int.random(in: 0...scalars.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0 where at < scalars.count:
                    scalars.removeSubrange(at..<min(scalars.count, at + Int.random(in: 1...4, using: &rng)))
                case 1:
                    scalars.insert(contentsOf: Self.vocabulary.randomElement(using: &rng)!.unicodeScalars, at: at)
                case 2 where at < scalars.count:
                    scalars[at] = Self.scalarPool.randomElement(using: &rng)!
                default:
                    let end = min(scalars.count, at + Int.random(in: 1...8, using: &rng))
                    scalars.insert(contentsOf: scalars[at..<end], at: at)
                }
            }
            var format = ""
            format.unicodeScalars.append(contentsOf: scalars)
            Self.check(format, &rng)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func deepNestingAndLongInputsAreBounded() throws {
        var rng = SplitMix64(seed: 0xDEE9)
        let n = 10_000
        let inputs = [
            String(repeating: "(", count: n),
            String(repeating: "(", count: n) + "a == 1" + String(repeating: ")", count: n),
            String(repeating: ")", count: n),
            String(repeating: "NOT ", count: n) + "a == 1",
            String(repeating: "!", count: 10 * n) + "a == 1",
            "a IN " + String(repeating: "{", count: n),
            "a == " + String(repeating: "CAST(", count: n),
            "a == " + String(repeating: "CAST({", count: n),
            String(repeating: "'", count: n + 1),
            String(repeating: "\\", count: n),
            String(repeating: "a.", count: n) + "b == 1",
            String(repeating: "%@", count: n),
            String(repeating: "ANY ", count: n) + "tags = 'x'",
            "a == '" + String(repeating: "x", count: 100 * n) + "'",
            "a IN {" + (0..<n).map(String.init).joined(separator: ", ") + "}",
        ]
        for input in inputs {
            Self.check(input, &rng)
        }
        // Exactly at the limit parses; one more level does not.
        let limit = PredicateParser.maximumDepth
        let atLimit = String(repeating: "(", count: limit - 1) + "a == 1" + String(repeating: ")", count: limit - 1)
        #expect(try QueryPredicate(format: atLimit) == QueryPredicate(format: "a == 1"))
        let overLimit = "(" + atLimit + ")"
        #expect(throws: FogError.self) { try QueryPredicate(format: overLimit) }
        // A long AND chain is iterative, not recursive.
        let chain = Array(repeating: "a == 1", count: n).joined(separator: " AND ")
        #expect(try QueryPredicate(format: chain).description == chain)
    }
}
