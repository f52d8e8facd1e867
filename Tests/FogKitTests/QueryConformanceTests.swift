import FogKit
import FogKitTesting
import Foundation
import Testing

/// One row of the conformance table: a predicate in CloudKit's format, its meaning for the
/// brute-force evaluator, and optionally a sort.
struct QueryShape {
    let name: String
    let format: String
    let args: [Any]
    let cond: RefCond
    var sorts: [Query.SortDescriptor]?
    /// With every index declared: whether an index serves the predicate (`explain` must then
    /// not scan the record type) or not (it must); `nil` leaves it unchecked.
    var served: Bool?
    /// With no index declared: whether the plan must scan the record type (`false` for the
    /// shapes a record name lookup may serve without an index).
    var scansWithoutIndexes: Bool = true
    /// Check only the first batch, with this limit (the seed's "limit 1").
    var firstBatch: Int?

    func query() throws -> Query {
        let query = Query(recordType: QueryFixture.postType, predicate: try QueryPredicate(format: format, argumentArray: args))
        query.sortDescriptors = sorts
        return query
    }
}

/// The data the table's constants come from, so that the constants hit.
struct ShapeContext {
    let zone: RecordZone.ID
    let authors: [Record.ID]
    let authorRecords: [Record]
    let posts: [RefRecord]
    let me: Record.ID

    /// Every 7th post, a record that does not exist, and an author (never a Post).
    var sampleIDs: [Record.ID] {
        stride(from: 0, to: posts.count, by: 7).map { Record.ID(recordName: posts[$0].name, zoneID: zone) }
            + [Record.ID(recordName: "ghost", zoneID: zone), authors[0]]
    }

    func date(_ hours: Double) -> Date { Date(timeIntervalSinceReferenceDate: QueryFixture.baseDate + hours * QueryFixture.hour) }

    /// A stored system date at a fraction of the sorted dates, so that `>=` and `<=` tie.
    func systemDate(_ key: KeyPath<RefRecord, Date?>, at fraction: Double) -> Date {
        let dates = posts.compactMap { $0[keyPath: key] }.sorted()
        guard !dates.isEmpty else { return Date(timeIntervalSinceReferenceDate: 0) }
        return dates[min(dates.count - 1, Int(Double(dates.count) * fraction))]
    }
}

enum QueryTable {
    static func asc(_ key: String) -> Query.SortDescriptor { .init(key: key, ascending: true) }
    static func desc(_ key: String) -> Query.SortDescriptor { .init(key: key, ascending: false) }

    static func shape(
        _ format: String, _ args: [Any] = [], _ cond: RefCond, name: String? = nil, sorts: [Query.SortDescriptor]? = nil,
        served: Bool? = nil, scans: Bool = true, firstBatch: Int? = nil
    ) -> QueryShape {
        QueryShape(
            name: name ?? format, format: format, args: args, cond: cond, sorts: sorts, served: served,
            scansWithoutIndexes: scans, firstBatch: firstBatch)
    }

