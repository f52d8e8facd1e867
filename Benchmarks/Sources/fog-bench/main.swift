import FogKit
import Foundation

// fog-bench: whole-workload measurements of FogKit through its public API.
//
//   fog-bench writers [--requests N] [--rounds R] [--writers 1,4,16,64] [--durability durable|relaxed|none]
//                                      1, 4, 16 and 64 tasks saving one record per request
//   fog-bench changes [--rounds R]     fetching 10,000 changes since a token, then the whole feed
//   fog-bench workloads [--store DIR|postgres://…]
//                                      ../shared/bench's W1–W5, lines as bench_lmdb.c prints them
//   fog-bench scaling --store DIR|postgres://… [--processes 1,2,4] [--seconds S] [--records N]
//                                      the same work from 1, 2 and 4 processes on one store (Scaling.swift)
//   fog-bench subscriptions [--records N] [--rounds R]
//                                      inserts with 0, 10,000 non-matching and 100 matching
//                                      subscriptions; notification delivery latency (Subscriptions.swift)
//   fog-bench bounded                  peak RSS of migration and pruning on a large store (Bounded.swift)
//
// Each line: <workload> <ops/s> ops/s <seconds> s cpu=<user+sys seconds> check=<records stored>

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

func report(_ name: String, operations: Int, seconds: Double, cpu: Double, check: Int) {
    let line = String(
        format: "%-20@ %12.0f ops/s %9.4f s cpu=%.4f check=%d", name as NSString, Double(operations) / seconds, seconds, cpu, check)
    print(line)
}

/// Saves `requests` single-record requests from `writers` concurrent tasks into a
/// fresh store; returns saves per second, CPU seconds and records stored.
func measureWriters(
    _ writers: Int, durability: Container.Durability, requests: Int
) async throws -> (rate: Double, seconds: Double, cpu: Double, stored: Int, commits: Int) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fog-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let admin = try Container.Administrator(
        identifier: "iCloud.fog.bench", directory: directory, configuration: .init(durability: durability))
    defer { admin.close() }
    let container = try admin.container(user: "bench")
    defer { container.close() }
    let database = container.privateCloudDatabase
    let perWriter = requests / writers
    let start = Date()
    let cpu0 = cpuSeconds()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for w in 0..<writers {
            group.addTask {
                for i in 0..<perWriter {
                    let record = Record(recordType: "Post", recordID: Record.ID(recordName: "w\(w)-\(i)"))
                    record["title"] = "A title of about thirty characters"
                    record["score"] = i
                    try await database.save(record)
                }
            }
        }
        try await group.waitForAll()
    }
    let seconds = Date().timeIntervalSince(start)
    let info = try admin.storeInfo()
    return (Double(perWriter * writers) / seconds, seconds, cpuSeconds() - cpu0, info.recordCount, info.commits)
}

/// `writers`: `counts` concurrent tasks (1, 4, 16 and 64 unless told) each saving one record per request, in interleaved
/// rounds; prints each round and the medians, and the ratio to one writer (group commit
/// should make 64 writers at least 10× the rate of one).
func concurrentWriters(durability: Container.Durability, requests: Int, rounds: Int, counts: [Int]) async throws {
    print("# concurrent single-record writers, durability \(durability), \(requests) saves per run, \(rounds) interleaved rounds")
    var rates: [Int: [Double]] = [:]
    for round in 1...rounds {
        for writers in counts {
            let m = try await measureWriters(writers, durability: durability, requests: requests)
            rates[writers, default: []].append(m.rate)
            print(
                "# round \(round): writers-\(writers) \(Int(m.rate)) records/s, \(m.commits) commits "
                    + String(format: "(%.1f saves per commit)", Double(requests) / Double(max(1, m.commits))))
            if round == rounds {
                let median = rates[writers]!.sorted()[rates[writers]!.count / 2]
                report("writers-\(writers)", operations: Int(median * m.seconds), seconds: m.seconds, cpu: m.cpu, check: m.stored)
            }
        }
    }
    let median = { (w: Int) in rates[w]!.sorted()[rates[w]!.count / 2] }
    print("# writers | records/s (median) | × one writer")
    for writers in counts {
        let ratio = rates[1] == nil ? "" : String(format: "%.1fx", median(writers) / median(1))
        print(String(format: "# %7d | %18.0f | ", writers, median(writers)) + ratio)
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return nil }
    return arguments[i + 1]
}

