import BenchData
import FogKit
import Foundation

// The reference workloads of ../shared/bench (W1–W5) through FogKit's public API, on the
// same generated data, printing the same lines and checks as bench_lmdb.c and bench-grdb,
// so that `../shared/bench/run-all.sh FogKit='…/fog-bench workloads'` adds a column.

let postCount = 100_000
let batchSize = 400
let authorCount = 1_000

/// One generated post of the reference data.
struct Post {
    var recordName: String
    var title: String
    var body: String
    var score: Int64
    var createdAt: Double
    var tags: [String]
    var author: String
}

extension Post {
    /// The post as a FogKit record with the ID `id`.
    func record(_ id: Record.ID) -> Record {
        let record = Record(recordType: "Post", recordID: id)
        record["title"] = title
        record["body"] = body
        record["score"] = score
        record["createdAt"] = Date(timeIntervalSince1970: createdAt)
        record["tags"] = tags
        record["author"] = author
        return record
    }
}

/// The reference data: 1,000 authors and 100,000 posts, as bench_lmdb.c generates them.
func referencePosts() -> (authors: [String], posts: [Post]) {
    var r = BenchRandom(42)
    let authors = (0..<authorCount).map { _ in r.uuid() }
    var posts: [Post] = []
    posts.reserveCapacity(postCount)
    for _ in 0..<postCount {
        let name = r.uuid()
        let title = r.text(25 + r.below(11))
        let body = r.text(190 + r.below(21))
        let score = Int64(r.next() % 1_000_000)
        let createdAt = 1_600_000_000.0 + Double(r.next() % 100_000_000_000) / 1000.0
        var tags: [Int] = []
        while tags.count < 3 {
            let v = r.below(100)
            if !tags.contains(v) { tags.append(v) }
        }
        let author = authors[r.below(authorCount)]
        posts.append(
            Post(
                recordName: name, title: title, body: body, score: score, createdAt: createdAt, tags: tags.map { "t\($0)" },
                author: author))
    }
    return (authors, posts)
}

private func monotonic() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// The deployed schema of the reference workloads: development would otherwise give every
/// field just-in-time indexes (strings searchable too), which the reference workloads do not have.
func referenceSchema() throws -> Schema {
    try Schema(
        parsing: """
            DEFINE SCHEMA
                RECORD TYPE Post (
                    author STRING QUERYABLE,
                    body STRING,
                    createdAt TIMESTAMP SORTABLE,
                    score INT64 QUERYABLE SORTABLE,
                    tags LIST<STRING> QUERYABLE,
                    title STRING
                );
            """)
}

/// The workloads to run (`--only W3a,W5`: W1 still loads the data, unreported); all when empty.
nonisolated(unsafe) var selectedWorkloads: Set<String> = []

/// Prints `<name> <ops/s> ops/s <seconds> s cpu=<seconds> check=<n>` as the reference programs do.
private func measure(_ name: String, ops: Int, _ body: () async throws -> UInt64) async rethrows {
    let short = String(name.prefix { $0 != "-" })
    if !selectedWorkloads.isEmpty, !selectedWorkloads.contains(short) {
        if short == "W1" { _ = try await body() }
        return
    }
    let t0 = monotonic(), c0 = cpuSeconds()
    let check = try await body()
    let dt = monotonic() - t0, dc = cpuSeconds() - c0
    let pad = { (s: String, w: Int) in String(repeating: " ", count: max(0, w - s.count)) + s }
    let line = [
        name.padding(toLength: 16, withPad: " ", startingAt: 0), pad(String(Int((Double(ops) / dt).rounded())), 12), "ops/s",
        pad(String(format: "%.4f", dt), 9), "s", String(format: "cpu=%.4f", dc), "check=\(check)",
    ].joined(separator: " ")
    FileHandle.standardOutput.write((line + "\n").data(using: .utf8)!)
}

extension Record {
    fileprivate func int64(_ key: String) -> Int64 {
        guard case .int64(let v)? = fieldValue(forKey: key) else { fatalError("\(key) is not an INT64") }
        return v
    }
    fileprivate func string(_ key: String) -> String {
        guard case .string(let v)? = fieldValue(forKey: key) else { fatalError("\(key) is not a STRING") }
        return v
    }
    fileprivate func strings(_ key: String) -> [String] {
        guard case .stringList(let v)? = fieldValue(forKey: key) else { fatalError("\(key) is not a LIST<STRING>") }
        return v
    }
    /// The reference programs' digest of a post.
    fileprivate var digest: UInt64 {
        UInt64(int64("score"))
            &+ UInt64(string("title").utf8.count + string("body").utf8.count + string("author").utf8.count + strings("tags").count)
    }
}

