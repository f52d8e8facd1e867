import Foundation
import Testing

@testable import FogKit

/// Building blocks for the predicate tests' expected syntax trees.
enum PredicateFixtures {
    static func key(_ name: String) -> PredicateKey { PredicateKey(name: name) }
    static func str(_ s: String) -> PredicateValue { .constant(.string(s)) }
    static func int(_ n: Int64) -> PredicateValue { .constant(.int64(n)) }
    static func dbl(_ d: Double) -> PredicateValue { .constant(.double(d)) }
    static func date(_ seconds: Double) -> PredicateValue {
        .constant(.date(Date(timeIntervalSinceReferenceDate: seconds)))
    }
    static func ref(_ name: String, zone: RecordZone.ID = .default) -> PredicateValue {
        .constant(.reference(Record.Reference(recordID: Record.ID(recordName: name, zoneID: zone), action: .none)))
    }
    static func center(_ latitude: Double, _ longitude: Double) -> Location {
        Location(
            latitude: latitude, longitude: longitude, altitude: 0, horizontalAccuracy: 0, verticalAccuracy: -1,
            course: -1, speed: -1, timestamp: Date(timeIntervalSinceReferenceDate: 0))
    }
    static func parse(_ format: String, _ arguments: Any...) throws -> PredicateNode {
        try QueryPredicate(format: format, argumentArray: arguments).node
    }
}

/// The predicate language front end (reference §5.2–5.4): every accepted form parses to the
/// expected syntax tree, with its arguments substituted and its values normalised.
@Suite struct PredicateParserTests {
    typealias F = PredicateFixtures

    // MARK: - The seeds' queries

