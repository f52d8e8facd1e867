import Foundation
import Testing

@testable import FogKit

/// The typed builder makes the same predicates as the format strings, and refuses what
/// CloudKit refuses when the predicate is built.
@Suite struct PredicateBuilderTests {
    let date = Date(timeIntervalSinceReferenceDate: 700_000_000.25)
    let here = Location(latitude: 37.33, longitude: -122.03)
    let ids = [Record.ID(recordName: "a"), Record.ID(recordName: "b", zoneID: RecordZone.ID(zoneName: "Z"))]

    @Test func builderAndParserAgree() throws {
        let author = Record.Reference(recordID: Record.ID(recordName: "alice"), action: .deleteSelf)
        let pairs: [(QueryPredicate, QueryPredicate)] = [
            (try QueryPredicate.field("isCurrent") == 1, try QueryPredicate(format: "isCurrent == 1")),
            (try QueryPredicate.field("isCurrent") == true, try QueryPredicate(format: "isCurrent = YES")),
            (try QueryPredicate.field("publishedAt") <= date, try QueryPredicate(format: "publishedAt <= %@", date)),
            (try QueryPredicate.field("author") == author, try QueryPredicate(format: "%K == %@", "author", author)),
            (try QueryPredicate.field("author") == author.recordID, try QueryPredicate(format: "author == %@", author)),
            (try QueryPredicate.field("n") != 2.5, try QueryPredicate(format: "n <> 2.5")),
            (try QueryPredicate.field("n") < 3.0, try QueryPredicate(format: "n < 3")),
            (try QueryPredicate.field("n") > Int64(3), try QueryPredicate(format: "n > %d", 3)),
            (try QueryPredicate.field("s") >= "m", try QueryPredicate(format: "s => 'm'")),
            (try QueryPredicate.field("tags").contains("red"), try QueryPredicate(format: "ANY tags = 'red'")),
            (try QueryPredicate.field("tags").notContains("red"), try QueryPredicate(format: "NOT 'red' IN tags")),
            (try QueryPredicate.field("refs").contains(ids[0]), try QueryPredicate(format: "refs CONTAINS %@", ids[0])),
            (try QueryPredicate.field("tags").containsAny(["a", "b"]), try QueryPredicate(format: "ANY tags IN {'a', 'b'}")),
            (try QueryPredicate.field("tags").notContainsAny(["a"]), try QueryPredicate(format: "NOT ANY tags IN %@", ["a"])),
            (try QueryPredicate.field("tags").anyBeginsWith("re"), try QueryPredicate(format: "ANY tags BEGINSWITH 're'")),
            (try QueryPredicate.field("tags").notAnyBeginsWith("re"), try QueryPredicate(format: "!(SOME tags BEGINSWITH 're')")),
            (try QueryPredicate.field("score").between(10, 20), try QueryPredicate(format: "score BETWEEN {10, 20}")),
            (try QueryPredicate.field("at").between(date, date), try QueryPredicate(format: "at BETWEEN %@", [date, date])),
            (try QueryPredicate.field("author").in(["a", "b"]), try QueryPredicate(format: "author IN {'a','b'}")),
            (try QueryPredicate.field("author").notIn(["a"]), try QueryPredicate(format: "NOT author IN {'a'}")),
            (try QueryPredicate.field("title").beginsWith("Re"), try QueryPredicate(format: "title BEGINSWITH 'Re'")),
            (try QueryPredicate.field("title").notBeginsWith("Re"), try QueryPredicate(format: "NOT (title BEGINSWITH 'Re')")),
            (try QueryPredicate.recordID.in(ids), try QueryPredicate(format: "recordID IN %@", ids)),
            (try QueryPredicate.recordID.notIn(ids), try QueryPredicate(format: "NOT (recordID IN %@)", ids)),
            (try QueryPredicate.parent == ids[0], try QueryPredicate(format: "parent == %@", ids[0])),
            (try QueryPredicate.share != ids[1], try QueryPredicate(format: "share != %@", ids[1])),
            (try QueryPredicate.creatorUserRecordID == ids[0], try QueryPredicate(format: "creatorUserRecordID == %@", ids[0])),
            (try QueryPredicate.lastModifiedUserRecordID == ids[0], try QueryPredicate(format: "lastModifiedUserRecordID == %@", ids[0])),
            (try QueryPredicate.creationDate > date, try QueryPredicate(format: "creationDate > %@", date)),
            (try QueryPredicate.modificationDate < .now, try QueryPredicate(format: "modificationDate < now")),
            (try QueryPredicate.creationDate >= .now, try QueryPredicate(format: "creationDate >= now()")),
            (QueryPredicate.tokens("bob smith"), try QueryPredicate(format: "self CONTAINS 'bob smith'")),
            (QueryPredicate.allTokens("bob smith"), try QueryPredicate(format: "allTokens TOKENMATCHES[cdl] 'bob smith'")),
            (
                try QueryPredicate.field("location").distance(from: here) < 5,
                try QueryPredicate(format: "distanceToLocation:fromLocation:(location, %@) < %f", here, 5.0)
            ),
            (
                try QueryPredicate.field("location").distance(from: here) <= 0.5,
                try QueryPredicate(format: "distanceToLocation:fromLocation:(%K, %@) <= 0.5", "location", here)
            ),
            (try !(QueryPredicate.field("a") == 1), try QueryPredicate(format: "NOT a == 1")),
            (
                try QueryPredicate.field("a") == 1 && .field("b") == 2 && .tokens("x"),
                try QueryPredicate(format: "a == 1 AND (b == 2 && self CONTAINS 'x')")
            ),
        ]
        for (index, (built, parsed)) in pairs.enumerated() {
            #expect(built == parsed, "pair \(index): \(built) vs \(parsed)")
            #expect(built.description == parsed.description, "pair \(index)")
        }
    }