/// Runs W1–W5 on a fresh store and prints the lines and the database size.
func referenceWorkloads(durability: Container.Durability, storeOption: String?) async throws {
    let (authors, posts) = referencePosts()
    let store = try BenchStore.resolve(storeOption)
    let reuse = store.reused
    defer { store.removeIfScratch() }
    let admin = try Container.Administrator(
        identifier: "iCloud.fog.bench", store: store.location, configuration: .init(durability: durability))
    let container = try admin.container(user: "bench")
    let database = container.privateCloudDatabase
    let zone = reuse ? RecordZone.ID(zoneName: "Posts") : try await database.save(RecordZone(zoneName: "Posts")).zoneID
    if !reuse {
        try await admin.importSchema(try referenceSchema())
    }
    FileHandle.standardOutput.write(
        "# fogkit\(store.location.isDirectory ? "" : "-postgres") durability=\(durability) N=\(postCount) batch=\(batchSize) dir=\(store.location)\n"
            .data(using: .utf8)!)
    let ids = posts.map { Record.ID(recordName: $0.recordName, zoneID: zone) }

    if !reuse {
        try await measure("W1-insert", ops: postCount) {
            for b in stride(from: 0, to: postCount, by: batchSize) {
                let records = (b..<min(b + batchSize, postCount)).map { posts[$0].record(ids[$0]) }
                _ = try await database.modifyRecords(saving: records, deleting: [])
            }
            return 0
        }
    }

    try await measure("W2a-get-1/txn", ops: postCount) {
        var r = BenchRandom(2), check: UInt64 = 0
        for _ in 0..<postCount {
            check &+= try await database.record(for: ids[r.below(postCount)]).digest
        }
        return check
    }

    try await measure("W2b-get-400/txn", ops: postCount) {
        var r = BenchRandom(2), check: UInt64 = 0
        for _ in stride(from: 0, to: postCount, by: batchSize) {
            let batch = (0..<batchSize).map { _ in ids[r.below(postCount)] }
            let results = try await database.records(for: batch)
            for id in batch { check &+= try results[id]!.get().digest }
        }
        return check
    }

    try await measure("W3a-author-top50", ops: 1000) {
        var r = BenchRandom(3), check: UInt64 = 0
        for _ in 0..<1000 {
            let query = Query(recordType: "Post", predicate: try QueryPredicate(format: "author == %@", authors[r.below(authorCount)]))
            query.sortDescriptors = [Query.SortDescriptor(key: "createdAt", ascending: false)]
            let (matches, _) = try await database.records(matching: query, inZoneWith: zone, resultsLimit: 50)
            for (_, result) in matches { check &+= 1_000_000 &+ UInt64(try result.get().int64("score")) }
        }
        return check
    }

    try await measure("W3b-score-range", ops: 200) {
        var r = BenchRandom(5), check: UInt64 = 0
        for _ in 0..<200 {
            let a = Int64(r.next() % 990_000)
            let query = Query(recordType: "Post", predicate: try QueryPredicate(format: "score BETWEEN %@", [a, a + 10_000]))
            var (matches, cursor) = try await database.records(
                matching: query, inZoneWith: zone, desiredKeys: ["title"], resultsLimit: 2_000)
            while true {
                for (_, result) in matches { check &+= 1_000_000 &+ UInt64(try result.get().string("title").utf8.count) }
                guard let next = cursor else { break }
                (matches, cursor) = try await database.records(continuingMatchFrom: next, desiredKeys: ["title"], resultsLimit: 2_000)
            }
        }
        return check
    }

    try await measure("W4-update", ops: 10_000) {
        var r = BenchRandom(4), check: UInt64 = 0
        for _ in stride(from: 0, to: 10_000, by: batchSize) {
            var records: [Record] = []
            var seen: Set<Int> = []
            for _ in 0..<batchSize {
                let i = r.below(postCount)
                let score = Int64(r.next() % 1_000_000)
                check &+= UInt64(score)
                // A record may come up twice in a batch; the later score wins, as in SQL.
                if !seen.insert(i).inserted { records.removeAll { $0.recordID == ids[i] } }
                let record = Record(recordType: "Post", recordID: ids[i])
                record["score"] = score
                records.append(record)
            }
            _ = try await database.modifyRecords(saving: records, deleting: [], savePolicy: .changedKeys)
        }
        return check
    }

    try await measure("W5-scan-tag", ops: postCount) {
        var count: UInt64 = 0, sum: UInt64 = 0, seen = 0
        let query = Query(recordType: "Post", predicate: QueryPredicate(value: true))
        var (matches, cursor) = try await database.records(matching: query, inZoneWith: zone, resultsLimit: 10_000)
        while true {
            for (_, result) in matches {
                let record = try result.get()
                if record.strings("tags").contains("t42") { count += 1 }
                sum &+= UInt64(record.int64("score"))
                seen += 1
            }
            guard let next = cursor else { break }
            (matches, cursor) = try await database.records(continuingMatchFrom: next, resultsLimit: 10_000)
        }
        precondition(seen == postCount, "W5 saw \(seen) records")
        return count &* 1_000_000_000_000 &+ sum
    }

    container.close()
    let size = try store.size(admin)
    admin.close()
    FileHandle.standardOutput.write("db-size \(size.bytes) bytes (\(size.what))\n".data(using: .utf8)!)
}
