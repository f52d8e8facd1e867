import BenchData
import FogKit
import FogStorage
import FogStoragePostgres
import Foundation

// fog-bench scaling: the same work from 1, 2 and 4 processes at once against one store
// (issue 21), so that a PostgreSQL store's throughput as processes are added can be read
// beside an embedded store's on the same machine in the same run.
//
//   fog-bench scaling --store postgres://fog@/postgres?host=/tmp/fog-postgres.X [--processes 1,2,4]
//                     [--seconds 10] [--records 20000] [--only get,query,update,save]
//
// The parent loads the first N reference posts (W1's data) into a fresh store, then for each
// workload and process count starts that many `fog-bench scaling-worker` processes, which
// open the store as their own container, wait for a common start time and run the workload
// for the given seconds. Workloads (each a request through the public API):
//
//   get     one record by ID (W2a)
//   query   an author's newest 50 (W3a)
//   update  400 random records' scores in one modify, changed keys (W4); counted per record
//   save    one new record per save
//
// Each line gives the total rate, the ratio to one process, the clients' CPU per operation
// and how busy the machine was (all cores, from /proc/stat: PostgreSQL's work shows there).

/// The workloads `scaling` runs, in order.
private let scalingWorkloads = ["get", "query", "update", "save"]

/// Loads the store, runs every workload at every process count and prints the table.
func scaling(
    storeOption: String?, durability: Container.Durability, processes: [Int], seconds: Double, records: Int, only: Set<String>
) async throws {
    let store = try BenchStore.resolve(storeOption)
    defer { store.removeIfScratch() }
    let count = min(records, postCount)
    if !store.reused {
        try await loadScalingStore(store.location, durability: durability, count: count)
    }
    print(
        "# scaling store=\(store.location) durability=\(durability) posts=\(count) seconds=\(seconds) cores=\(ProcessInfo.processInfo.activeProcessorCount)"
    )
    let workloads = scalingWorkloads.filter { only.isEmpty || only.contains($0) }
    var rates: [String: [Int: Double]] = [:]
    for workload in workloads {
        for processCount in processes {
            let run = try runScalingWorkers(
                store: store, workload: workload, processes: processCount, seconds: seconds, records: count, durability: durability)
            rates[workload, default: [:]][processCount] = run.rate
            let one = rates[workload]?[processes.first ?? 1] ?? run.rate
            print(
                String(
                    format: "scaling-%@-p%d %12.0f ops/s  %.2fx  client-cpu=%.1f us/op  machine-busy=%.0f%%", workload, processCount,
                    run.rate, run.rate / one, run.clientCPU / Double(max(1, run.operations)) * 1e6, run.machineBusy * 100))
        }
    }
    print("# workload | " + processes.map { "\($0) proc" }.joined(separator: " | ") + " | \(processes.last ?? 1) / \(processes.first ?? 1)")
    for workload in workloads {
        let row = processes.map { String(format: "%.0f", rates[workload]?[$0] ?? 0) }
        let first = rates[workload]?[processes.first ?? 1] ?? 1, last = rates[workload]?[processes.last ?? 1] ?? 0
        print("# \(workload) | " + row.joined(separator: " | ") + String(format: " | %.2fx", last / first))
    }
}

/// Creates the zone and the reference schema and saves the first `count` posts, 400 a request.
private func loadScalingStore(_ location: StoreLocation, durability: Container.Durability, count: Int) async throws {
    let (_, posts) = referencePosts()
    let admin = try Container.Administrator(identifier: "iCloud.fog.bench", store: location, configuration: .init(durability: durability))
    defer { admin.close() }
    let container = try admin.container(user: "bench")
    defer { container.close() }
    let database = container.privateCloudDatabase
    let zone = try await database.save(RecordZone(zoneName: "Posts")).zoneID
    try await admin.importSchema(try referenceSchema())
    for start in stride(from: 0, to: count, by: batchSize) {
        let batch = posts[start..<min(start + batchSize, count)].map {
            $0.record(Record.ID(recordName: $0.recordName, zoneID: zone))
        }
        _ = try await database.modifyRecords(saving: batch, deleting: [])
    }
}

