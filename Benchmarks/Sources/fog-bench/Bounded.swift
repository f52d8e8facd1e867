import FogKit
import FogStorage
import FogStorageLMDB
import Foundation

// fog-bench bounded: peak resident memory of the work that must stay bounded on a large
// store (Docs/Reliability.md, "Bounded work"). Each measured step runs in a child process
// of its own, so that its peak (getrusage's ru_maxrss) is its own:
//
//   migrate            opening a format 2 store of records × tags index entries (format 2 → 3)
//   prune-tombstones   one deleting request in a zone holding `tombstones` expired tombstones,
//                      then deleting requests until every one is pruned
//   prune-zones        one zone deletion in a database holding `zones` expired zone deletions,
//                      then zone deletions until every one is pruned
//   delete-zone        deleting a zone of `tombstones` records (the same count)
//
//   fog-bench bounded [--records 20000] [--tags 50] [--tombstones 300000] [--zones 100000]
//                     [--only migrate,prune-tombstones,prune-zones,delete-zone]

private let benchIdentifier = "iCloud.fog.bench"
private let tableNames = ["meta", "zones", "zoneids", "names", "records", "schema", "users", "refs", "indexes", "changes", "dbchanges"]

/// The peak resident set of this process so far, in MiB (Linux reports ru_maxrss in KiB).
func peakRSS() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

private func mib(_ value: Double) -> String { String(format: "%.1f MiB", value) }

/// RssAnon of /proc/self/status, in KiB.
private func anonymousKiB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") })
    else { return 0 }
    return Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? "") ?? 0
}

/// Samples the anonymous resident memory every 5 ms on a thread of its own, keeping the
/// largest: ru_maxrss also counts the store's mapped pages, which this leaves out.
final class AnonymousPeak: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0.0
    private var running = true

    init() {
        let thread = Thread { [self] in
            while true {
                let now = anonymousKiB()
                lock.lock()
                peak = max(peak, now)
                let go = running
                lock.unlock()
                if !go { return }
                usleep(5_000)
            }
        }
        thread.start()
    }

    /// Stops sampling; the peak in MiB.
    func stop() -> Double {
        let now = anonymousKiB()
        lock.lock()
        defer { lock.unlock() }
        running = false
        peak = max(peak, now)
        return peak / 1024
    }
}

/// The resident set now, split into anonymous memory (the heap, LMDB's dirty pages) and
/// pages of mapped files (the store's memory map, which the kernel may drop at will), from
/// /proc/self/status.
func residentNow() -> String {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return "" }
    func kib(_ field: String) -> Double {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return 0 }
        return Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? "") ?? 0
    }
    return "now anonymous \(mib(kib("RssAnon") / 1024)), mapped file \(mib(kib("RssFile") / 1024))"
}

private func fileSize(_ url: URL) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? Int) ?? 0
}

/// Entries of each table, read with the store's own statistics (no scan).
private func tableCounts(_ directory: URL, _ names: [String]) throws -> [String: Int] {
    let environment = try LMDBStore.open(directory: directory, configuration: .init(tables: tableNames))
    defer { environment.close() }
    return try environment.read { txn in
        var counts: [String: Int] = [:]
        for name in names { counts[name] = try txn.count(of: environment.table(named: name)) }
        return counts
    }
}

/// Runs `fog-bench bounded-step <arguments>` and waits for it.
private func runStep(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    process.arguments = ["bounded-step"] + arguments
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw FogError(.internalError, message: "step \(arguments.first ?? "") exited with \(process.terminationStatus)")
    }
}

