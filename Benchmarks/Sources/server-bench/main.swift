// server-bench: FogServer under load from wrk on loopback, beside a trivial Hummingbird route
// and the in-process rate of the same work, all in one run (issue 20's benchmark).
//
//   cd Benchmarks && swift run -c release server-bench [--seconds 10] [--connections 64] [--rounds 3] [--soak 600]
//
// For each of records/lookup (one record), records/query (top 20 of an indexed type) and
// records/modify (a forceUpdate of one record), it prints wrk's requests per second and p99
// latency at 64 connections, and the same work's rate through FogKit's Swift API in the same
// process; a trivial Hummingbird route (`/hello`) right after each lookup run, for scale (the
// lookup and the route alternate for `--rounds` rounds, and the ratios' median is printed),
// and the process's resident memory after each. `--soak N` runs lookup and modify for N seconds and prints the
// resident memory every 30 seconds, to show that it stays bounded.
import FogKit
import FogServer
import Foundation
import Hummingbird
import Logging

/// Prints a line at once (standard output may be a file, which Swift's `print` buffers).
func print(_ line: String = "") { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments
func option(_ name: String, _ fallback: Int) -> Int {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count, let value = Int(arguments[i + 1]) else { return fallback }
    return value
}
let seconds = option("--seconds", 10)
let connections = option("--connections", 64)
let soak = option("--soak", 0)
let rounds = max(option("--rounds", 3), 1)
let recordCount = 10_000
let identifier = "iCloud.com.example.bench"

/// The resident set of this process now and at its peak, in MiB (from /proc/self/status).
func residentMemory() -> (now: Double, peak: Double) {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
    func field(_ name: String) -> Double {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else { return 0 }
        return Double(line.split(separator: " ").dropFirst().first { !$0.isEmpty }.map(String.init) ?? "0").map { $0 / 1024 } ?? 0
    }
    return (field("VmRSS:"), field("VmHWM:"))
}

/// The result of one wrk run.
struct WrkResult {
    var requestsPerSecond: Double
    var p99Milliseconds: Double
    var errors: String
    /// CPU time per request, in microseconds: this process (the servers) and wrk.
    var serverMicroseconds = 0.0
    var wrkMicroseconds = 0.0
}

/// CPU seconds (user and system) used so far by this process, and by its children that have
/// ended and been waited for.
func cpuSeconds() -> (process: Double, children: Double) {
    func seconds(_ who: __rusage_who_t) -> Double {
        var usage = rusage()
        getrusage(who, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }
    return (seconds(__rusage_who_t(RUSAGE_SELF.rawValue)), seconds(__rusage_who_t(RUSAGE_CHILDREN.rawValue)))
}

/// Runs wrk against `url` with a Lua script, and reads its summary.
func wrk(_ url: String, script: String, seconds: Int, connections: Int) throws -> WrkResult {
    let scriptURL = FileManager.default.temporaryDirectory.appendingPathComponent("server-bench-\(UUID().uuidString).lua")
    try script.write(to: scriptURL, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: scriptURL) }
    let before = cpuSeconds()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["wrk", "-t2", "-c\(connections)", "-d\(seconds)s", "--latency", "-s", scriptURL.path, url]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    func number(after prefix: String) -> String? {
        output.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(prefix) }
            .map { $0.trimmingCharacters(in: .whitespaces).dropFirst(prefix.count).trimmingCharacters(in: .whitespaces) }
    }
    let rate = Double(number(after: "Requests/sec:") ?? "0") ?? 0
    var p99 = 0.0
    if let text = number(after: "99%") {
        let value = Double(text.filter { $0.isNumber || $0 == "." }) ?? 0
        p99 = text.hasSuffix("us") ? value / 1000 : text.hasSuffix("ms") ? value : text.hasSuffix("s") ? value * 1000 : value
    }
    let errors = output.split(separator: "\n").filter { $0.contains("Non-2xx") || $0.contains("Socket errors") }.joined(separator: "; ")
    let after = cpuSeconds()
    let requests = max(rate * Double(seconds), 1)
    return WrkResult(
        requestsPerSecond: rate, p99Milliseconds: p99, errors: errors,
        serverMicroseconds: (after.process - before.process) / requests * 1e6,
        wrkMicroseconds: (after.children - before.children) / requests * 1e6)
}

/// Runs `body` on a thread of its own: `wrk(…)` blocks while wrk runs, and two of them on
/// Swift's cooperative threads (two on a 2-core machine) would leave the server under test no
/// thread to answer on (the first soak run stalled exactly so, both threads reading wrk's pipe).
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// Runs `body` repeatedly for `seconds` and returns calls per second.
@MainActor func inProcessRate(seconds: Double, _ body: () async throws -> Void) async throws -> Double {
    let start = Date()
    var count = 0
    while Date().timeIntervalSince(start) < seconds {
        for _ in 0..<50 { try await body() }
        count += 50
    }
    return Double(count) / Date().timeIntervalSince(start)
}

