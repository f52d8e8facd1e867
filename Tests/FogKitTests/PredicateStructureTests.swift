import FogKit
import Foundation
import Testing

/// `QueryPredicate.structure`: the public syntax tree mirrors what the predicate says.
@Suite struct PredicateStructureTests {
    @Test func structureMirrorsEachForm() throws {
        let date = Date(timeIntervalSinceReferenceDate: 700_000_000)
        let cases: [(String, [Any], QueryPredicate.Structure)] = [
            ("TRUEPREDICATE", [], .value(true)),
            ("n == 3.0", [], .comparison(key: "n", operator: .equal, value: .value(.int64(3)))),
            ("s != %@", ["x"], .comparison(key: "s", operator: .notEqual, value: .value(.string("x")))),
            ("d >= %@", [date], .comparison(key: "d", operator: .greaterOrEqual, value: .value(.date(date)))),
            ("d < now()", [], .comparison(key: "d", operator: .less, value: .now)),
            ("n BETWEEN {1, 5}", [], .between(key: "n", lower: .value(.int64(1)), upper: .value(.int64(5)))),
            ("s IN {'a', 'b'}", [], .in(key: "s", values: [.value(.string("a")), .value(.string("b"))])),
            ("tags CONTAINS 'red'", [], .listContains(key: "tags", value: .value(.string("red")))),
            ("ANY tags IN {'a'}", [], .listContainsAny(key: "tags", values: [.value(.string("a"))])),
            ("ANY tags BEGINSWITH 're'", [], .listAnyBeginsWith(key: "tags", prefix: "re")),
            ("NOT (s BEGINSWITH 'p')", [], .not(.beginsWith(key: "s", prefix: "p"))),
            ("allTokens TOKENMATCHES[cdl] 'a b'", [], .tokenSearch(text: "a b", allTokens: true)),
            (
                "n > 1 AND s == 'x'", [],
                .and([
                    .comparison(key: "n", operator: .greater, value: .value(.int64(1))),
                    .comparison(key: "s", operator: .equal, value: .value(.string("x"))),
                ])
            ),
        ]
        for (format, arguments, expected) in cases {
            #expect(try QueryPredicate(format: format, argumentArray: arguments).structure == expected, "\(format)")
        }
    }

    @Test func distanceKeepsItsKeyCentreAndRadius() throws {
        let here = Location(latitude: 52.5, longitude: 4.75)
        let predicate = try QueryPredicate(format: "distanceToLocation:fromLocation:(place, %@) < 2.5", here)
        guard case .distance(let key, let center, let radius, let inclusive) = predicate.structure else {
            Issue.record("not a distance: \(predicate.structure)")
            return
        }
        #expect(key == "place")
        #expect(center.latitude == 52.5 && center.longitude == 4.75)
        #expect(radius == 2.5)
        #expect(!inclusive)
    }

    @Test func aPredicateOutsideTheLanguageIsFalse() {
        let block = NSPredicate { _, _ in true }
        #expect(QueryPredicate(block).structure == .value(false))
    }
}