func boundedWork(records: Int, tags: Int, tombstones: Int, zones: Int, only: Set<String>) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("fog-bench-bounded-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    print("# fog-bench bounded: peak RSS (ru_maxrss) of each step in a process of its own")
    if only.isEmpty || only.contains("migrate") {
        let directory = root.appendingPathComponent("migrate").path
        try runStep(["make-indexed", directory, String(records), String(tags)])
        try runStep(["migrate", directory])
    }
    if only.isEmpty || only.contains("prune-tombstones") {
        let directory = root.appendingPathComponent("tombstones").path
        try runStep(["make-tombstones", directory, String(tombstones)])
        try runStep(["prune-tombstones", directory])
    }
    if only.isEmpty || only.contains("delete-zone") {
        let directory = root.appendingPathComponent("zone").path
        try runStep(["make-tombstones", directory, String(tombstones), "keep"])
        try runStep(["delete-zone", directory])
    }
    if only.isEmpty || only.contains("prune-zones") {
        let directory = root.appendingPathComponent("zones").path
        try runStep(["make-zones", directory, String(zones)])
        try runStep(["prune-zones", directory])
    }
}

func boundedStep(_ arguments: [String]) async throws {
    let step = arguments[0]
    let directory = URL(fileURLWithPath: arguments[1])
    switch step {
    case "make-indexed": try await makeIndexed(directory, records: Int(arguments[2])!, tags: Int(arguments[3])!)
    case "migrate": try migrate(directory)
    case "make-tombstones": try await makeTombstones(directory, count: Int(arguments[2])!, keep: arguments.count > 3)
    case "delete-zone": try await deleteZone(directory)
    case "prune-tombstones": try await pruneTombstones(directory)
    case "make-zones": try await makeZones(directory, count: Int(arguments[2])!)
    case "prune-zones": try await pruneZones(directory)
    default: throw FogError(.invalidArguments, message: "unknown step \(step)")
    }
}

/// A store of `records` records of `tags` distinct tags each (one index entry per tag, from a
/// vocabulary of 250,000 tags), rewritten to format 2 as MigrationTests does.
private func makeIndexed(_ directory: URL, records: Int, tags: Int) async throws {
    let start = Date()
    do {
        let admin = try Container.Administrator(identifier: benchIdentifier, directory: directory, configuration: .init(durability: .none))
        defer { admin.close() }
        try await admin.setIndexes(["tags": [.queryable]], ofRecordType: "Tagged")
        let container = try admin.container(user: "bench")
        defer { container.close() }
        let database = container.privateCloudDatabase
        let vocabulary = 250_000
        for first in stride(from: 0, to: records, by: 400) {
            let batch = (first..<min(first + 400, records)).map { i -> Record in
                let record = Record(recordType: "Tagged", recordID: Record.ID(recordName: "r\(i)"))
                record["tags"] = (0..<tags).map { "tag-\((i * tags + $0) % vocabulary)" }
                return record
            }
            _ = try await database.modifyRecords(saving: batch, deleting: [])
        }
    }
    // Format 2: every (key, row) pair its own key, ending with the row id's tuple element.
    let environment = try LMDBStore.open(directory: directory, configuration: .init(tables: tableNames))
    defer { environment.close() }
    let indexes = environment.table(named: "indexes")
    let entries = try environment.writeAloneAndWait { txn throws -> Int in
        var keys: [[UInt8]] = []
        try txn.scan(indexes) { key, value in
            var row = KeyWriter()
            row.append(Int64(bitPattern: value.reduce(0) { $0 << 8 | UInt64($1) }))
            keys.append(Array(key) + row.bytes)
            return true
        }
        try txn.replaceWithEmpty(indexes)
        for key in keys { try txn.put([], forKey: key, in: indexes) }
        try txn.put([0, 0, 0, 0, 0, 0, 0, 2], forKey: Array("format".utf8), in: environment.table(named: "meta"))
        return keys.count
    }
    print(
        String(
            format: "# made a format 2 store: %d records, %d index entries, %.1f s, data.mdb %.1f MiB", records, entries,
            Date().timeIntervalSince(start), Double(fileSize(directory.appendingPathComponent("data.mdb"))) / 1_048_576))
}

