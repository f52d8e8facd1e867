import FogKit
import FogKitTesting
import Foundation
import Testing

// A brute-force evaluator of FogKit queries, written from Docs/Queries.md alone, and the random
// "Post" data the query suites share. Nothing here calls FogKit's own predicate evaluator: the
// records come from fetches by ID, and every condition is evaluated below.

// MARK: - Seeded randomness

// MARK: - Records as the evaluator sees them

/// A stored record: its user fields, its system fields, and its row (the order in which it
/// was first saved, the documented final tie-break of every order).
struct RefRecord: Sendable, CustomStringConvertible {
    let name: String
    let row: Int
    let fields: [String: FieldValue]
    let creationDate: Date?
    let modificationDate: Date?
    let creator: String?
    let lastModifier: String?
    let parent: String?

    init(_ record: Record, row: Int) {
        name = record.recordID.recordName
        self.row = row
        var fields: [String: FieldValue] = [:]
        for key in record.allKeys() { fields[key] = record.fieldValue(forKey: key) }
        self.fields = fields
        creationDate = record.creationDate
        modificationDate = record.modificationDate
        creator = record.creatorUserRecordID?.recordName
        lastModifier = record.lastModifiedUserRecordID?.recordName
        parent = record.parent?.recordID.recordName
    }

    /// The value of a user field or a system key; `nil` when the record has none.
    func value(_ key: String) -> FieldValue? {
        switch key {
        case "recordID": RefEval.ref(name)
        case "creationDate": creationDate.map(FieldValue.date)
        case "modificationDate": modificationDate.map(FieldValue.date)
        case "creatorUserRecordID": creator.map(RefEval.ref)
        case "lastModifiedUserRecordID": lastModifier.map(RefEval.ref)
        case "parent": parent.map(RefEval.ref)
        case "share": nil
        default: fields[key]
        }
    }

    var description: String { name }
}

// MARK: - Conditions

enum RefOp: String, Sendable {
    case eq = "=="
    case ne = "!="
    case lt = "<"
    case le = "<="
    case gt = ">"
    case ge = ">="
}

/// A predicate, as the brute-force evaluator reads it.
indirect enum RefCond: Sendable {
    case value(Bool)
    /// A comparison of a field (or system key) with a constant; `nowOffset` marks `now()`.
    case compare(String, RefOp, FieldValue)
    /// A comparison with `now()`, evaluated at the time the evaluator runs.
    case compareNow(String, RefOp)
    case between(String, FieldValue, FieldValue)
    case oneOf(String, [FieldValue])
    case beginsWith(String, String)
    case listHas(String, FieldValue)
    case listHasAny(String, [FieldValue])
    case listAnyBeginsWith(String, String)
    /// `self CONTAINS text` (any token) or `allTokens TOKENMATCHES[cdl] text` (every token).
    case tokens(String, all: Bool)
    case within(String, Location, km: Double, inclusive: Bool)
    case not(RefCond)
    case and([RefCond])
}

/// The brute-force evaluator: Docs/Queries.md, "What matches" and "Order".
enum RefEval {
    static let stopWords: Set<String> = [
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of",
        "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with",
    ]

    static func ref(_ name: String) -> FieldValue {
        .reference(Record.Reference(recordID: Record.ID(recordName: name), action: .none))
    }