    @Test func seedQueriesParse() throws {
        let date = Date(timeIntervalSinceReferenceDate: 700_000_000)
        let author = Record.Reference(recordID: Record.ID(recordName: "alice"), action: .deleteSelf)
        let seen = [Record.ID(recordName: "n1"), Record.ID(recordName: "n2")]
        let here = Location(latitude: 48.85, longitude: 2.35)

        #expect(try F.parse("isCurrent == 1") == .comparison(F.key("isCurrent"), .equal, F.int(1)))
        #expect(try F.parse("publishedAt <= %@", date) == .comparison(F.key("publishedAt"), .lessOrEqual, .constant(.date(date))))
        #expect(try F.parse("%K == %@", "author", author) == .comparison(F.key("author"), .equal, F.ref("alice")))
        #expect(
            try F.parse("NOT (recordID IN %@) AND author == %@", seen, author)
                == .and([.not(.in(F.key("recordID"), [F.ref("n1"), F.ref("n2")])), .comparison(F.key("author"), .equal, F.ref("alice"))]))
        let redInTags = PredicateNode.listContains(F.key("tags"), F.str("red"))
        #expect(try F.parse("ANY tags = 'red'") == redInTags)
        #expect(try F.parse("tags CONTAINS 'red'") == redInTags)
        #expect(try F.parse("'red' IN tags") == redInTags)
        #expect(try F.parse("color IN {'red','green'}") == .in(F.key("color"), [F.str("red"), F.str("green")]))
        #expect(try F.parse("name BEGINSWITH 'red'") == .beginsWith(F.key("name"), "red"))
        #expect(try F.parse("self CONTAINS 'bob smith'") == .tokenSearch("bob smith", allTokens: false))
        #expect(
            try F.parse("distanceToLocation:fromLocation:(location, %@) < %f", here, 5.0)
                == .distance(F.key("location"), center: F.center(48.85, 2.35), radiusKilometres: 5, inclusive: false))
        #expect(try F.parse("creationDate > %@", date) == .comparison(F.key("creationDate"), .greater, .constant(.date(date))))
    }

    // MARK: - Constants and operators

    @Test func truePredicateAndFalsePredicate() throws {
        #expect(try F.parse("TRUEPREDICATE") == .value(true))
        #expect(try F.parse("  truePredicate ") == .value(true))
        #expect(try F.parse("FALSEPREDICATE") == .value(false))
        #expect(QueryPredicate(value: true) == (try QueryPredicate(format: "TRUEPREDICATE")))
        #expect(QueryPredicate(value: false).description == "FALSEPREDICATE")
    }

    @Test(arguments: [
        ("=", ComparisonOperator.equal), ("==", .equal), ("!=", .notEqual), ("<>", .notEqual),
        ("<", .less), ("<=", .lessOrEqual), ("=<", .lessOrEqual), (">", .greater), (">=", .greaterOrEqual),
        ("=>", .greaterOrEqual),
    ])
    func everyComparisonSpelling(spelling: String, op: ComparisonOperator) throws {
        #expect(try F.parse("score \(spelling) 5") == .comparison(F.key("score"), op, F.int(5)))
        #expect(try F.parse("score\(spelling)5") == .comparison(F.key("score"), op, F.int(5)))
    }

    @Test func numberLiteralsAreNormalised() throws {
        func value(_ literal: String) throws -> PredicateValue? {
            guard case .comparison(_, _, let v) = try F.parse("n == \(literal)") else { return nil }
            return v
        }
        #expect(try value("42") == F.int(42))
        #expect(try value("-42") == F.int(-42))
        #expect(try value("2.5") == F.dbl(2.5))
        #expect(try value("-0.125") == F.dbl(-0.125))
        #expect(try value("3.0") == F.int(3))
        #expect(try value("-2.5e3") == F.int(-2500))
        #expect(try value("1E-3") == F.dbl(0.001))
        #expect(try value("1e+20") == F.dbl(1e20))
        #expect(try value("9223372036854775807") == F.int(.max))
        #expect(try value("-9223372036854775808") == F.int(.min))
        #expect(try value("TRUE") == F.int(1))
        #expect(try value("yes") == F.int(1))
        #expect(try value("False") == F.int(0))
        #expect(try value("NO") == F.int(0))
    }

    @Test func stringLiteralsInEitherQuoteWithEscapes() throws {
        #expect(try F.parse("t == 'a b'") == .comparison(F.key("t"), .equal, F.str("a b")))
        #expect(try F.parse("t == \"a b\"") == .comparison(F.key("t"), .equal, F.str("a b")))
        #expect(try F.parse(#"t == 'it\'s'"#) == .comparison(F.key("t"), .equal, F.str("it's")))
        #expect(try F.parse(#"t == "say \"hi\"""#) == .comparison(F.key("t"), .equal, F.str("say \"hi\"")))
        #expect(try F.parse(#"t == "a\\b\n\t\r\u00e9""#) == .comparison(F.key("t"), .equal, F.str("a\\b\n\t\ré")))
        #expect(try F.parse("t == \"it's\"") == .comparison(F.key("t"), .equal, F.str("it's")))
        #expect(try F.parse("t == 'ünï 😀'") == .comparison(F.key("t"), .equal, F.str("ünï 😀")))
        #expect(try F.parse("t == ''") == .comparison(F.key("t"), .equal, F.str("")))
    }

    @Test func betweenTakesABraceListOrAnArray() throws {
        let expected = PredicateNode.between(F.key("score"), lower: F.int(10), upper: F.int(20))
        #expect(try F.parse("score BETWEEN {10, 20}") == expected)
        #expect(try F.parse("score between %@", [10, 20]) == expected)
        #expect(try F.parse("score BETWEEN {%@, %@}", 10, 20.0) == expected)
        #expect(try F.parse("title BETWEEN {'a', 'm'}") == .between(F.key("title"), lower: F.str("a"), upper: F.str("m")))
    }

    @Test func inTakesAConstantListAnArrayOrAListField() throws {
        let expected = PredicateNode.in(F.key("color"), [F.str("red"), F.str("green")])
        #expect(try F.parse("color IN {'red', 'green'}") == expected)
        #expect(try F.parse("color IN %@", ["red", "green"]) == expected)
        #expect(try F.parse("color in %@", NSArray(array: ["red", "green"])) == expected)
        #expect(try F.parse("color IN %@", Set(["red"])) == .in(F.key("color"), [F.str("red")]))
        #expect(try F.parse("ANY {'red', 'green'} = color") == expected)
        #expect(try F.parse("color IN {}") == .in(F.key("color"), []))
        #expect(try F.parse("n IN {1, 2.5}") == .in(F.key("n"), [F.int(1), F.dbl(2.5)]))
        #expect(try F.parse("%@ IN tags", "red") == .listContains(F.key("tags"), F.str("red")))
    }

    @Test func listMembershipSpellings() throws {
        let expected = PredicateNode.listContains(F.key("tags"), F.str("red"))
        for format in [
            "ANY tags = 'red'", "ANY tags == 'red'", "SOME tags = 'red'", "any tags contains 'red'",
            "tags CONTAINS 'red'", "'red' IN tags", "\"red\" in tags",
        ] {
            #expect(try F.parse(format) == expected, "\(format)")
        }
        #expect(try F.parse("%K CONTAINS %@", "tags", "red") == expected)
        #expect(try F.parse("ANY tags IN {'a', 'b'}") == .listContainsAny(F.key("tags"), [F.str("a"), F.str("b")]))
        #expect(try F.parse("ANY tags BEGINSWITH %@", "re") == .listAnyBeginsWith(F.key("tags"), "re"))
        #expect(try F.parse("scores CONTAINS 3") == .listContains(F.key("scores"), F.int(3)))
    }

    @Test func tokenSearchForms() throws {
        #expect(try F.parse("self CONTAINS 'bob smith'") == .tokenSearch("bob smith", allTokens: false))
        #expect(try F.parse("SELF contains %@", "bob") == .tokenSearch("bob", allTokens: false))
        #expect(try F.parse("allTokens TOKENMATCHES[cdl] 'bob smith'") == .tokenSearch("bob smith", allTokens: true))
        #expect(try F.parse("allTokens tokenmatches[lcd] %@", "x") == .tokenSearch("x", allTokens: true))
        #expect(
            try F.parse("self CONTAINS 'bob' AND self CONTAINS 'smith'")
                == .and([.tokenSearch("bob", allTokens: false), .tokenSearch("smith", allTokens: false)]))
    }

    @Test func distanceForms() throws {
        let here = Location(latitude: 37.33, longitude: -122.03)
        let center = F.center(37.33, -122.03)
        #expect(
            try F.parse("distanceToLocation:fromLocation:(location, %@) <= 10", here)
                == .distance(F.key("location"), center: center, radiusKilometres: 10, inclusive: true))
        #expect(
            try F.parse("distanceToLocation:fromLocation:(%K, %@) < %@", "place", here, 2.5)
                == .distance(F.key("place"), center: center, radiusKilometres: 2.5, inclusive: false))
        #expect(
            try F.parse(#"distanceToLocation:fromLocation:(location, CAST({37.33, -122.03}, "CLLocation")) < 1"#)
                == .distance(F.key("location"), center: center, radiusKilometres: 1, inclusive: false))
        // Only the coordinates count: the same place at another time is the same predicate.
        var later = here
        later.timestamp = Date(timeIntervalSince1970: 0)
        later.altitude = 100
        #expect(
            try QueryPredicate(format: "distanceToLocation:fromLocation:(l, %@) < 1", here)
                == QueryPredicate(format: "distanceToLocation:fromLocation:(l, %@) < 1", later))
    }

    // MARK: - Keys

    @Test func keys() throws {
        #expect(try F.parse("a_1 == 2") == .comparison(F.key("a_1"), .equal, F.int(2)))
        #expect(try F.parse("%K == 2", "score") == .comparison(F.key("score"), .equal, F.int(2)))
        #expect(try F.parse("#in == 2") == .comparison(F.key("in"), .equal, F.int(2)))
        #expect(try F.parse("#AND CONTAINS 'x'") == .listContains(F.key("AND"), F.str("x")))
        #expect(try F.parse("now == 2") == .comparison(F.key("now"), .equal, F.int(2)))
        #expect(try F.parse("'x' IN #now") == .listContains(F.key("now"), F.str("x")))
        #expect(
            try F.parse("size == 2 AND first == 1")
                == .and([
                    .comparison(F.key("size"), .equal, F.int(2)), .comparison(F.key("first"), .equal, F.int(1)),
                ]))
    }

    @Test func systemKeys() throws {
        let id = Record.ID(recordName: "r1", zoneID: RecordZone.ID(zoneName: "Z"))
        let ref = F.ref("r1", zone: RecordZone.ID(zoneName: "Z"))
        let date = Date(timeIntervalSinceReferenceDate: 1000)
        let record = Record(recordType: "Note", recordID: id)
        for key in ["recordID", "creatorUserRecordID", "lastModifiedUserRecordID", "parent", "share"] {
            #expect(try F.parse("\(key) == %@", id) == .comparison(F.key(key), .equal, ref), "\(key)")
            #expect(
                try F.parse("\(key) != %@", Record.Reference(recordID: id, action: .deleteSelf)) == .comparison(F.key(key), .notEqual, ref))
            #expect(try F.parse("\(key) == %@", record) == .comparison(F.key(key), .equal, ref))
        }
        #expect(try F.parse("recordID IN %@", [id]) == .in(F.key("recordID"), [ref]))
        #expect(try F.parse("recordID IN %@", [Record.Reference(recordID: id, action: .none)]) == .in(F.key("recordID"), [ref]))
        #expect(
            try F.parse("recordID IN %@", FieldValue.referenceList([Record.Reference(recordID: id, action: .deleteSelf)]))
                == .in(F.key("recordID"), [ref]))
        for key in ["creationDate", "modificationDate"] {
            #expect(try F.parse("\(key) > %@", date) == .comparison(F.key(key), .greater, .constant(.date(date))))
            #expect(try F.parse("\(key) < now") == .comparison(F.key(key), .less, .now))
            #expect(try F.parse("\(key) <= now()") == .comparison(F.key(key), .lessOrEqual, .now))
            #expect(try F.parse("\(key) BETWEEN {%@, now()}", date) == .between(F.key(key), lower: .constant(.date(date)), upper: .now))
        }
    }

    // MARK: - Compounds

    @Test func andSpellingsAndFlattening() throws {
        let a = PredicateNode.comparison(F.key("a"), .equal, F.int(1))
        let b = PredicateNode.comparison(F.key("b"), .equal, F.int(2))
        let c = PredicateNode.comparison(F.key("c"), .equal, F.int(3))
        #expect(try F.parse("a == 1 AND b == 2") == .and([a, b]))
        #expect(try F.parse("a == 1 && b == 2") == .and([a, b]))
        #expect(try F.parse("a == 1 and b == 2 And c == 3") == .and([a, b, c]))
        #expect(try F.parse("(a == 1 AND b == 2) AND c == 3") == .and([a, b, c]))
        #expect(try F.parse("a == 1 AND (b == 2 AND (c == 3))") == .and([a, b, c]))
        #expect(try F.parse("((a == 1))") == a)
        #expect(QueryPredicate.and([]) == QueryPredicate(value: true))
        #expect(QueryPredicate.and([QueryPredicate(node: a)]).node == a)
        #expect(QueryPredicate.and([QueryPredicate(node: .and([a, b])), QueryPredicate(node: c)]).node == .and([a, b, c]))
    }

    @Test func allowedNegations() throws {
        let cases: [(String, PredicateNode)] = [
            ("NOT a == 1", .comparison(F.key("a"), .equal, F.int(1))),
            ("NOT (recordID IN %@)", .in(F.key("recordID"), [F.ref("x")])),
            ("NOT tags CONTAINS 'x'", .listContains(F.key("tags"), F.str("x"))),
            ("NOT 'x' IN tags", .listContains(F.key("tags"), F.str("x"))),
            ("NOT name BEGINSWITH 'x'", .beginsWith(F.key("name"), "x")),
            ("NOT ANY tags BEGINSWITH 'x'", .listAnyBeginsWith(F.key("tags"), "x")),
            ("NOT ANY tags IN {'x'}", .listContainsAny(F.key("tags"), [F.str("x")])),
            ("NOT color IN {'x'}", .in(F.key("color"), [F.str("x")])),
        ]
        for (format, inner) in cases {
            let arguments: [Any] = format.contains("%@") ? [[Record.ID(recordName: "x")]] : []
            #expect(try QueryPredicate(format: format, argumentArray: arguments).node == .not(inner), "\(format)")
            let bang = format.replacingOccurrences(of: "NOT ", with: "!")
            #expect(try QueryPredicate(format: bang, argumentArray: arguments).node == .not(inner), "\(bang)")
        }
        #expect(
            try F.parse("not (a == 1) AND b == 2")
                == .and([.not(.comparison(F.key("a"), .equal, F.int(1))), .comparison(F.key("b"), .equal, F.int(2))]))
    }

    // MARK: - Arguments

    @Test func everyArgumentTypeIsAccepted() throws {
        func value(_ argument: Any) throws -> PredicateValue? {
            guard case .comparison(_, _, let v) = try F.parse("f == %@", argument) else { return nil }
            return v
        }
        let date = Date(timeIntervalSinceReferenceDate: 12345.5)
        let bytes = Data([0, 1, 0xFF])
        #expect(try value("s") == F.str("s"))
        #expect(try value(NSString(string: "s")) == F.str("s"))
        for n in [
            7 as Any, Int64(7), Int32(7), Int16(7), Int8(7), UInt(7), UInt64(7), UInt32(7), UInt16(7), UInt8(7),
            7.0, Float(7), NSNumber(value: 7), NSNumber(value: 7.0), FieldValue.int64(7), FieldValue.double(7),
        ] {
            #expect(try value(n) == F.int(7), "\(type(of: n))")
        }
        #expect(try value(true) == F.int(1))
        #expect(try value(NSNumber(value: false)) == F.int(0))
        #expect(try value(2.5) == F.dbl(2.5))
        #expect(try value(Float(0.5)) == F.dbl(0.5))
        #expect(try value(NSNumber(value: 2.5)) == F.dbl(2.5))
        #expect(try value(date) == .constant(.date(date)))
        #expect(try value(NSDate(timeIntervalSinceReferenceDate: 12345.5)) == .constant(.date(date)))
        #expect(try value(bytes) == .constant(.bytes(bytes)))
        #expect(try value(NSData(data: bytes)) == .constant(.bytes(bytes)))
        #expect(try value(FieldValue.string("s")) == F.str("s"))
        #expect(try value(Record.ID(recordName: "r")) == F.ref("r"))
        #expect(try value(Record.Reference(recordID: Record.ID(recordName: "r"), action: .deleteSelf)) == F.ref("r"))
        #expect(try value(Record(recordType: "T", recordID: Record.ID(recordName: "r"))) == F.ref("r"))
        #expect(try value(Optional<Int>.some(3) as Any) == F.int(3))
        #expect(try F.parse("n == %d", 3) == .comparison(F.key("n"), .equal, F.int(3)))
        #expect(try F.parse("n == %ld", Int64(3)) == .comparison(F.key("n"), .equal, F.int(3)))
        #expect(try F.parse("n == %f", 0.5) == .comparison(F.key("n"), .equal, F.dbl(0.5)))
        #expect(try F.parse("n IN %@", [1, 2] as [Int64]) == .in(F.key("n"), [F.int(1), F.int(2)]))
        #expect(try F.parse("n IN %@", FieldValue.doubleList([1, 2.5])) == .in(F.key("n"), [F.int(1), F.dbl(2.5)]))
        #expect(try F.parse("n IN %@", [NSNumber(value: 1), NSNumber(value: 2)]) == .in(F.key("n"), [F.int(1), F.int(2)]))
    }

    @Test func castLiteralsForValuesWithoutLiterals() throws {
        #expect(try F.parse(#"d == CAST(726000000.5, "NSDate")"#) == .comparison(F.key("d"), .equal, F.date(726_000_000.5)))
        #expect(
            try F.parse(#"b == CAST("00ff10", "NSData")"#) == .comparison(F.key("b"), .equal, .constant(.bytes(Data([0, 0xFF, 0x10])))))
        #expect(try F.parse(#"r == CAST("n1", "CKReference")"#) == .comparison(F.key("r"), .equal, F.ref("n1")))
        #expect(try F.parse(#"r == CAST('n1', 'CKRecordID')"#) == .comparison(F.key("r"), .equal, F.ref("n1")))
        let zone = RecordZone.ID(zoneName: "Z", ownerName: "bob")
        #expect(try F.parse(#"r == CAST({"n1", "Z", "bob"}, "CKReference")"#) == .comparison(F.key("r"), .equal, F.ref("n1", zone: zone)))
        #expect(
            try F.parse(#"r == CAST({"n1", "Z"}, "CKReference")"#)
                == .comparison(F.key("r"), .equal, F.ref("n1", zone: RecordZone.ID(zoneName: "Z"))))
    }

    // MARK: - Canonical text

    @Test func descriptionIsCanonical() throws {
        let cases: [(String, [Any], String)] = [
            ("a = 1 && b =< 'x'", [], #"a == 1 AND b <= "x""#),
            ("ANY tags = 'red'", [], #"tags CONTAINS "red""#),
            ("'red' IN tags", [], #"tags CONTAINS "red""#),
            ("not (recordID in %@)", [[Record.ID(recordName: "n")]], #"NOT (recordID IN {CAST("n", "CKReference")})"#),
            ("isCurrent == TRUE", [], "isCurrent == 1"),
            ("score BETWEEN %@", [[1, 2.5]], "score BETWEEN {1, 2.5}"),
            ("self contains 'bob'", [], #"self CONTAINS "bob""#),
            ("allTokens TOKENMATCHES[lcd] 'bob'", [], #"allTokens TOKENMATCHES[cdl] "bob""#),
            ("ANY {'a'} == c", [], #"c IN {"a"}"#),
            ("ANY tags IN {'a'}", [], #"ANY tags IN {"a"}"#),
            ("SOME tags BEGINSWITH 'a'", [], #"ANY tags BEGINSWITH "a""#),
            ("#in == 'q\"'", [], #"#in == "q\"""#),
            ("creationDate < now", [], "creationDate < now()"),
            ("d == %@", [Date(timeIntervalSinceReferenceDate: 0.5)], #"d == CAST(0.5, "NSDate")"#),
            ("b == %@", [Data([1, 0xAB])], #"b == CAST("01ab", "NSData")"#),
            (
                "distanceToLocation:fromLocation:(loc, %@) <= 5", [Location(latitude: 1.5, longitude: -2)],
                #"distanceToLocation:fromLocation:(loc, CAST({1.5, -2.0}, "CLLocation")) <= 5.0"#
            ),
            (
                "r == %@", [Record.ID(recordName: "n", zoneID: RecordZone.ID(zoneName: "Z"))],
                #"r == CAST({"n", "Z", "__defaultOwner__"}, "CKReference")"#
            ),
        ]
        for (format, arguments, canonical) in cases {
            let predicate = try QueryPredicate(format: format, argumentArray: arguments)
            #expect(predicate.description == canonical, "\(format)")
            #expect(try QueryPredicate(format: predicate.description) == predicate, "\(format)")
        }
    }
}
