import Benchmark
import FogKit

/// Group commit: 64 concurrent tasks each save one post with durability `.durable`. An
/// iteration is the 64 saves; `saves/s` is their throughput (64 × iterations per second).
func groupCommitBenchmarks() {
    let writers = 64
    let savesPerSecond = BenchmarkMetric.custom("saves/s", polarity: .prefersLarger, useScalingFactor: false)
    postStoreBenchmark(
        "group commit: 64 concurrent saves (durable)",
        configuration: .init(
            metrics: Benchmark.defaultConfiguration.metrics + [savesPerSecond], maxDuration: .seconds(3), maxIterations: 500),
        durability: .durable,
        prepare: { _ in }
    ) { benchmark, store, _ in
        let records = (0..<writers).map { _ in store.makePost() }
        let database = store.database
        benchmark.startMeasurement()
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for record in records {
                group.addTask { _ = try await database.save(record) }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - start
        benchmark.stopMeasurement()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        benchmark.measurement(savesPerSecond, Int((Double(writers) / seconds).rounded()))
    }
}