    /// Whether `r` matches `cond`. `searchFields` are the SEARCHABLE fields token search reads;
    /// `nil` for every STRING and LIST<STRING> field.
    static func matches(_ cond: RefCond, _ r: RefRecord, now: Date = Date(), searchFields: Set<String>? = nil) -> Bool {
        switch cond {
        case .value(let b):
            return b
        case .compare(let key, let op, let constant):
            guard let v = r.value(key), let c = compare(v, constant) else { return op == .ne }
            return apply(op, c)
        case .compareNow(let key, let op):
            guard let v = r.value(key), let c = compare(v, .date(now)) else { return op == .ne }
            return apply(op, c)
        case .between(let key, let lo, let hi):
            guard let v = r.value(key), let a = compare(v, lo), let b = compare(v, hi) else { return false }
            return a >= 0 && b <= 0
        case .oneOf(let key, let set):
            guard let v = r.value(key) else { return false }
            return set.contains { compare(v, $0) == 0 }
        case .beginsWith(let key, let prefix):
            guard case .string(let s) = r.value(key) else { return false }
            return Array(s.utf8).starts(with: Array(prefix.utf8))
        case .listHas(let key, let x):
            guard let list = r.value(key).flatMap(elements) else { return false }
            return list.contains { compare($0, x) == 0 }
        case .listHasAny(let key, let xs):
            guard let list = r.value(key).flatMap(elements) else { return false }
            return list.contains { e in xs.contains { compare(e, $0) == 0 } }
        case .listAnyBeginsWith(let key, let prefix):
            guard case .stringList(let list) = r.value(key) else { return false }
            return list.contains { Array($0.utf8).starts(with: Array(prefix.utf8)) }
        case .tokens(let text, let all):
            let wanted = Set(tokens(text))
            if wanted.isEmpty { return false }
            let have = recordTokens(r, fields: searchFields)
            return all ? wanted.isSubset(of: have) : !wanted.isDisjoint(with: have)
        case .within(let key, let center, let radius, let inclusive):
            guard case .location(let l) = r.value(key) else { return false }
            let d = km(l, center)
            return inclusive ? d <= radius : d < radius
        case .not(let inner):
            return !matches(inner, r, now: now, searchFields: searchFields)
        case .and(let parts):
            return parts.allSatisfy { matches($0, r, now: now, searchFields: searchFields) }
        }
    }

    static func apply(_ op: RefOp, _ c: Int) -> Bool {
        switch op {
        case .eq: c == 0
        case .ne: c != 0
        case .lt: c < 0
        case .le: c <= 0
        case .gt: c > 0
        case .ge: c >= 0
        }
    }