    /// Every shape of reference §5.3, the seeds' queries, the NOT forms CloudKit allows,
    /// AND combinations and sorts.
    static func shapes(_ ctx: ShapeContext) -> [QueryShape] {
        let s = FieldValue.string, i = FieldValue.int64, d = FieldValue.double
        let ref = RefEval.ref
        let a = ctx.authors
        func reference(_ id: Record.ID) -> Record.Reference { Record.Reference(recordID: id, action: .none) }
        let sample = ctx.sampleIDs
        let sampleRefs = sample.map { ref($0.recordName) }
        let post3 = Record.ID(recordName: QueryFixture.postName(3), zoneID: ctx.zone)
        let midCreation = ctx.systemDate(\.creationDate, at: 0.5)
        let midModification = ctx.systemDate(\.modificationDate, at: 0.33)
        let lateModification = ctx.systemDate(\.modificationDate, at: 0.8)
        let paris = QueryFixture.paris
        let antimeridian = Location(latitude: 0, longitude: 180)
        let northPole = Location(latitude: 90, longitude: 0)
        let sydney = Location(latitude: -33.8688, longitude: 151.2093)
        let body =
            ctx.posts.lazy.compactMap { r -> String? in
                if case .string(let b) = r.value("body") { return b } else { return nil }
            }.first ?? "alpha"
        let distance = "distanceToLocation:fromLocation:(location, %@)"
        let storedCreatedAt =
            ctx.posts.lazy.compactMap { r -> Date? in
                if case .date(let d) = r.value("createdAt") { return d } else { return nil }
            }.first ?? ctx.date(10)
        // Two tokens of one stored body, upper-cased: TOKENMATCHES finds at least that record.
        let bodyTokens =
            ctx.posts.lazy.compactMap { r -> String? in
                guard case .string(let b) = r.value("body") else { return nil }
                let t = RefEval.tokens(b)
                return t.count >= 2 ? "\(t[0].uppercased()) \(t[t.count - 1])" : nil
            }.first ?? "alpha beta"

        return [
            // The seeds' queries.
            shape("isCurrent == 1", [], .compare("isCurrent", .eq, i(1)), name: "seed: isCurrent == 1", served: true),
            shape(
                "publishedAt <= %@", [ctx.date(50)], .compare("publishedAt", .le, .date(ctx.date(50))),
                name: "seed: publishedAt <= %@ sorted by -modificationDate, limit 1", sorts: [desc("modificationDate")],
                served: true, firstBatch: 1),
            shape(
                "publishedAt <= %@", [ctx.date(50)], .compare("publishedAt", .le, .date(ctx.date(50))),
                name: "seed (all batches): publishedAt <= %@ sorted by -modificationDate", sorts: [desc("modificationDate")],
                served: true),
            shape(
                "%K == %@", ["author", reference(a[1])], .compare("author", .eq, ref(a[1].recordName)), name: "seed: %K == %@ (reference)",
                served: true),
            shape(
                "NOT (recordID IN %@) AND author == %@", [sample, reference(a[2])],
                .and([.not(.oneOf("recordID", sampleRefs)), .compare("author", .eq, ref(a[2].recordName))]),
                name: "seed: NOT (recordID IN %@) AND author == %@", served: true),

            // INT64.
            shape("score == 3", [], .compare("score", .eq, i(3)), served: true),
            shape("score = %@", [Int64(7)], .compare("score", .eq, i(7)), served: true),
            shape("score != 3", [], .compare("score", .ne, i(3)), served: false),
            shape("score <> %d", [5], .compare("score", .ne, i(5)), served: false),
            shape("score < 2", [], .compare("score", .lt, i(2)), served: true),
            shape("score =< 2", [], .compare("score", .le, i(2)), served: true),
            shape("score > 9", [], .compare("score", .gt, i(9)), served: true),
            shape("score => 9", [], .compare("score", .ge, i(9)), served: true),
            shape("score > 2.5", [], .compare("score", .gt, d(2.5)), served: true),
            shape("score < %@", [-1.5], .compare("score", .lt, d(-1.5)), served: true),
            shape("score >= %@", [4.0], .compare("score", .ge, i(4)), served: true),
            shape("score BETWEEN {2, 5}", [], .between("score", i(2), i(5)), served: true),
            shape("score BETWEEN %@", [[Int64(8), Int64(8)]], .between("score", i(8), i(8)), served: true),
            shape("score IN {1, 4, 7}", [], .oneOf("score", [i(1), i(4), i(7)]), served: true),
            shape("score IN %@", [[Int64(-3), Int64(12), Int64(100)]], .oneOf("score", [i(-3), i(12), i(100)]), served: true),
            shape("NOT (score IN {1, 4, 7})", [], .not(.oneOf("score", [i(1), i(4), i(7)])), served: false),
            shape("NOT (score == 3)", [], .not(.compare("score", .eq, i(3))), served: false),
            shape("!(score < 5)", [], .not(.compare("score", .lt, i(5))), served: false),

            // DOUBLE: numeric comparison, -0.0 == 0.0.
            shape("ratio == 0", [], .compare("ratio", .eq, i(0)), served: true),
            shape("ratio == %@", [-0.0], .compare("ratio", .eq, d(-0.0)), served: true),
            shape("ratio < -0.5", [], .compare("ratio", .lt, d(-0.5)), served: true),
            shape("ratio >= 1", [], .compare("ratio", .ge, i(1)), served: true),
            shape("ratio BETWEEN {-1, 0.5}", [], .between("ratio", i(-1), d(0.5)), served: true),
            shape("ratio IN {0.25, 2, -2}", [], .oneOf("ratio", [d(0.25), i(2), i(-2)]), served: true),
            shape("ratio != 0", [], .compare("ratio", .ne, i(0)), served: false),

            // STRING: bytes, case- and diacritic-sensitive.
            shape(
                "title == 'Caf\u{E9} society'", [], .compare("title", .eq, s("Caf\u{E9} society")),
                name: "title == 'Café society' (composed é)", served: true),
            shape(
                "title == %@", ["Cafe\u{301} society"], .compare("title", .eq, s("Cafe\u{301} society")),
                name: "title == %@ (decomposed é)", served: true),
            shape("title == \"hello World\"", [], .compare("title", .eq, s("hello World")), served: true),
            shape("title == ''", [], .compare("title", .eq, s("")), served: true),
            shape("title != 'Apple pie'", [], .compare("title", .ne, s("Apple pie")), served: false),
            shape("title < 'a'", [], .compare("title", .lt, s("a")), served: true),
            shape("title <= 'apple pie'", [], .compare("title", .le, s("apple pie")), served: true),
            shape("title > 'Zebra crossing'", [], .compare("title", .gt, s("Zebra crossing")), served: true),
            shape("title >= %@", ["\u{E4}"], .compare("title", .ge, s("\u{E4}")), name: "title >= 'ä'", served: true),
            shape("title BETWEEN {'A', 'b'}", [], .between("title", s("A"), s("b")), served: true),
            shape(
                "title IN {'apple pie', '\u{E4}pple', 'b', 'nothing'}", [],
                .oneOf("title", [s("apple pie"), s("\u{E4}pple"), s("b"), s("nothing")]), served: true),
            shape("title BEGINSWITH 'Caf'", [], .beginsWith("title", "Caf"), served: true),
            shape("title BEGINSWITH %@", ["Caf\u{E9}"], .beginsWith("title", "Caf\u{E9}"), name: "title BEGINSWITH 'Café'", served: true),
            shape("title BEGINSWITH 'apple'", [], .beginsWith("title", "apple"), served: true),
            shape("NOT (title BEGINSWITH 'Hello')", [], .not(.beginsWith("title", "Hello")), served: false),
            shape("authorName == 'Bob'", [], .compare("authorName", .eq, s("Bob")), served: true),
            shape("authorName != 'bob'", [], .compare("authorName", .ne, s("bob")), served: false),
            shape("body == %@", [body], .compare("body", .eq, s(body)), name: "body == %@ (a stored body)", served: true),
            shape("body BEGINSWITH 'alpha'", [], .beginsWith("body", "alpha"), served: true),

            // TIMESTAMP.
            shape("createdAt < %@", [ctx.date(30)], .compare("createdAt", .lt, .date(ctx.date(30))), served: true),
            shape("createdAt >= %@", [ctx.date(70)], .compare("createdAt", .ge, .date(ctx.date(70))), served: true),
            shape(
                "createdAt BETWEEN %@", [[ctx.date(20), ctx.date(40)]], .between("createdAt", .date(ctx.date(20)), .date(ctx.date(40))),
                served: true),
            shape(
                "createdAt == %@", [storedCreatedAt], .compare("createdAt", .eq, .date(storedCreatedAt)),
                name: "createdAt == %@ (a stored date)", served: true),
            shape("publishedAt > %@", [ctx.date(80)], .compare("publishedAt", .gt, .date(ctx.date(80))), served: true),

            // BYTES: equality (ordering conditions on bytes are refused by the predicate language;
            // the byte order is checked by the sort on `code` below).
            shape("code == %@", [Data([0, 1])], .compare("code", .eq, .bytes(Data([0, 1]))), served: true),
            shape("code != %@", [Data([0xFF])], .compare("code", .ne, .bytes(Data([0xFF]))), served: false),
            shape(
                "code IN %@", [[Data([0]), Data([0x7F, 0x80])]], .oneOf("code", [.bytes(Data([0])), .bytes(Data([0x7F, 0x80]))]),
                served: true),

            // LIST<STRING>, LIST<INT64>: membership.
            shape("tags CONTAINS 'red'", [], .listHas("tags", s("red")), served: true),
            shape("ANY tags = 'Red'", [], .listHas("tags", s("Red")), served: true),
            shape("SOME tags == 'reef'", [], .listHas("tags", s("reef")), served: true),
            shape("'blue' IN tags", [], .listHas("tags", s("blue")), served: true),
            shape(
                "%K CONTAINS %@", ["tags", "r\u{E9}d"], .listHas("tags", s("r\u{E9}d")), name: "%K CONTAINS %@ (tags, 'réd')", served: true),
            shape("ANY tags IN {'green', 'rouge'}", [], .listHasAny("tags", [s("green"), s("rouge")]), served: true),
            shape("ANY tags IN %@", [["u", "nothing"]], .listHasAny("tags", [s("u"), s("nothing")]), served: true),
            shape("ANY tags BEGINSWITH 're'", [], .listAnyBeginsWith("tags", "re"), served: true),
            shape(
                "ANY tags BEGINSWITH %@", ["\u{DC}"], .listAnyBeginsWith("tags", "\u{DC}"), name: "ANY tags BEGINSWITH 'Ü'", served: true),
            shape("NOT (tags CONTAINS 'red')", [], .not(.listHas("tags", s("red"))), served: false),
            shape("NOT (ANY tags IN {'green', 'blue'})", [], .not(.listHasAny("tags", [s("green"), s("blue")])), served: false),
            shape("NOT (ANY tags BEGINSWITH 'r')", [], .not(.listAnyBeginsWith("tags", "r")), served: false),
            shape("nums CONTAINS 3", [], .listHas("nums", i(3)), served: true),
            shape("ANY nums IN {0, 9}", [], .listHasAny("nums", [i(0), i(9)]), served: true),
            shape("2 IN nums", [], .listHas("nums", i(2)), served: true),
            shape("ANY nums = 2.0", [], .listHas("nums", i(2)), served: true),

            // Token search.
            shape("self CONTAINS 'swift'", [], .tokens("swift", all: false), served: true),
            shape("self CONTAINS 'zebra cafe'", [], .tokens("zebra cafe", all: false), served: true),
            shape("self CONTAINS 'the of'", [], .tokens("the of", all: false), name: "self CONTAINS 'the of' (stop words only)"),
            shape("self CONTAINS 'NAIVE'", [], .tokens("NAIVE", all: false), served: true),
            shape("self CONTAINS %@", ["x86"], .tokens("x86", all: false), served: true),
            shape("self CONTAINS 'caf'", [], .tokens("caf", all: false), name: "self CONTAINS 'caf' (tokens match whole)", served: true),
            shape("self CONTAINS 'red'", [], .tokens("red", all: false), served: true),
            shape("self CONTAINS 'bob'", [], .tokens("bob", all: false), served: true),
            shape("self CONTAINS 'Smith'", [], .tokens("Smith", all: false), served: true),
            shape("self CONTAINS 'well-known'", [], .tokens("well-known", all: false), served: true),
            shape("allTokens TOKENMATCHES[cdl] 'alpha beta'", [], .tokens("alpha beta", all: true), served: true),
            shape(
                "allTokens TOKENMATCHES[cdl] %@", [bodyTokens], .tokens(bodyTokens, all: true),
                name: "allTokens TOKENMATCHES[cdl] (two tokens of a stored body)", served: true),
            shape("allTokens TOKENMATCHES[cdl] 'emile'", [], .tokens("emile", all: true), served: true),
            shape("allTokens TOKENMATCHES[cdl] %@", ["rock-n-roll"], .tokens("rock-n-roll", all: true), served: true),
            shape("allTokens TOKENMATCHES[cdl] 'The Apple'", [], .tokens("The Apple", all: true), served: true),
            shape("allTokens TOKENMATCHES[cdl] 'apple pie bob'", [], .tokens("apple pie bob", all: true), served: true),
            shape(
                "self CONTAINS 'alpha' AND self CONTAINS 'gamma'", [],
                .and([.tokens("alpha", all: false), .tokens("gamma", all: false)]), served: true),

            // Distance, in kilometres.
            shape(
                "\(distance) < 25", [paris], .within("location", paris, km: 25, inclusive: false), name: "distance from Paris < 25 km",
                served: true),
            shape(
                "\(distance) <= %@", [paris, 60.5], .within("location", paris, km: 60.5, inclusive: true),
                name: "distance from Paris <= 60.5 km", served: true),
            shape(
                "\(distance) < 20", [antimeridian], .within("location", antimeridian, km: 20, inclusive: false),
                name: "distance across the antimeridian < 20 km", served: true),
            shape(
                "\(distance) < 30", [northPole], .within("location", northPole, km: 30, inclusive: false),
                name: "distance from the north pole < 30 km", served: true),
            shape(
                "\(distance) <= 0", [paris], .within("location", paris, km: 0, inclusive: true),
                name: "distance from Paris <= 0 km (the exact point)", served: true),
            shape(
                "\(distance) < 5000", [sydney], .within("location", sydney, km: 5000, inclusive: false),
                name: "distance from Sydney < 5000 km", served: true),
            shape(
                "\(distance) < 20100", [Location(latitude: 10, longitude: -40)],
                .within("location", Location(latitude: 10, longitude: -40), km: 20100, inclusive: false),
                name: "distance < 20100 km (the whole Earth)", served: true),

            // REFERENCE: by record name only.
            shape(
                "author == %@", [reference(a[0])], .compare("author", .eq, ref(a[0].recordName)), name: "author == %@ (reference)",
                served: true),
            shape(
                "author == %@", [Record.ID(recordName: a[0].recordName)], .compare("author", .eq, ref(a[0].recordName)),
                name: "author == %@ (record ID of another zone: the name counts)", served: true),
            shape(
                "author == %@", [ctx.authorRecords[3]], .compare("author", .eq, ref(a[3].recordName)), name: "author == %@ (a Record)",
                served: true),
            shape("author != %@", [reference(a[1])], .compare("author", .ne, ref(a[1].recordName)), name: "author != %@", served: false),
            shape(
                "author IN %@", [[a[0], a[2]]], .oneOf("author", [ref(a[0].recordName), ref(a[2].recordName)]),
                name: "author IN %@ (record IDs)", served: true),
            shape(
                "NOT (author IN %@)", [[a[0], a[1]]], .not(.oneOf("author", [ref(a[0].recordName), ref(a[1].recordName)])), served: false),

            // recordID.
            shape(
                "recordID IN %@", [sample], .oneOf("recordID", sampleRefs), name: "recordID IN %@ (record IDs)", served: true, scans: false),
            shape(
                "recordID IN %@", [sample.map(reference)], .oneOf("recordID", sampleRefs), name: "recordID IN %@ (references)",
                served: true, scans: false),
            shape("NOT (recordID IN %@)", [sample], .not(.oneOf("recordID", sampleRefs)), served: false),
            shape("recordID == %@", [post3], .compare("recordID", .eq, ref(post3.recordName)), served: true, scans: false),
            shape("recordID != %@", [post3], .compare("recordID", .ne, ref(post3.recordName)), served: false),

            // System fields.
            shape(
                "creationDate > %@", [midCreation], .compare("creationDate", .gt, .date(midCreation)), name: "creationDate > (median)",
                served: true),
            shape(
                "creationDate >= %@", [midCreation], .compare("creationDate", .ge, .date(midCreation)), name: "creationDate >= (median)",
                served: true),
            shape("creationDate <= now()", [], .compareNow("creationDate", .le), served: true),
            shape(
                "modificationDate < %@", [midModification], .compare("modificationDate", .lt, .date(midModification)),
                name: "modificationDate < (a third)", served: true),
            shape(
                "modificationDate BETWEEN %@", [[midCreation, lateModification]],
                .between("modificationDate", .date(midCreation), .date(lateModification)), name: "modificationDate BETWEEN %@", served: true
            ),
            shape("creatorUserRecordID == %@", [ctx.me], .compare("creatorUserRecordID", .eq, ref(ctx.me.recordName)), served: true),
            shape("creatorUserRecordID != %@", [ctx.me], .compare("creatorUserRecordID", .ne, ref(ctx.me.recordName)), served: false),
            shape(
                "lastModifiedUserRecordID == %@", [ctx.me], .compare("lastModifiedUserRecordID", .eq, ref(ctx.me.recordName)), served: true),
            shape("parent == %@", [reference(a[0])], .compare("parent", .eq, ref(a[0].recordName)), served: true),
            shape(
                "%K == %@", [Record.SystemFieldKey.parent, a[1]], .compare("parent", .eq, ref(a[1].recordName)), name: "%K == %@ (parent)",
                served: true),
            shape("TRUEPREDICATE", [], .value(true), served: false),
            shape("FALSEPREDICATE", [], .value(false), scans: false),

            // AND.
            shape(
                "isCurrent == 1 AND score >= 3 AND tags CONTAINS 'red'", [],
                .and([.compare("isCurrent", .eq, i(1)), .compare("score", .ge, i(3)), .listHas("tags", s("red"))]), served: true),
            shape(
                "score BETWEEN {0, 6} && title BEGINSWITH 'a' && NOT (ratio == 0)", [],
                .and([.between("score", i(0), i(6)), .beginsWith("title", "a"), .not(.compare("ratio", .eq, i(0)))]), served: true),
            shape(
                "self CONTAINS 'alpha' AND score > 2", [], .and([.tokens("alpha", all: false), .compare("score", .gt, i(2))]), served: true),
            shape(
                "\(distance) < 60 AND isCurrent == 1", [paris],
                .and([.within("location", paris, km: 60, inclusive: false), .compare("isCurrent", .eq, i(1))]),
                name: "distance from Paris < 60 km AND isCurrent == 1", served: true),
            shape(
                "author == %@ AND createdAt < %@", [reference(a[3]), ctx.date(60)],
                .and([.compare("author", .eq, ref(a[3].recordName)), .compare("createdAt", .lt, .date(ctx.date(60)))]), served: true),
            shape("TRUEPREDICATE AND score == 3", [], .and([.value(true), .compare("score", .eq, i(3))]), served: true),
            shape("FALSEPREDICATE AND score == 3", [], .and([.value(false), .compare("score", .eq, i(3))]), scans: false),
            shape("score > 3 AND score < 8", [], .and([.compare("score", .gt, i(3)), .compare("score", .lt, i(8))]), served: true),
            shape(
                "recordID IN %@ AND score > 3", [sample], .and([.oneOf("recordID", sampleRefs), .compare("score", .gt, i(3))]),
                served: true, scans: false),
            shape(
                "NOT (score == 3) AND NOT (tags CONTAINS 'red') AND title != 'b'", [],
                .and([.not(.compare("score", .eq, i(3))), .not(.listHas("tags", s("red"))), .compare("title", .ne, s("b"))]),
                served: false),

            // Sorted.
            shape("TRUEPREDICATE", [], .value(true), name: "TRUEPREDICATE by score", sorts: [asc("score")]),
            shape("TRUEPREDICATE", [], .value(true), name: "TRUEPREDICATE by -score, title", sorts: [desc("score"), asc("title")]),
            shape("TRUEPREDICATE", [], .value(true), name: "TRUEPREDICATE by title (byte order)", sorts: [asc("title")]),
            shape(
                "isCurrent == 1", [], .compare("isCurrent", .eq, i(1)), name: "isCurrent == 1 by -createdAt", sorts: [desc("createdAt")],
                served: true),
            shape(
                "score BETWEEN {2, 8}", [], .between("score", i(2), i(8)), name: "score BETWEEN {2, 8} by score", sorts: [asc("score")],
                served: true),
            shape(
                "score BETWEEN {2, 8}", [], .between("score", i(2), i(8)), name: "score BETWEEN {2, 8} by -score", sorts: [desc("score")],
                served: true),
            shape(
                "score > 0", [], .compare("score", .gt, i(0)), name: "score > 0 by -score, first batch of 5", sorts: [desc("score")],
                served: true, firstBatch: 5),
            shape(
                "tags CONTAINS 'red'", [], .listHas("tags", s("red")), name: "tags CONTAINS 'red' by title", sorts: [asc("title")],
                served: true),
            shape("TRUEPREDICATE", [], .value(true), name: "TRUEPREDICATE by -ratio, createdAt", sorts: [desc("ratio"), asc("createdAt")]),
            shape(
                "TRUEPREDICATE", [], .value(true), name: "TRUEPREDICATE by distance from Paris",
                sorts: [Query.SortDescriptor(key: "location", relativeLocation: paris)]),
            shape(
                "\(distance) < 60", [paris], .within("location", paris, km: 60, inclusive: false),
                name: "distance from Paris < 60 km by distance", sorts: [LocationSortDescriptor(key: "location", relativeLocation: paris)],
                served: true),
            shape(
                "TRUEPREDICATE", [], .value(true), name: "TRUEPREDICATE by -isCurrent, distance from the antimeridian",
                sorts: [desc("isCurrent"), Query.SortDescriptor(key: "location", relativeLocation: antimeridian)]),
            shape("TRUEPREDICATE", [], .value(true), name: "TRUEPREDICATE by creationDate", sorts: [asc("creationDate")]),
            shape(
                "score > 0", [], .compare("score", .gt, i(0)), name: "score > 0 by -modificationDate", sorts: [desc("modificationDate")],
                served: true),
            shape(
                "title BEGINSWITH 'Ca'", [], .beginsWith("title", "Ca"), name: "title BEGINSWITH 'Ca' by -title", sorts: [desc("title")],
                served: true),
            shape("TRUEPREDICATE", [], .value(true), name: "TRUEPREDICATE by code (bytes)", sorts: [asc("code")]),
            shape(
                "self CONTAINS 'swift apple'", [], .tokens("swift apple", all: false), name: "self CONTAINS 'swift apple' by -publishedAt",
                sorts: [desc("publishedAt")], served: true),
            shape(
                "author == %@", [reference(a[0])], .compare("author", .eq, ref(a[0].recordName)), name: "author == %@ by score, -createdAt",
                sorts: [asc("score"), desc("createdAt")], served: true),
            shape(
                "NOT (recordID IN %@)", [sample], .not(.oneOf("recordID", sampleRefs)), name: "NOT (recordID IN %@) by authorName",
                sorts: [asc("authorName")]),
        ]
    }
}

