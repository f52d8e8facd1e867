import Benchmark
import FogKit

/// Record encode and decode through the public API: saving a prepared 6-field post
/// (title, body, score, createdAt, tags, author) in a custom zone with durability `.none`,
/// and fetching one back, with every field and with `desiredKeys ["title"]`.
func recordCodecBenchmarks() {
    postStoreBenchmark(
        "record encode: save a 6-field post (durability none)", configuration: .init(maxIterations: 10_000),
        prepare: { _ in }
    ) { benchmark, store, _ in
        // The record is built before the measurement starts: only the save is measured.
        let records = benchmark.scaledIterations.map { _ in store.makePost() }
        benchmark.startMeasurement()
        for record in records {
            blackHole(try await store.database.save(record))
        }
    }

    postStoreBenchmark(
        "record decode: fetch a 6-field post, all fields",
        prepare: { store in try await store.load(1)[0] }
    ) { benchmark, store, id in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.database.records(for: [id], desiredKeys: nil))
        }
    }

    postStoreBenchmark(
        "record decode: fetch a 6-field post, desiredKeys [title]",
        prepare: { store in try await store.load(1)[0] }
    ) { benchmark, store, id in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.database.records(for: [id], desiredKeys: ["title"]))
        }
    }
}