    /// Compares two values of kinds that compare: strings and bytes by their bytes, numbers by
    /// value (INT64 against DOUBLE numerically, -0.0 == 0.0), dates, references by record name
    /// (equal or not). `nil` for kinds that never compare.
    static func compare(_ a: FieldValue, _ b: FieldValue) -> Int? {
        switch (a, b) {
        case (.string(let x), .string(let y)): return lexicographic(Array(x.utf8), Array(y.utf8))
        case (.bytes(let x), .bytes(let y)): return lexicographic(Array(x), Array(y))
        case (.int64(let x), .int64(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.int64(let x), .double(let y)): return numeric(Double(x), y)
        case (.double(let x), .int64(let y)): return numeric(x, Double(y))
        case (.double(let x), .double(let y)): return numeric(x, y)
        case (.date(let x), .date(let y)):
            let p = x.timeIntervalSinceReferenceDate, q = y.timeIntervalSinceReferenceDate
            return p < q ? -1 : (p == q ? 0 : 1)
        case (.reference(let x), .reference(let y)):
            return lexicographic(Array(x.recordID.recordName.utf8), Array(y.recordID.recordName.utf8))
        default: return nil
        }
    }

    static func numeric(_ x: Double, _ y: Double) -> Int { x < y ? -1 : (x == y ? 0 : 1) }

    static func lexicographic(_ a: [UInt8], _ b: [UInt8]) -> Int {
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// The elements of a list value, or `nil` for a scalar.
    static func elements(_ v: FieldValue) -> [FieldValue]? {
        switch v {
        case .stringList(let l): l.map(FieldValue.string)
        case .int64List(let l): l.map(FieldValue.int64)
        case .doubleList(let l): l.map(FieldValue.double)
        case .bytesList(let l): l.map(FieldValue.bytes)
        case .dateList(let l): l.map(FieldValue.date)
        case .locationList(let l): l.map(FieldValue.location)
        case .referenceList(let l): l.map(FieldValue.reference)
        default: nil
        }
    }

    /// Folded (case- and diacritic-insensitive) tokens, split at every character that is not a
    /// letter or a digit, without stop words.
    static func tokens(_ text: String) -> [String] {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
        return folded.split { !($0.isLetter || $0.isNumber) }.map(String.init).filter { !stopWords.contains($0) }
    }

    /// The tokens of every STRING and LIST<STRING> field of a record (the query suites declare
    /// every string field of Post SEARCHABLE in their indexed configurations, so this is the
    /// searched set in every configuration).
    static func recordTokens(_ r: RefRecord, fields: Set<String>? = nil) -> Set<String> {
        var result: Set<String> = []
        for (key, value) in r.fields where fields?.contains(key) ?? true {
            switch value {
            case .string(let s): result.formUnion(tokens(s))
            case .stringList(let l): for s in l { result.formUnion(tokens(s)) }
            default: break
            }
        }
        return result
    }

    /// Great-circle distance in kilometres on the mean Earth radius, ignoring altitude.
    static func km(_ a: Location, _ b: Location) -> Double {
        let radius = 6371.0088
        let p1 = a.latitude * .pi / 180, p2 = b.latitude * .pi / 180
        let dp = p2 - p1, dl = (b.longitude - a.longitude) * .pi / 180
        let h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * radius * atan2(h.squareRoot(), (1 - h).squareRoot())
    }

    // MARK: Order

    /// Records in the documented order: by each descriptor (missing values first ascending,
    /// last descending; by distance nearest first, missing last), then by row in the direction
    /// of the last descriptor.
    static func sorted(_ records: [RefRecord], by sorts: [Query.SortDescriptor]) -> [RefRecord] {
        records.sorted { precedes($0, $1, sorts) }
    }

    static func precedes(_ a: RefRecord, _ b: RefRecord, _ sorts: [Query.SortDescriptor]) -> Bool {
        let c = compareOrder(a, b, sorts)
        if c != 0 { return c < 0 }
        return (sorts.last?.ascending ?? true) ? a.row < b.row : a.row > b.row
    }

    /// Compares the sort values only (0 when they tie).
    static func compareOrder(_ a: RefRecord, _ b: RefRecord, _ sorts: [Query.SortDescriptor]) -> Int {
        for sort in sorts {
            let c: Int
            if let center = sort.relativeLocation {
                let da = distance(a, sort.key, center), db = distance(b, sort.key, center)
                switch (da, db) {
                case (nil, nil): c = 0
                case (nil, _): c = 1
                case (_, nil): c = -1
                case (let x?, let y?): c = numeric(x, y)
                }
            } else {
                let va = a.value(sort.key), vb = b.value(sort.key)
                var x: Int
                switch (va, vb) {
                case (nil, nil): x = 0
                case (nil, _): x = -1
                case (_, nil): x = 1
                case (let p?, let q?): x = compare(p, q) ?? 0
                }
                if !sort.ascending { x = -x }
                c = x
            }
            if c != 0 { return c }
        }
        return 0
    }

    static func distance(_ r: RefRecord, _ key: String, _ center: Location) -> Double? {
        guard case .location(let l) = r.value(key) else { return nil }
        return km(l, center)
    }

    /// The sort values of a record, for messages.
    static func sortValues(_ r: RefRecord, _ sorts: [Query.SortDescriptor]) -> String {
        sorts.map { sort in
            if let center = sort.relativeLocation {
                return distance(r, sort.key, center).map { String(format: "%.3fkm", $0) } ?? "nil"
            }
            return r.value(sort.key).map(render) ?? "nil"
        }.joined(separator: "|")
    }

    static func render(_ v: FieldValue) -> String {
        switch v {
        case .string(let s): "\"\(s.unicodeScalars.map { $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined())\""
        case .int64(let n): "\(n)"
        case .double(let d): "\(d)"
        case .date(let d): "@\(d.timeIntervalSinceReferenceDate)"
        case .bytes(let b): "0x" + b.map { String(format: "%02x", $0) }.joined()
        case .reference(let r): "ref:\(r.recordID.recordName)"
        default: "\(v)"
        }
    }
}

// MARK: - The Post data set

/// Random "Post" records in a custom zone, with "Author" records they reference, and the
/// indexes that serve every query shape of the conformance table.
enum QueryFixture {
    static let postType = "Post"
    static let authorType = "Author"
    static let zoneID = RecordZone.ID(zoneName: "Blog")
    static let baseDate = 700_000_000.0
    static let hour = 3600.0
    static let paris = Location(latitude: 48.8566, longitude: 2.3522)

    /// Titles: equal strings repeat; precomposed and decomposed "é" differ by bytes; case differs.
    static let titles = [
        "Hello world", "hello World", "Caf\u{E9} society", "Cafe\u{301} society", "na\u{EF}ve art", "Apple pie",
        "apple pie", "\u{E4}pple", "Zebra crossing", "x86-64 tuning", "The end of it", "well-known facts",
        "\u{DC}ber alles", "v2 release", "b", "\u{C9}mile's notes", "",
    ]
    static let words = [
        "alpha", "beta", "Gamma", "delta", "caf\u{E9}", "CAFE", "na\u{EF}ve", "swift", "Swift", "x86-64", "rock'n'roll",
        "\u{C9}mile", "emile", "zebra", "apple", "the", "of", "and", "is", "2024", "v2", "bob", "Smith", "smith's",
    ]
    static let separators = [" ", ", ", " - ", "; ", "\n", "/"]
    static let tagPool = ["red", "green", "blue", "Red", "rouge", "re", "reef", "\u{DC}nicode", "u", "r\u{E9}d"]
    static let authorNames = ["ann", "bob", "Bob", "carl", "dana", "\u{C9}mile"]
    static let codes: [Data] = [Data([0]), Data([0, 1]), Data([1]), Data([0xFF]), Data([0x7F, 0x80]), Data([0x7F])]
    /// Fixed points: the antimeridian, both poles, far cities, and Paris itself.
    static let specialLocations = [
        Location(latitude: 0, longitude: 179.95), Location(latitude: 0, longitude: -179.95),
        Location(latitude: 0.1, longitude: 179.99), Location(latitude: 89.95, longitude: 0),
        Location(latitude: 89.95, longitude: 120), Location(latitude: -89.9, longitude: 45),
        Location(latitude: -33.8688, longitude: 151.2093), Location(latitude: 35.6762, longitude: 139.6503), paris,
    ]

    /// The indexes of the "indexed" configurations: every field and system field the table's
    /// shapes use, with every option they need; every string field SEARCHABLE.
    static let indexes: [Record.FieldKey: IndexOptions] = [
        "title": [.queryable, .sortable, .searchable],
        "body": [.queryable, .sortable, .searchable],
        "authorName": [.queryable, .sortable, .searchable],
        "tags": [.queryable, .sortable, .searchable],
        "score": [.queryable, .sortable],
        "ratio": [.queryable, .sortable],
        "createdAt": [.queryable, .sortable],
        "publishedAt": [.queryable, .sortable],
        "isCurrent": [.queryable, .sortable],
        "code": [.queryable, .sortable],
        "nums": [.queryable],
        "author": [.queryable],
        "location": [.queryable, .sortable],
        Record.SystemFieldKey.recordID: [.queryable],
        Record.SystemFieldKey.creationDate: [.queryable, .sortable],
        Record.SystemFieldKey.modificationDate: [.queryable, .sortable],
        Record.SystemFieldKey.creatorUserRecordID: [.queryable],
        Record.SystemFieldKey.lastModifiedUserRecordID: [.queryable],
        Record.SystemFieldKey.parent: [.queryable],
    ]

    static func declareIndexes(_ admin: Container.Administrator) async throws {
        try await admin.setIndexes(indexes, ofRecordType: postType)
    }

    static func authorIDs(in zone: RecordZone.ID) -> [Record.ID] {
        (0..<4).map { Record.ID(recordName: "author-\($0)", zoneID: zone) }
    }

    static func makeAuthors(in zone: RecordZone.ID) -> [Record] {
        authorIDs(in: zone).enumerated().map { i, id in
            let a = Record(recordType: authorType, recordID: id)
            a.setFieldValue(.string(authorNames[i]), forKey: "name")
            return a
        }
    }

    static func postName(_ i: Int) -> String { String(format: "post-%04d", i) }

    static func randomLocation(_ rng: inout SplitMix64) -> Location {
        let roll = Double.random(in: 0..<1, using: &rng)
        if roll < 0.6 {
            return Location(
                latitude: paris.latitude + Double.random(in: -0.6...0.6, using: &rng),
                longitude: paris.longitude + Double.random(in: -0.9...0.9, using: &rng))
        }
        if roll < 0.85 { return rng.pick(specialLocations) }
        return Location(latitude: Double.random(in: -80...80, using: &rng), longitude: Double.random(in: -180...180, using: &rng))
    }

    /// Fills `record` with random Post fields; each field may be missing. `deleteSelf`
    /// makes author references cascade.
    static func fill(
        _ r: Record, index i: Int, rng: inout SplitMix64, authors: [Record.ID], deleteSelf: Bool = false,
        parents: [Record.ID]? = nil
    ) {
        let parents = parents ?? authors
        func set(_ key: String, _ p: Double, _ value: @autoclosure () -> FieldValue, rng: inout SplitMix64) {
            r.setFieldValue(rng.chance(p) ? value() : nil, forKey: key)
        }
        let title = rng.pick(titles)
        set("title", 0.9, .string(title), rng: &rng)
        let wordCount = rng.int(1...5)
        var body = ""
        for w in 0..<wordCount {
            if w > 0 { body += rng.pick(separators) }
            body += rng.pick(words)
        }
        set("body", 0.8, .string(body), rng: &rng)
        let score = Int64(rng.int(-3...12))
        set("score", 0.85, .int64(score), rng: &rng)
        var ratio = Double(rng.int(-8...8)) / 4
        if ratio == 0 && rng.chance(0.5) { ratio = -0.0 }
        set("ratio", 0.85, .double(ratio), rng: &rng)
        let created = Date(timeIntervalSinceReferenceDate: baseDate + Double(rng.int(0...99)) * hour)
        set("createdAt", 0.85, .date(created), rng: &rng)
        let published = Date(timeIntervalSinceReferenceDate: baseDate + Double(rng.int(0...99)) * hour)
        set("publishedAt", 0.7, .date(published), rng: &rng)
        let tagCount = rng.int(0...3)
        var tags: [String] = []
        for _ in 0..<tagCount { tags.append(rng.pick(tagPool)) }
        if tags.isEmpty { tags = [rng.pick(tagPool)] }
        set("tags", 0.75, .stringList(tags), rng: &rng)
        var nums: [Int64] = []
        for _ in 0..<rng.int(1...3) { nums.append(Int64(rng.int(0...9))) }
        set("nums", 0.6, .int64List(nums), rng: &rng)
        let author = rng.pick(authors)
        set("author", 0.8, .reference(Record.Reference(recordID: author, action: deleteSelf ? .deleteSelf : .none)), rng: &rng)
        let authorName = rng.pick(authorNames)
        set("authorName", 0.8, .string(authorName), rng: &rng)
        let current = Int64(rng.int(0...1))
        set("isCurrent", 0.9, .int64(current), rng: &rng)
        let location = randomLocation(&rng)
        set("location", 0.75, .location(location), rng: &rng)
        let code = rng.pick(codes)
        set("code", 0.5, .bytes(code), rng: &rng)
        if !parents.isEmpty && rng.chance(0.2) {
            r.setParent(rng.pick(parents))
        } else if r.parent != nil {
            r.setParent(nil as Record.ID?)
        }
    }

    /// `count` new Post records; the first few have fixed values so that every seed hits the
    /// edge cases (signed zero, é composed and decomposed, the exact centre of a distance query).
    static func makePosts(
        count: Int, seed: UInt64, in zone: RecordZone.ID, authors: [Record.ID], firstIndex: Int = 0, deleteSelf: Bool = false,
        parents: [Record.ID]? = nil
    ) -> [Record] {
        var rng = SplitMix64(seed: seed)
        return (firstIndex..<(firstIndex + count)).map { i in
            let r = Record(recordType: postType, recordID: Record.ID(recordName: postName(i), zoneID: zone))
            fill(r, index: i, rng: &rng, authors: authors, deleteSelf: deleteSelf, parents: parents)
            switch i {
            case 0: r.setFieldValue(.double(-0.0), forKey: "ratio")
            case 1: r.setFieldValue(.double(0.0), forKey: "ratio")
            case 2: r.setFieldValue(.string("Cafe\u{301} society"), forKey: "title")
            case 3: r.setFieldValue(.string("Caf\u{E9} society"), forKey: "title")
            case 4: r.setFieldValue(.location(paris), forKey: "location")
            case 5: r.setFieldValue(.location(specialLocations[1]), forKey: "location")
            case 6: r.setFieldValue(.location(specialLocations[0]), forKey: "location")
            case 7: r.setFieldValue(.stringList(["r\u{E9}d", "Red"]), forKey: "tags")
            default: break
            }
            return r
        }
    }
}

// MARK: - Running queries

enum QueryRunner {
    /// Runs `query` and follows its cursors to the end with batches of `limit`, checking each
    /// batch: at most `limit` records (100 for `maximumResults`), and a cursor only when a
    /// non-empty batch follows. Returns every record in order.
    static func all(
        _ db: Database, _ query: Query, in zone: RecordZone.ID?, limit: Int, desiredKeys: [Record.FieldKey]? = nil,
        context: String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [Record] {
        let cap = limit == QueryOperation.maximumResults ? QueryOperation.defaultBatchSize : limit
        var (page, cursor) = try await db.records(matching: query, inZoneWith: zone, desiredKeys: desiredKeys, resultsLimit: limit)
        var records = try page.map { try $0.1.get() }
        #expect(
            page.count <= cap, "\(context): a batch of \(page.count) records exceeds the limit \(limit)", sourceLocation: sourceLocation)
        var batches = 1
        while let next = cursor {
            let (more, nextCursor) = try await db.records(continuingMatchFrom: next, desiredKeys: desiredKeys, resultsLimit: limit)
            #expect(
                !more.isEmpty, "\(context): batch \(batches + 1) is empty although the previous batch returned a cursor",
                sourceLocation: sourceLocation)
            #expect(
                more.count <= cap, "\(context): a batch of \(more.count) records exceeds the limit \(limit)", sourceLocation: sourceLocation
            )
            records += try more.map { try $0.1.get() }
            cursor = nextCursor
            batches += 1
            if batches > 2000 {
                Issue.record("\(context): more than 2000 batches; the cursor does not advance", sourceLocation: sourceLocation)
                break
            }
        }
        return records
    }