/// One measurement: `processes` workers running `workload` together.
private func runScalingWorkers(
    store: BenchStore, workload: String, processes: Int, seconds: Double, records: Int, durability: Container.Durability
) throws -> (rate: Double, operations: Int, clientCPU: Double, machineBusy: Double) {
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    // Time for every worker to start, generate the reference names and open the store.
    let startAt = Date().timeIntervalSince1970 + 2 + Double(processes) * 0.5
    var workers: [(Process, Pipe)] = []
    for index in 0..<processes {
        let process = Process()
        process.executableURL = executable
        process.arguments = [
            "scaling-worker", "--store", store.argument, "--workload", workload, "--seconds", String(seconds), "--start-at",
            String(startAt), "--worker", String(index), "--records", String(records), "--durability", durability.rawValue,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        workers.append((process, output))
    }
    while Date().timeIntervalSince1970 < startAt { usleep(1_000) }
    let busy0 = MachineCPU.sample()
    var operations = 0, clientCPU = 0.0
    for (process, output) in workers {
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("a scaling worker failed (status \(process.terminationStatus))") }
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count >= 4, fields[0] == "ops", let ops = Int(fields[1]), let cpu = Double(fields[3]) else {
            throw BenchError("a scaling worker answered \(text.debugDescription)")
        }
        operations += ops
        clientCPU += cpu
    }
    let busy = MachineCPU.sample().busy(since: busy0)
    return (Double(operations) / seconds, operations, clientCPU, busy)
}

/// A worker process: opens the store as user `bench`, waits for the start time and runs the
/// workload until the time is up; prints `ops N cpu S`.
func scalingWorker(durability: Container.Durability, option: (String) -> String?) async throws {
    guard let storeArgument = option("--store"), let workload = option("--workload"),
        let seconds = option("--seconds").flatMap(Double.init), let startAt = option("--start-at").flatMap(Double.init),
        let worker = option("--worker").flatMap(Int.init), let records = option("--records").flatMap(Int.init)
    else { throw BenchError("scaling-worker needs --store --workload --seconds --start-at --worker --records") }
    let location =
        storeArgument.hasPrefix("postgres") ? try StoreLocation.postgres(storeArgument) : .directory(URL(fileURLWithPath: storeArgument))
    let (authors, posts) = referencePosts()
    let zone = RecordZone.ID(zoneName: "Posts")
    let ids = posts.prefix(records).map { Record.ID(recordName: $0.recordName, zoneID: zone) }
    let container = try Container(
        identifier: "iCloud.fog.bench", store: location, user: "bench", configuration: .init(durability: durability))
    defer { container.close() }
    let database = container.privateCloudDatabase
    var random = BenchRandom(UInt64(100 + worker))

    let wait = startAt - Date().timeIntervalSince1970
    if wait > 0 {
        try await Task.sleep(nanoseconds: UInt64(wait * 1e9))
    } else {
        FileHandle.standardError.write(Data("fog-bench: worker \(worker) started \(-wait) s late\n".utf8))
    }
    let deadline = startAt + seconds
    let cpu0 = cpuSeconds()
    var operations = 0, saved = 0
    while Date().timeIntervalSince1970 < deadline {
        var done = 0
        switch workload {
        case "get":
            _ = try await database.record(for: ids[random.below(ids.count)])
            done = 1
        case "query":
            let query = Query(
                recordType: "Post", predicate: try QueryPredicate(format: "author == %@", authors[random.below(authorCount)]))
            query.sortDescriptors = [Query.SortDescriptor(key: "createdAt", ascending: false)]
            _ = try await database.records(matching: query, inZoneWith: zone, resultsLimit: 50)
            done = 1
        case "update":
            var chosen: [Int: Int64] = [:]
            for _ in 0..<batchSize { chosen[random.below(ids.count)] = Int64(random.next() % 1_000_000) }
            let batch = chosen.map { index, score -> Record in
                let record = Record(recordType: "Post", recordID: ids[index])
                record["score"] = score
                return record
            }
            _ = try await database.modifyRecords(saving: batch, deleting: [], savePolicy: .changedKeys)
            done = batch.count
        case "save":
            let record = Record(recordType: "Post", recordID: Record.ID(recordName: "w\(worker)-\(startAt)-\(saved)", zoneID: zone))
            record["title"] = "A title of about thirty characters"
            record["score"] = Int64(saved)
            record["author"] = authors[random.below(authorCount)]
            record["createdAt"] = Date()
            _ = try await database.save(record)
            saved += 1
            done = 1
        default:
            throw BenchError("unknown workload \(workload); one of \(scalingWorkloads.joined(separator: ", "))")
        }
        if Date().timeIntervalSince1970 <= deadline { operations += done }
    }
    print("ops \(operations) cpu \(cpuSeconds() - cpu0)")
}

/// The machine's CPU time from `/proc/stat`: every process's, PostgreSQL's server included.
private struct MachineCPU {
    var busy: Double
    var total: Double

    static func sample() -> MachineCPU {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
        else { return MachineCPU(busy: 0, total: 0) }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        let idle = values.count > 4 ? values[3] + values[4] : 0
        let total = values.reduce(0, +)
        return MachineCPU(busy: total - idle, total: total)
    }

    /// The fraction of all cores that was busy since `earlier`.
    func busy(since earlier: MachineCPU) -> Double {
        let total = total - earlier.total
        return total > 0 ? (busy - earlier.busy) / total : 0
    }
}