/// Reference §5.3, every shape, checked against brute force on random data in three
/// configurations: development without indexes (scans), development with every index, and
/// production with every index. All three must give the brute-force result.
@Suite struct QueryConformanceTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore

    init() throws { store = try TestStore() }

    struct Case: Sendable, CustomTestStringConvertible {
        let seed: UInt64
        let count: Int
        let limit: Int
        var testDescription: String { "seed \(seed), \(count) posts, batches of \(limit)" }
    }

    enum Configuration: String {
        case scan = "development, no indexes"
        case indexed = "development, indexed"
        case production = "production, indexed"
    }

    static let cases = [
        Case(seed: 0x000F_0C4B_17, count: 220, limit: 7),
        Case(seed: 42, count: 80, limit: 3),
        Case(seed: 20_240_611, count: 140, limit: QueryOperation.maximumResults),
    ]

    @Test(arguments: cases) func everyShapeMatchesBruteForceInEveryConfiguration(_ c: Case) async throws {
        let container = store.container
        let zone = QueryFixture.zoneID
        let (refs, shapes) = try await Self.fill(container, c, zone: zone)

        // Development gave the fields default indexes as they were saved: without them
        // every query scans.
        try await store.clearIndexes(ofRecordTypes: QueryFixture.postType, QueryFixture.authorType)
        let db = container.privateCloudDatabase
        for shape in shapes { await Self.check(shape, in: db, .scan, refs: refs, zone: zone, limit: c.limit) }

        try await QueryFixture.declareIndexes(store.admin)
        let adviceBefore = Set(store.admin.indexAdvice())
        for shape in shapes { await Self.check(shape, in: db, .indexed, refs: refs, zone: zone, limit: c.limit) }
        #expect(Set(store.admin.indexAdvice()) == adviceBefore, "queries with every index declared should not count missing indexes")

        // Production has data of its own: the schema is deployed, the same records saved there.
        try await store.admin.deploySchema()
        let production = try store.productionContainer(user: container.userIdentity)
        defer { production.close() }
        let (productionRefs, productionShapes) = try await Self.fill(production, c, zone: zone)
        for shape in productionShapes {
            await Self.check(shape, in: production.privateCloudDatabase, .production, refs: productionRefs, zone: zone, limit: c.limit)
        }
        #expect(try store.admin.checkIntegrity().isSound)
    }

    /// Saves the case's authors and posts into `container`'s private database and returns
    /// them as fetched, with the shapes to check.
    static func fill(_ container: Container, _ c: Case, zone: RecordZone.ID) async throws -> ([RefRecord], [QueryShape]) {
        let db = container.privateCloudDatabase
        try await db.save(RecordZone(zoneID: zone))
        let authors = QueryFixture.makeAuthors(in: zone)
        for author in authors { try await db.save(author) }
        let posts = QueryFixture.makePosts(count: c.count, seed: c.seed, in: zone, authors: authors.map(\.recordID))
        for post in posts { try await db.save(post) }
        let refs = try await QueryRunner.fetch(db, names: posts.map(\.recordID.recordName), in: zone)
        try #require(refs.count == posts.count)
        let ctx = ShapeContext(
            zone: zone, authors: authors.map(\.recordID), authorRecords: authors, posts: refs, me: try await container.userRecordID())
        return (refs, QueryTable.shapes(ctx))
    }

    /// Runs one shape in one configuration and compares it with brute force: the set of
    /// record IDs, no duplicates, the records' content, and (when sorted) the order.
    static func check(
        _ shape: QueryShape, in db: Database, _ configuration: Configuration, refs: [RefRecord], zone: RecordZone.ID, limit: Int
    ) async {
        let label = "[\(configuration.rawValue)] \(shape.name)"
        let query: Query
        do {
            query = try shape.query()
        } catch {
            Issue.record("\(label): the predicate \(shape.format) does not parse: \(error)")
            return
        }

        do {
            let plan = try db.explain(query, inZoneWith: zone)
            switch configuration {
            case .scan:
                if shape.scansWithoutIndexes {
                    #expect(plan.scansRecordType, "\(label): without indexes the plan should scan\n\(plan)")
                    #expect(!plan.missingIndexes.isEmpty, "\(label): without indexes the plan should list missing indexes\n\(plan)")
                }
            case .indexed, .production:
                #expect(plan.missingIndexes.isEmpty, "\(label): every index is declared, yet\n\(plan)")
                if let served = shape.served {
                    #expect(plan.scansRecordType == !served, "\(label): scansRecordType should be \(!served)\n\(plan)")
                }
            }
        } catch {
            Issue.record("\(label): explain failed: \(error)")
        }

        let expected = refs.filter { RefEval.matches(shape.cond, $0) }
        let sorts = shape.sorts ?? []
        do {
            if let first = shape.firstBatch {
                let (page, cursor) = try await db.records(matching: query, inZoneWith: zone, resultsLimit: first)
                let got = try page.map { try $0.1.get().recordID.recordName }
                let want = RefEval.sorted(expected, by: sorts).prefix(first).map(\.name)
                #expect(got == Array(want), "\(label): first batch of \(first)")
                #expect(
                    (cursor != nil) == (expected.count > first),
                    "\(label): cursor \(cursor.map { "\($0)" } ?? "nil") with \(expected.count) matches")
                return
            }
            let records = try await QueryRunner.all(db, query, in: zone, limit: limit, context: label)
            compare(records, expected: expected, refs: refs, sorts: sorts, zone: zone, label: label)
        } catch {
            Issue.record("\(label): the query failed: \(error)")
        }
    }

    static func compare(
        _ records: [Record], expected: [RefRecord], refs: [RefRecord], sorts: [Query.SortDescriptor], zone: RecordZone.ID, label: String
    ) {
        let names = records.map(\.recordID.recordName)
        let duplicates = Dictionary(grouping: names, by: { $0 }).filter { $0.value.count > 1 }.keys
        #expect(duplicates.isEmpty, "\(label): duplicates \(QueryRunner.sample(duplicates))")
        let got = Set(names), want = Set(expected.map(\.name))
        #expect(
            got == want,
            "\(label): expected \(want.count) records, got \(got.count); missing [\(QueryRunner.sample(want.subtracting(got)))], extra [\(QueryRunner.sample(got.subtracting(want)))]"
        )
        #expect(
            records.allSatisfy { $0.recordType == QueryFixture.postType && $0.recordID.zoneID.zoneName == zone.zoneName },
            "\(label): records of another type or zone")

        // The content is the stored record's.
        let byName = Dictionary(uniqueKeysWithValues: refs.map { ($0.name, $0) })
        var contentMismatch: [String] = []
        for record in records {
            guard let r = byName[record.recordID.recordName] else { continue }
            let keys = record.allKeys()
            if keys != r.fields.keys.sorted() || keys.contains(where: { record.fieldValue(forKey: $0) != r.fields[$0] }) {
                contentMismatch.append(record.recordID.recordName)
            }
        }
        #expect(
            contentMismatch.isEmpty, "\(label): records whose fields differ from the stored ones: \(QueryRunner.sample(contentMismatch))")

        guard !sorts.isEmpty else { return }
        let gotRefs = names.compactMap { byName[$0] }
        if let bad = zip(gotRefs, gotRefs.dropFirst()).first(where: { RefEval.compareOrder($0, $1, sorts) > 0 }) {
            Issue.record(
                "\(label): out of order: \(bad.0.name) (\(RefEval.sortValues(bad.0, sorts))) before \(bad.1.name) (\(RefEval.sortValues(bad.1, sorts)))"
            )
        }
        guard got == want, duplicates.isEmpty else { return }
        let wantOrder = RefEval.sorted(expected, by: sorts)
        let wantNames = wantOrder.map(\.name)
        if let i = names.indices.first(where: { names[$0] != wantNames[$0] }) {
            let g = gotRefs[i], w = wantOrder[i]
            Issue.record(
                "\(label): order differs from the documented one (sort values, then row in the direction of the last descriptor) at position \(i): got \(g.name) (\(RefEval.sortValues(g, sorts)), row \(g.row)), expected \(w.name) (\(RefEval.sortValues(w, sorts)), row \(w.row))"
            )
        }
    }
}