let command = arguments.first
let rest = Array(arguments.dropFirst())
let durability = Container.Durability(rawValue: option("--durability") ?? "durable") ?? .durable
let only = Set((option("--only") ?? "").split(separator: ",").map(String.init))
let counts = (
    requests: Int(option("--requests") ?? "") ?? 6400, rounds: Int(option("--rounds") ?? ""),
    records: Int(option("--records") ?? "") ?? 20_000, tags: Int(option("--tags") ?? "") ?? 50,
    tombstones: Int(option("--tombstones") ?? "") ?? 300_000, zones: Int(option("--zones") ?? "") ?? 100_000
)

/// Runs `body` on the cooperative pool while the main thread waits, so that `main` stays
/// synchronous: Valgrind 3.19 stops with an internal error on a program whose `main` is async
/// (its main thread parks in Dispatch's `sigsuspend`), and callgrind's instruction counts are
/// how changes are compared on these shared machines
/// (`valgrind --tool=callgrind fog-bench workloads --only W2a`).
func runBlocking(_ body: @escaping @Sendable () async throws -> Void) {
    final class Outcome: @unchecked Sendable { var error: (any Error)? }
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { try await body() } catch { outcome.error = error }
        done.signal()
    }
    done.wait()
    if let error = outcome.error {
        FileHandle.standardError.write(Data("fog-bench: \(error)\n".utf8))
        exit(1)
    }
}

switch command {
case "writers":
    // `--writers 64` runs one configuration alone (to profile it); 1, 4, 16 and 64 by default.
    let writers = (option("--writers") ?? "1,4,16,64").split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
    runBlocking {
        try await concurrentWriters(
            durability: durability, requests: counts.requests, rounds: counts.rounds ?? 3,
            counts: writers.isEmpty ? [1, 4, 16, 64] : writers)
    }
case "workloads":
    selectedWorkloads = only
    runBlocking { try await referenceWorkloads(durability: durability, storeOption: option("--store")) }
case "anatomy":
    runBlocking { try await fetchAnatomy() }
case "changes":
    runBlocking { try await changeFeed(rounds: counts.rounds ?? 3) }
case "bounded":
    runBlocking {
        try await boundedWork(
            records: counts.records, tags: counts.tags, tombstones: counts.tombstones, zones: counts.zones, only: only)
    }
case "subscriptions":
    runBlocking {
        try await subscriptionBenchmarks(
            durability: durability, records: Int(option("--records") ?? "") ?? 20_000, rounds: counts.rounds ?? 3)
    }
case "scaling":
    runBlocking {
        try await scaling(
            storeOption: option("--store"), durability: durability,
            processes: (option("--processes") ?? "1,2,4").split(separator: ",").compactMap { Int($0) },
            seconds: Double(option("--seconds") ?? "") ?? 10, records: Int(option("--records") ?? "") ?? 20_000, only: only)
    }
case "scaling-worker":
    runBlocking { try await scalingWorker(durability: durability, option: option) }
case "bounded-step":
    runBlocking { try await boundedStep(rest) }
default:
    print("usage: fog-bench writers [--durability durable|relaxed|none] [--requests N] [--rounds R] [--writers 1,4,16,64]")
    print("       fog-bench changes [--rounds R]")
    print("       fog-bench bounded [--records N] [--tags T] [--tombstones N] [--zones N] [--only migrate,prune-tombstones,prune-zones]")
    print("       fog-bench workloads [--durability durable|relaxed|none] [--store DIR|postgres://…] [--only W1,W2a,…]")
    print(
        "       fog-bench scaling [--store DIR|postgres://…] [--processes 1,2,4] [--seconds S] [--records N] [--only get,query,update,save]"
    )
    print("       fog-bench subscriptions [--durability durable|relaxed|none] [--records N] [--rounds R]")
    exit(2)
}
