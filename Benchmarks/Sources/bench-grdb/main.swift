// bench-grdb: SQLite-through-GRDB baseline ("what a Swift user would pick"), the GRDB
// columns of Benchmarks/compare.sh. It is the project's reference program of
// ../shared/bench/grdb, kept here so that a clone of the repository alone reproduces
// "FogKit vs SQLite": same data, same seven workloads (W1–W5), same checks.
//
//   usage: bench-grdb [NORMAL|FULL] [CACHE_MIB MMAP_MIB]
//
// NORMAL|FULL: PRAGMA synchronous of the writer (default NORMAL, GRDB's own).
// CACHE_MIB MMAP_MIB: optional tuning applied to every connection
// (PRAGMA cache_size / mmap_size); without them SQLite's defaults are used
// (cache_size=-2000, i.e. ~2 MiB per connection, mmap_size=0).
//
// DatabasePool (WAL). Same data and same random choices as fog-bench's Workloads.swift and
// the reference bench_lmdb.c (splitmix64 streams with fixed seeds). Output: one line per workload
//   <name> <ops/sec> ops/s <seconds> s cpu=<user+sys seconds> check=<value>
// then "db-size <bytes>" measured after the pool is closed (WAL checkpointed).

import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

let N = 100_000
let BATCH = 400
let NAUTH = 1000

// MARK: - Deterministic data (must match fog-bench's Workloads.swift and bench_lmdb.c)

struct SplitMix64 {
    var s: UInt64
    init(_ seed: UInt64) { s = seed }
    mutating func next() -> UInt64 {
        s &+= 0x9E37_79B9_7F4A_7C15
        var z = s
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

func uuid(_ r: inout SplitMix64) -> String {
    let a = r.next(), b = r.next()
    var out: [UInt8] = []
    out.reserveCapacity(36)
    func hex(_ v: UInt64, _ digits: Int) {
        for i in stride(from: digits - 1, through: 0, by: -1) {
            let d = UInt8((v >> UInt64(i * 4)) & 0xF)
            out.append(d < 10 ? 48 + d : 55 + d)
        }
    }
    hex(a >> 32, 8)
    out.append(45)
    hex((a >> 16) & 0xFFFF, 4)
    out.append(45)
    hex(a & 0xFFFF, 4)
    out.append(45)
    hex(b >> 48, 4)
    out.append(45)
    hex(b & 0xFFFF_FFFF_FFFF, 12)
    return String(decoding: out, as: UTF8.self)
}

func text(_ r: inout SplitMix64, _ len: Int) -> String {
    let alpha = Array("abcdefghijklmnopqrstuvwxyz ".utf8)
    return String(decoding: (0..<len).map { _ in alpha[r.below(27)] }, as: UTF8.self)
}

struct Post: FetchableRecord, PersistableRecord {
    static let databaseTableName = "post"
    static let columns = "recordName, title, body, score, createdAt, tags, author"
    var recordName: String
    var title: String
    var body: String
    var score: Int64
    var createdAt: Double
    var tags: [String]
    var author: String

    init(
        recordName: String, title: String, body: String, score: Int64,
        createdAt: Double, tags: [String], author: String
    ) {
        self.recordName = recordName
        self.title = title
        self.body = body
        self.score = score
        self.createdAt = createdAt
        self.tags = tags
        self.author = author
    }

    // Rows are always selected with `Post.columns`, in that order.
    init(row: Row) throws {
        recordName = row[0]
        title = row[1]
        body = row[2]
        score = row[3]
        createdAt = row[4]
        tags = (row[5] as String).split(separator: ",").map(String.init)
        author = row[6]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["recordName"] = recordName
        container["title"] = title
        container["body"] = body
        container["score"] = score
        container["createdAt"] = createdAt
        container["tags"] = tags.joined(separator: ",")
        container["author"] = author
    }

    var digest: UInt64 {
        UInt64(score) &+ UInt64(title.utf8.count + body.utf8.count + author.utf8.count + tags.count)
    }
}

func generate() -> (authors: [String], posts: [Post]) {
    var r = SplitMix64(42)
    let authors = (0..<NAUTH).map { _ in uuid(&r) }
    var posts: [Post] = []
    posts.reserveCapacity(N)
    for _ in 0..<N {
        let name = uuid(&r)
        let title = text(&r, 25 + r.below(11))
        let body = text(&r, 190 + r.below(21))
        let score = Int64(r.next() % 1_000_000)
        let createdAt = 1_600_000_000.0 + Double(r.next() % 100_000_000_000) / 1000.0
        var tags: [Int] = []
        while tags.count < 3 {
            let v = r.below(100)
            if !tags.contains(v) { tags.append(v) }
        }
        let author = authors[r.below(NAUTH)]
        posts.append(
            Post(
                recordName: name, title: title, body: body, score: score,
                createdAt: createdAt, tags: tags.map { "t\($0)" }, author: author))
    }
    return (authors, posts)
}

// MARK: - Timing

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

func cpu() -> Double {
    var u = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &u)
    return Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) * 1e-6
        + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) * 1e-6
}