func luaString(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}

// MARK: - The store

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("server-bench-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: directory) }
let admin = try Container.Administrator(identifier: identifier, directory: directory)
try await admin.addUser("alice")
try await admin.setIndexes([.queryable, .sortable], forField: "score", ofRecordType: "Note")
let alice = try admin.container(user: "alice")
let database = alice.publicCloudDatabase
var batch: [Record] = []
for i in 0..<recordCount {
    let note = Record(recordType: "Note", recordID: Record.ID(recordName: "N-\(i)"))
    note["title"] = "Note number \(i)"
    note["score"] = i % 1000
    note["body"] = String(repeating: "x", count: 200)
    batch.append(note)
    if batch.count == 400 {
        _ = try await database.modifyRecords(saving: batch, deleting: [], savePolicy: .allKeys)
        batch = []
    }
}
let credentials = ServerCredentials(store: directory)
let apiToken = try credentials.createAPIToken()
let session = try credentials.createWebAuthToken(user: "alice", lifetime: 24 * 3600)

// MARK: - The servers

var configuration = FogServer.Configuration(port: 0)
configuration.logLevel = .critical
let server = try FogServer(store: directory, configuration: configuration)
let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
let serverTask = Task { try await server.run { port in portContinuation.yield(port) } }
var port = 0
for await p in ports {
    port = p
    break
}

let router = Router()
router.get("/hello") { _, _ in "ok" }
router.post("/hello") { _, _ in "ok" }
let (trivialPorts, trivialContinuation) = AsyncStream.makeStream(of: Int.self)
var trivialLogger = Logger(label: "trivial")
trivialLogger.logLevel = .critical
let trivial = Application(
    router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
    onServerRunning: { trivialContinuation.yield($0.localAddress?.port ?? 0) }, logger: trivialLogger)
let trivialTask = Task { try await trivial.runService(gracefulShutdownSignals: []) }
var trivialPort = 0
for await p in trivialPorts {
    trivialPort = p
    break
}

// MARK: - The work

var allowed = CharacterSet.alphanumerics
allowed.insert(charactersIn: "-._~")
let base = "http://127.0.0.1:\(port)/database/1/\(identifier)/development/public"
let credentialsQuery = "?ckAPIToken=\(apiToken)&ckWebAuthToken=\(session.addingPercentEncoding(withAllowedCharacters: allowed)!)"
let lookupScript = """
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "text/plain"
    request = function()
      return wrk.format(nil, nil, nil, '{"records":[{"recordName":"N-' .. math.random(0, \(recordCount - 1)) .. '"}]}')
    end
    """
let queryScript = """
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "text/plain"
    request = function()
      return wrk.format(nil, nil, nil, '{"resultsLimit":20,"query":{"recordType":"Note","filterBy":[{"fieldName":"score","comparator":"EQUALS","fieldValue":{"value":' .. math.random(0, 999) .. ',"type":"INT64"}}]}}')
    end
    """
let modifyScript = """
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "text/plain"
    request = function()
      return wrk.format(nil, nil, nil, '{"operations":[{"operationType":"forceUpdate","record":{"recordType":"Note","recordName":"N-' .. math.random(0, \(recordCount - 1)) .. '","fields":{"score":{"value":' .. math.random(0, 999) .. ',"type":"INT64"}}}}]}')
    end
    """

struct Row {
    var name: String
    var wrk: WrkResult
    var inProcess: Double?
    var rss: Double
}
var rows: [Row] = []
var generator = SystemRandomNumberGenerator()

@MainActor func record(_ name: String, url: String, script: String, inProcess: (() async throws -> Void)?) async throws {
    let result = try wrk(url, script: script, seconds: seconds, connections: connections)
    var local: Double?
    if let inProcess { local = try await inProcessRate(seconds: Double(seconds) / 2, inProcess) }
    rows.append(Row(name: name, wrk: result, inProcess: local, rss: residentMemory().now))
    if !result.errors.isEmpty { print("\(name): \(result.errors)") }
}

// The lookup and the trivial route run back to back in each of `--rounds` rounds: the rates of
// this shared machine drift by tens of percent within a minute, and a ratio of two runs half a
// minute apart measured the drift as much as the servers.
var pairs: [(lookup: WrkResult, same: WrkResult, get: WrkResult)] = []
for round in 0..<rounds {
    let before = rows.count
    try await record("records/lookup (1 record)", url: base + "/records/lookup" + credentialsQuery, script: lookupScript) {
        let id = Record.ID(recordName: "N-\(Int.random(in: 0..<recordCount, using: &generator))")
        _ = try await database.records(for: [id])
    }
    // The trivial route twice: with the lookup's own requests (a POST whose body wrk's Lua
    // script writes for each request), so that NIO parses the same bytes and wrk spends the
    // same on each request as in the lookup row, and a fixed GET (wrk's cheapest request).
    try await record(
        "trivial Hummingbird POST /hello (the lookup's requests)", url: "http://127.0.0.1:\(trivialPort)/hello" + credentialsQuery,
        script: lookupScript, inProcess: nil)
    try await record("trivial Hummingbird GET /hello", url: "http://127.0.0.1:\(trivialPort)/hello", script: "", inProcess: nil)
    pairs.append((rows[before].wrk, rows[before + 1].wrk, rows[before + 2].wrk))
}
try await record("records/query (top 20)", url: base + "/records/query" + credentialsQuery, script: queryScript) {
    let query = Query(recordType: "Note", predicate: try QueryPredicate(format: "score == %d", Int.random(in: 0..<1000, using: &generator)))
    _ = try await database.records(matching: query, resultsLimit: 20)
}
try await record("records/modify (forceUpdate)", url: base + "/records/modify" + credentialsQuery, script: modifyScript) {
    let note = Record(recordType: "Note", recordID: Record.ID(recordName: "N-\(Int.random(in: 0..<recordCount, using: &generator))"))
    note["score"] = Int.random(in: 0..<1000, using: &generator)
    _ = try await database.modifyRecords(saving: [note], deleting: [], savePolicy: .changedKeys)
}

print("")
print(
    "| endpoint (wrk, \(connections) connections, \(seconds) s) | requests/s | p99 ms | server CPU µs/request | wrk CPU µs/request | in-process ops/s | RSS MiB after |"
)
print("|---|---:|---:|---:|---:|---:|---:|")
for row in rows {
    let local = row.inProcess.map { String(format: "%.0f", $0) } ?? "-"
    print(
        "| \(row.name) | \(String(format: "%.0f", row.wrk.requestsPerSecond)) | \(String(format: "%.2f", row.wrk.p99Milliseconds)) | "
            + "\(String(format: "%.0f", row.wrk.serverMicroseconds)) | \(String(format: "%.0f", row.wrk.wrkMicroseconds)) | \(local) | "
            + "\(String(format: "%.0f", row.rss)) |"
    )
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
print("")
for (i, pair) in pairs.enumerated() {
    print(
        String(
            format:
                "round %d: records/lookup / trivial route with the same requests %.2f, / the fixed GET %.2f; server CPU per request / the same requests' %.2f",
            i + 1, pair.lookup.requestsPerSecond / max(pair.same.requestsPerSecond, 1),
            pair.lookup.requestsPerSecond / max(pair.get.requestsPerSecond, 1),
            pair.lookup.serverMicroseconds / max(pair.same.serverMicroseconds, 1)))
}
print(
    String(
        format: "median of %d rounds: records/lookup / trivial route with the same requests %.2f (target ≥ 0.5); / the fixed GET %.2f",
        pairs.count, median(pairs.map { $0.lookup.requestsPerSecond / max($0.same.requestsPerSecond, 1) }),
        median(pairs.map { $0.lookup.requestsPerSecond / max($0.get.requestsPerSecond, 1) })))
print(String(format: "peak RSS: %.0f MiB", residentMemory().peak))

if soak > 0 {
    print("")
    print("soak: records/lookup and records/modify for \(soak) s, RSS every 30 s")
    var elapsed = 0
    while elapsed < soak {
        let slice = min(30, soak - elapsed)
        async let lookups = onThread {
            try wrk(base + "/records/lookup" + credentialsQuery, script: lookupScript, seconds: slice, connections: connections / 2)
        }
        async let modifies = onThread {
            try wrk(base + "/records/modify" + credentialsQuery, script: modifyScript, seconds: slice, connections: connections / 2)
        }
        let (l, m) = try await (lookups, modifies)
        elapsed += slice
        for (name, result) in [("lookup", l), ("modify", m)] where !result.errors.isEmpty {
            print("t=\(elapsed) s \(name): \(result.errors)")
        }
        print(
            String(
                format: "t=%4d s  lookup %6.0f req/s  modify %6.0f req/s  RSS %5.0f MiB  peak %5.0f MiB", elapsed, l.requestsPerSecond,
                m.requestsPerSecond, residentMemory().now, residentMemory().peak))
    }
}

// The numbers are printed: end here (the servers stop with the process).
alice.close()
admin.close()
exit(0)