    /// Fetches the records named `names` in `zone` by ID (not by query), in `names` order,
    /// skipping those that do not exist; rows are the positions in `names`.
    static func fetch(_ db: Database, names: [String], in zone: RecordZone.ID) async throws -> [RefRecord] {
        let ids = names.map { Record.ID(recordName: $0, zoneID: zone) }
        var result: [RefRecord] = []
        for chunk in stride(from: 0, to: ids.count, by: 200) {
            let part = Array(ids[chunk..<min(chunk + 200, ids.count)])
            let fetched = try await db.records(for: part)
            for (offset, id) in part.enumerated() {
                if case .success(let record)? = fetched[id] { result.append(RefRecord(record, row: chunk + offset)) }
            }
        }
        return result
    }

    /// The names in `names` that are not in `other`, the first few, for messages.
    static func sample(_ names: some Collection<String>, _ n: Int = 8) -> String {
        let sorted = names.sorted()
        return sorted.prefix(n).joined(separator: ", ") + (sorted.count > n ? " … (\(sorted.count))" : "")
    }
}

extension QueryFixture {
    /// Saves the zone (unless it is the default zone), the authors and `count` random posts one
    /// by one (so rows follow the names), and returns the posts as fetched by ID.
    static func populate(
        _ db: Database, count: Int, seed: UInt64, zone: RecordZone.ID = zoneID, deleteSelf: Bool = false
    ) async throws -> [RefRecord] {
        if !zone.isDefaultZone { try await db.save(RecordZone(zoneID: zone)) }
        let authors = makeAuthors(in: zone)
        for author in authors { try await db.save(author) }
        let posts = makePosts(count: count, seed: seed, in: zone, authors: authors.map(\.recordID), deleteSelf: deleteSelf)
        for post in posts { try await db.save(post) }
        return try await QueryRunner.fetch(db, names: posts.map(\.recordID.recordName), in: zone)
    }
}