private func migrate(_ directory: URL) throws {
    let before = peakRSS()
    let anonymous = AnonymousPeak()
    let start = Date()
    let admin = try Container.Administrator(identifier: benchIdentifier, directory: directory)
    let seconds = Date().timeIntervalSince(start)
    let after = peakRSS()
    let anonymousPeak = anonymous.stop()
    let info = try admin.storeInfo()
    let copy = directory.deletingLastPathComponent().appendingPathComponent("migrate-compact")
    try admin.backup(to: copy)
    admin.close()
    let entries = try tableCounts(directory, ["indexes"])["indexes"] ?? 0
    print(
        "migrate             peak RSS \(mib(before)) before, \(mib(after)) after (anonymous peak \(mib(anonymousPeak))); "
            + "\(String(format: "%.1f", seconds)) s; "
            + "format \(info.formatVersion), \(entries) index entries; data.mdb \(mib(Double(info.fileSize) / 1_048_576)), "
            + "compacted copy \(mib(Double(fileSize(copy.appendingPathComponent("data.mdb"))) / 1_048_576)); \(residentNow())")
}

/// A zone of `count` records, all deleted (`count` tombstones under the default retention),
/// or all kept.
private func makeTombstones(_ directory: URL, count: Int, keep: Bool = false) async throws {
    let start = Date()
    let container = try Container(identifier: benchIdentifier, directory: directory, user: "bench", configuration: .init(durability: .none))
    defer { container.close() }
    let database = container.privateCloudDatabase
    let zone = try await database.save(RecordZone(zoneName: "T")).zoneID
    for first in stride(from: 0, to: count, by: 400) {
        let batch = (first..<min(first + 400, count)).map { i -> Record in
            let record = Record(recordType: "Note", recordID: Record.ID(recordName: "r\(i)", zoneID: zone))
            record["v"] = i
            return record
        }
        _ = try await database.modifyRecords(saving: batch, deleting: [])
    }
    if keep {
        print(String(format: "# made a zone of %d records, %.1f s", count, Date().timeIntervalSince(start)))
        return
    }
    for first in stride(from: 0, to: count, by: 400) {
        let ids = (first..<min(first + 400, count)).map { Record.ID(recordName: "r\($0)", zoneID: zone) }
        _ = try await database.modifyRecords(saving: [], deleting: ids)
    }
    print(String(format: "# made %d tombstones in one zone, %.1f s", count, Date().timeIntervalSince(start)))
}

/// Opens with a retention of 0 (every tombstone has expired) and deletes: the first request,
/// then more until none is left.
private func pruneTombstones(_ directory: URL) async throws {
    let zone = RecordZone.ID(zoneName: "T")
    // A request adds a tombstone (3 entries) and prunes the older ones: done when nothing but
    // the newest tombstone is left.
    try await measurePruning(
        "prune-tombstones", directory: directory, table: "changes", floor: 3, request: "deleting request",
        requests: "deleting requests",
        prepare: { database in
            try await database.save(Record(recordType: "Note", recordID: Record.ID(recordName: "probe-0", zoneID: zone)))
        },
        probe: { database, n in
            let probe = Record.ID(recordName: "probe-\(n)", zoneID: zone)
            if n > 0 { try await database.save(Record(recordType: "Note", recordID: probe)) }
            try await database.deleteRecord(withID: probe)
        })
}

/// `count` zones created and deleted: `count` deletion events under the default retention.
private func makeZones(_ directory: URL, count: Int) async throws {
    let start = Date()
    let container = try Container(identifier: benchIdentifier, directory: directory, user: "bench", configuration: .init(durability: .none))
    defer { container.close() }
    let database = container.privateCloudDatabase
    for first in stride(from: 0, to: count, by: 400) {
        let zones = (first..<min(first + 400, count)).map { RecordZone(zoneName: "z\($0)") }
        _ = try await database.modifyRecordZones(saving: zones, deleting: [])
    }
    for first in stride(from: 0, to: count, by: 400) {
        let ids = (first..<min(first + 400, count)).map { RecordZone.ID(zoneName: "z\($0)") }
        _ = try await database.modifyRecordZones(saving: [], deleting: ids)
    }
    print(String(format: "# made %d deleted zones, %.1f s", count, Date().timeIntervalSince(start)))
}

