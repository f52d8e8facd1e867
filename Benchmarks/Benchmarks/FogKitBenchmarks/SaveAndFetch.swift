import Benchmark
import FogKit

/// One save, 400 saves in one request, one fetch: small records in the default zone, in a
/// store that the benchmark's setup opens once (durability `.none`), so that each iteration
/// measures the operation on a warm store, not the first write to a new one.
func saveAndFetchBenchmarks() {
    func smallPost(score: Int) -> Record {
        let record = Record(recordType: "Post")
        record["title"] = "A title of about thirty characters"
        record["score"] = score
        return record
    }

    postStoreBenchmark("record save, 1 record per request", configuration: .init(maxIterations: 10_000), prepare: { _ in }) {
        benchmark, store, _ in
        let records = benchmark.scaledIterations.map { smallPost(score: $0) }
        benchmark.startMeasurement()
        for record in records {
            blackHole(try await store.database.save(record))
        }
    }

    postStoreBenchmark("record save, 400 records per request", configuration: .init(maxIterations: 200), prepare: { _ in }) {
        benchmark, store, _ in
        let batches = benchmark.scaledIterations.map { _ in (0..<400).map { smallPost(score: $0) } }
        benchmark.startMeasurement()
        for records in batches {
            blackHole(try await store.database.modifyRecords(saving: records, deleting: []))
        }
    }

    postStoreBenchmark(
        "record fetch by ID",
        prepare: { store -> RoundRobin<Record.ID> in
            let records = (0..<400).map { i -> Record in
                let record = smallPost(score: i)
                record["tags"] = ["t1", "t2", "t3"]
                return record
            }
            _ = try await store.database.modifyRecords(saving: records, deleting: [])
            return RoundRobin(records.map(\.recordID))
        }
    ) { benchmark, store, ids in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.database.record(for: ids.next()))
        }
    }
}

/// Hands out its elements in turn, across iterations.
final class RoundRobin<Element>: @unchecked Sendable {
    private let elements: [Element]
    private var index = 0
    init(_ elements: [Element]) { self.elements = elements }
    func next() -> Element {
        defer { index = (index + 1) % elements.count }
        return elements[index]
    }
}
