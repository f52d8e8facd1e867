import Benchmark
import FogKit
import FogStorage
import Foundation

/// Micro-costs of the storage layer and the model layer. Names are stable:
/// they identify baselines.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .instructions],
        maxDuration: .seconds(3))

    Benchmark("tuple key encode (zone, record name)") { benchmark in
        let name = "2F1C7A0E-0B5B-4C5E-9A53-3D3C1F6E2A10"
        for i in benchmark.scaledIterations {
            var writer = KeyWriter(capacity: 48)
            writer.append(Int64(i & 0xFF))
            writer.append(name)
            blackHole(writer.bytes)
        }
    }

    Benchmark("record save, 1 record per request", configuration: .init(maxIterations: 2_000)) { benchmark in
        let store = try BenchStore()
        defer { store.close() }
        let database = store.container.privateCloudDatabase
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let record = Record(recordType: "Post")
            record["title"] = "A title of about thirty characters"
            record["score"] = 42
            blackHole(try await database.save(record))
        }
    }

    Benchmark("record save, 400 records per request", configuration: .init(maxIterations: 100)) { benchmark in
        let store = try BenchStore()
        defer { store.close() }
        let database = store.container.privateCloudDatabase
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let records = (0..<400).map { i -> Record in
                let record = Record(recordType: "Post")
                record["title"] = "A title of about thirty characters"
                record["score"] = i
                return record
            }
            blackHole(try await database.modifyRecords(saving: records, deleting: []))
        }
    }

    Benchmark("record fetch by ID") { benchmark in
        let store = try BenchStore()
        defer { store.close() }
        let database = store.container.privateCloudDatabase
        let records = (0..<400).map { i -> Record in
            let record = Record(recordType: "Post")
            record["title"] = "A title of about thirty characters"
            record["score"] = i
            record["tags"] = ["t1", "t2", "t3"]
            return record
        }
        _ = try await database.modifyRecords(saving: records, deleting: [])
        let ids = records.map(\.recordID)
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            blackHole(try await database.record(for: ids[i % ids.count]))
        }
    }
}

/// A container in a temporary directory with durability `.none`.
struct BenchStore {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-bench-\(UUID().uuidString)")
    let container: Container

    init(durability: Container.Durability = .none) throws {
        container = try Container(
            identifier: "iCloud.bench", directory: directory, user: "bench",
            configuration: .init(durability: durability))
    }

    func close() {
        container.close()
        try? FileManager.default.removeItem(at: directory)
    }
}