func measure(_ name: String, ops: Int, _ body: () throws -> UInt64) rethrows {
    let t0 = now(), c0 = cpu()
    let check = try body()
    let dt = now() - t0, dc = cpu() - c0
    let pad = { (s: String, w: Int) in String(repeating: " ", count: max(0, w - s.count)) + s }
    emit(
        [
            name.padding(toLength: 16, withPad: " ", startingAt: 0),
            pad(String(Int((Double(ops) / dt).rounded())), 12), "ops/s",
            pad(String(format: "%.4f", dt), 9), "s",
            String(format: "cpu=%.4f", dc), "check=\(check)",
        ].joined(separator: " "))
}

/// Unbuffered line output, so progress shows up while a run is going.
func emit(_ line: String) {
    FileHandle.standardOutput.write((line + "\n").data(using: .utf8)!)
}

// MARK: - Benchmark

func run(sync: String, cacheMiB: Int?, mmapMiB: Int?) throws {
    let (authors, posts) = generate()

    var template = "\(NSTemporaryDirectory())/bench-grdb-XXXXXX".utf8CString
    let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let path = dir + "/db.sqlite"

    var config = Configuration()
    if let cacheMiB, let mmapMiB {
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA cache_size = -\(cacheMiB * 1024)")
            try db.execute(sql: "PRAGMA mmap_size = \(mmapMiB << 20)")
        }
    }
    let pool = try DatabasePool(path: path, configuration: config)
    // DatabasePool sets synchronous=NORMAL on its writer; override it if asked.
    try pool.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA synchronous = \(sync)")
        try db.execute(
            sql: """
                CREATE TABLE post(
                  recordName TEXT PRIMARY KEY NOT NULL,
                  title TEXT NOT NULL, body TEXT NOT NULL,
                  score INTEGER NOT NULL, createdAt REAL NOT NULL,
                  tags TEXT NOT NULL,               -- comma-joined
                  author TEXT NOT NULL);
                CREATE INDEX post_score ON post(score);
                CREATE INDEX post_createdAt ON post(createdAt);
                CREATE INDEX post_author ON post(author);
                CREATE TABLE post_tag(
                  tag TEXT NOT NULL, recordName TEXT NOT NULL,
                  PRIMARY KEY(tag, recordName)) WITHOUT ROWID;
                """)
        let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "?"
        let syn = try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
        let cache = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0
        let mmap = try Int.fetchOne(db, sql: "PRAGMA mmap_size") ?? 0
        let version = try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? "?"
        emit(
            "# grdb journal_mode=\(mode) synchronous=\(syn) (1=NORMAL 2=FULL) cache_size=\(cache) mmap_size=\(mmap) N=\(N) batch=\(BATCH) sqlite=\(version) dir=\(dir)"
        )
    }

    // W1: insert in transactions of 400 (post row + its 3 post_tag rows)
    try measure("W1-insert", ops: N) {
        for b in stride(from: 0, to: N, by: BATCH) {
            try pool.write { db in
                let tagStmt = try db.cachedStatement(sql: "INSERT INTO post_tag(tag, recordName) VALUES (?, ?)")
                for p in posts[b..<min(b + BATCH, N)] {
                    try p.insert(db)
                    for t in p.tags { try tagStmt.execute(arguments: [t, p.recordName]) }
                }
            }
        }
        return 0
    }

    let byName = "SELECT \(Post.columns) FROM post WHERE recordName = ?"
    // W2a: one read transaction per lookup
    try measure("W2a-get-1/txn", ops: N) {
        var r = SplitMix64(2), check: UInt64 = 0
        for _ in 0..<N {
            let name = posts[r.below(N)].recordName
            let p = try pool.read { db in
                try Post.fetchOne(db.cachedStatement(sql: byName), arguments: [name])!
            }
            check &+= p.digest
        }
        return check
    }
    // W2b: 400 lookups per read transaction
    try measure("W2b-get-400/txn", ops: N) {
        var r = SplitMix64(2), check: UInt64 = 0
        for _ in stride(from: 0, to: N, by: BATCH) {
            try pool.read { db in
                let stmt = try db.cachedStatement(sql: byName)
                for _ in 0..<BATCH {
                    let name = posts[r.below(N)].recordName
                    check &+= try Post.fetchOne(stmt, arguments: [name])!.digest
                }
            }
        }
        return check
    }

    // W3a: author == X ORDER BY createdAt DESC LIMIT 50 (full records)
    let byAuthor = "SELECT \(Post.columns) FROM post WHERE author = ? ORDER BY createdAt DESC LIMIT 50"
    let byScore = "SELECT title FROM post WHERE score BETWEEN ? AND ?"
    try pool.read { db in
        let explain: [(String, StatementArguments)] = [(byAuthor, ["x"]), (byScore, [0, 1])]
        for (sql, args) in explain {
            let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: args)
                .map { $0["detail"] as String }.joined(separator: "; ")
            emit("# plan \(sql.prefix(60))...: \(plan)")
        }
    }
    try measure("W3a-author-top50", ops: 1000) {
        var r = SplitMix64(3), check: UInt64 = 0
        for _ in 0..<1000 {
            let author = authors[r.below(NAUTH)]
            let rows = try pool.read { db in
                try Post.fetchAll(db.cachedStatement(sql: byAuthor), arguments: [author])
            }
            for p in rows { check &+= 1_000_000 &+ UInt64(p.score) }
        }
        return check
    }
    // W3b: score BETWEEN a AND a+10000, title only
    try measure("W3b-score-range", ops: 200) {
        var r = SplitMix64(5), check: UInt64 = 0
        for _ in 0..<200 {
            let a = Int64(r.next() % 990_000)
            let titles = try pool.read { db in
                try String.fetchAll(db.cachedStatement(sql: byScore), arguments: [a, a + 10_000])
            }
            for t in titles { check &+= 1_000_000 &+ UInt64(t.utf8.count) }
        }
        return check
    }

    // W4: 10000 random records get a new score, transactions of 400
    try measure("W4-update", ops: 10_000) {
        var r = SplitMix64(4), check: UInt64 = 0
        for _ in stride(from: 0, to: 10_000, by: BATCH) {
            try pool.write { db in
                let stmt = try db.cachedStatement(sql: "UPDATE post SET score = ? WHERE recordName = ?")
                for _ in 0..<BATCH {
                    let name = posts[r.below(N)].recordName
                    let score = Int64(r.next() % 1_000_000)
                    try stmt.execute(arguments: [score, name])
                    check &+= UInt64(score)
                }
            }
        }
        return check
    }

    // W5: count records tagged "t42" by decoding every record (no tag index)
    var seen = 0
    try measure("W5-scan-tag", ops: N) {
        var count: UInt64 = 0, sum: UInt64 = 0
        try pool.read { db in
            let cursor = try Post.fetchCursor(db, sql: "SELECT \(Post.columns) FROM post")
            while let p = try cursor.next() {
                if p.tags.contains("t42") { count += 1 }
                sum &+= UInt64(p.score)
                seen += 1
            }
        }
        return count &* 1_000_000_000_000 &+ sum
    }
    precondition(seen == N)

    try pool.writeWithoutTransaction { db in _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    try pool.close()
    let fm = FileManager.default
    let size = { (p: String) -> Int in ((try? fm.attributesOfItem(atPath: p))?[.size] as? Int) ?? 0 }
    let main = size(path), wal = size(path + "-wal"), shm = size(path + "-shm")
    emit("db-size \(main + wal) bytes (main \(main), wal \(wal), shm \(shm))")
}

let args = CommandLine.arguments
let sync = args.count > 1 ? args[1].uppercased() : "NORMAL"
let tuning = args.count > 3 ? (Int(args[2]), Int(args[3])) : (nil, nil)
guard sync == "NORMAL" || sync == "FULL", args.count == 4 ? tuning.0 != nil && tuning.1 != nil : args.count <= 2 else {
    emit("usage: bench-grdb [NORMAL|FULL] [CACHE_MIB MMAP_MIB]")
    exit(2)
}
try run(sync: sync, cacheMiB: tuning.0, mmapMiB: tuning.1)