/// Opens with a retention of 0 (every zone deletion has expired) and deletes zones: the first
/// request, then more until no older deletion is left (or none goes, as before pruning existed).
private func pruneZones(_ directory: URL) async throws {
    try await measurePruning(
        "prune-zones", directory: directory, table: "dbchanges", floor: 8, request: "zone deletion", requests: "zone deletions",
        prepare: { database in _ = try await database.save(RecordZone(zoneName: "probe-0")) },
        probe: { database, n in
            let probe = RecordZone.ID(zoneName: "probe-\(n)")
            if n > 0 { _ = try await database.save(RecordZone(zoneID: probe)) }
            _ = try await database.deleteRecordZone(withID: probe)
        })
}

/// Opens the store with the pruning retention, runs `prepare` (opening and a first write,
/// without pruning, so that the "open" figure is the baseline of a store in use), then `probe`
/// requests until `table` stops shrinking or holds at most `floor` entries. Prints the peak
/// RSS after the first request and after the last, with the anonymous peaks.
private func measurePruning(
    _ label: String, directory: URL, table: String, floor: Int, request: String, requests requestsName: String,
    prepare: (Database) async throws -> Void, probe: (Database, Int) async throws -> Void
) async throws {
    let before = peakRSS()
    let container = try Container(
        identifier: benchIdentifier, directory: directory, user: "bench",
        configuration: .init(durability: .none, tombstoneRetention: benchRetention))
    defer { container.close() }
    let database = container.privateCloudDatabase
    let initial = try tableCounts(directory, [table])[table]!
    var requests = 0
    var previous = initial
    var firstLine = ""
    try await prepare(database)
    let warm = peakRSS()
    var anonymous = AnonymousPeak()
    let start = Date()
    let column = label.padding(toLength: 19, withPad: " ", startingAt: 0)
    while true {
        try await probe(database, requests)
        requests += 1
        let now = try tableCounts(directory, [table])[table]!
        if requests == 1 {
            firstLine =
                "\(column) peak RSS \(mib(before)) before opening, \(mib(warm)) open, \(mib(peakRSS())) after the first "
                + "\(request) (anonymous peak \(mib(anonymous.stop())); \(table) entries \(initial) → \(now), "
                + "\(String(format: "%.3f", Date().timeIntervalSince(start))) s); " + residentNow()
            anonymous = AnonymousPeak()
        }
        if now >= previous || now <= floor { break }
        previous = now
    }
    print(firstLine)
    print(
        "\(column) peak RSS \(mib(peakRSS())) after \(requests) \(requestsName) (anonymous peak \(mib(anonymous.stop())), "
            + "\(String(format: "%.1f", Date().timeIntervalSince(start))) s), \(table) entries left \(previous); \(residentNow())")
}

/// The retention of the pruning steps: 0 (everything older than now has expired), or
/// FOG_BENCH_RETENTION seconds, to compare with requests that prune nothing.
private let benchRetention = ProcessInfo.processInfo.environment["FOG_BENCH_RETENTION"].flatMap(Double.init) ?? 0

/// Deletes the zone that `makeTombstones(keep: true)` filled, in one request.
private func deleteZone(_ directory: URL) async throws {
    let before = peakRSS()
    let container = try Container(identifier: benchIdentifier, directory: directory, user: "bench", configuration: .init(durability: .none))
    defer { container.close() }
    let database = container.privateCloudDatabase
    _ = try await database.save(RecordZone(zoneName: "warm-up"))
    let warm = peakRSS()
    let anonymous = AnonymousPeak()
    let start = Date()
    _ = try await database.deleteRecordZone(withID: RecordZone.ID(zoneName: "T"))
    print(
        "delete-zone         peak RSS \(mib(before)) before opening, \(mib(warm)) open, \(mib(peakRSS())) after deleting the zone "
            + "(anonymous peak \(mib(anonymous.stop())); \(String(format: "%.2f", Date().timeIntervalSince(start))) s); \(residentNow())")
}