    @Test func implicitMemberSyntaxWhereAPredicateIsExpected() throws {
        func accept(_ predicate: QueryPredicate) -> QueryPredicate { predicate }
        let p = accept(try .field("tags").contains("red"))
        #expect(p == (try QueryPredicate(format: "tags CONTAINS 'red'")))
        let q = accept(try .recordID.notIn(ids))
        #expect(q == (try QueryPredicate(format: "NOT (recordID IN %@)", ids)))
        let r: QueryPredicate = try .field("isCurrent") == 1 && .field("score") > 3
        #expect(r == (try QueryPredicate(format: "isCurrent == 1 AND score > 3")))
        // The example of the Predicates article.
        let article =
            try QueryPredicate.field("score").between(10, 20)
            && .field("tags").contains("red")
            && .field("title").beginsWith("Re")
            && .field("author").in(["alice", "bob"])
            && .field("location").distance(from: here) < 5
            && .creationDate > .now
            && !(.field("status") == "draft")
        let format =
            "score BETWEEN {10, 20} AND tags CONTAINS 'red' AND title BEGINSWITH 'Re' AND author IN {'alice', 'bob'} "
            + "AND distanceToLocation:fromLocation:(location, %@) < 5 AND creationDate > now AND NOT status == 'draft'"
        #expect(article == (try QueryPredicate(format: format, here)))
    }

    @Test func andAndValuePredicates() throws {
        let a = try QueryPredicate.field("a") == 1
        let b = try QueryPredicate.field("b") == 2
        #expect(QueryPredicate.and([]) == QueryPredicate(value: true))
        #expect(QueryPredicate.and([a]) == a)
        #expect(QueryPredicate.and([a, b]) == (a && b))
        #expect(QueryPredicate.and([a && b, a]) == (try QueryPredicate(format: "a == 1 AND b == 2 AND a == 1")))
        #expect(QueryPredicate(value: false) == (try QueryPredicate(format: "FALSEPREDICATE")))
    }

    @Test func whatCloudKitRefusesThrowsWhenBuilt() {
        func expectInvalid(_ what: String, _ construct: String, _ body: () throws -> QueryPredicate) {
            do {
                let predicate = try body()
                Issue.record("\(what) built \(predicate)")
            } catch let error as FogError {
                #expect(error.code == .invalidArguments, "\(what)")
                #expect(error.message.contains(construct), "\(what): \(error.message)")
            } catch {
                Issue.record("\(what): not a FogError: \(error)")
            }
        }
        let a = QueryPredicate.tokens("x")
        expectInvalid("key path", "author.name") { try QueryPredicate.field("author.name") == "x" }
        expectInvalid("bad key", "'1a'") { try QueryPredicate.field("1a") == "x" }
        expectInvalid("reserved key", "recordType") { try QueryPredicate.field("recordType") == "x" }
        expectInvalid("NOT token search", "NOT over self CONTAINS") { try !a }
        expectInvalid("NOT AND", "NOT over an AND") { try !(QueryPredicate.field("a") == 1 && .field("b") == 2) }
        expectInvalid("NOT NOT", "NOT over NOT") { try !(!(QueryPredicate.field("a") == 1)) }
        expectInvalid("NOT BETWEEN", "NOT over BETWEEN") { try !(QueryPredicate.field("a").between(1, 2)) }
        expectInvalid("NOT distance", "NOT over distanceToLocation") {
            try !(QueryPredicate.field("l").distance(from: here) < 1)
        }
        expectInvalid("NOT TRUEPREDICATE", "NOT over TRUEPREDICATE") { try !QueryPredicate(value: true) }
        expectInvalid("recordID with a string", "recordID") { try QueryPredicate.recordID == "abc" }
        expectInvalid("recordID ordering", "<") { try QueryPredicate.recordID < Record.Reference(recordID: ids[0], action: .none) }
        expectInvalid("creationDate with a number", "creationDate") { try QueryPredicate.creationDate > 5 }
        expectInvalid("now on a reference field", "recordID") { try QueryPredicate.recordID < .now }
        expectInvalid("NaN", "not finite") { try QueryPredicate.field("n") == Double.nan }
        expectInvalid("list value", "not a list") { try QueryPredicate.field("tags") == ["a"] }
        expectInvalid("location value", "distanceToLocation") { try QueryPredicate.field("l") == here }
        expectInvalid("asset", "asset") {
            try QueryPredicate.field("f") == Asset(fileURL: URL(fileURLWithPath: "/tmp/x"))
        }
        expectInvalid("BETWEEN mixed", "same type") { try QueryPredicate.field("n").between(FieldValue.int64(1), FieldValue.string("x")) }
        expectInvalid("bad centre", "valid coordinate") {
            try QueryPredicate.field("l").distance(from: Location(latitude: 0, longitude: 200)) < 1
        }
        expectInvalid("negative radius", "negative") { try QueryPredicate.field("l").distance(from: here) < -1 }
        expectInvalid("infinite radius", "not finite") { try QueryPredicate.field("l").distance(from: here) <= .infinity }
        expectInvalid("list on recordID", "not a list") { try QueryPredicate.recordID.contains(ids[0]) }
        expectInvalid("BEGINSWITH on a system field", "BEGINSWITH") { try QueryPredicate.creationDate.beginsWith("x") }
        expectInvalid("IN mixing", "mixes") { try QueryPredicate.field("f").in([FieldValue.int64(1), .string("x")]) }
    }
}
