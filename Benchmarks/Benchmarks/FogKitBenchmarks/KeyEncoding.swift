import Benchmark
import FogStorage

/// Tuple key encoding (FogStorage's public `KeyWriter`).
func keyEncodingBenchmarks() {
    Benchmark("tuple key encode (zone, record name)") { benchmark in
        let name = "2F1C7A0E-0B5B-4C5E-9A53-3D3C1F6E2A10"
        for i in benchmark.scaledIterations {
            var writer = KeyWriter(capacity: 48)
            writer.append(Int64(i & 0xFF))
            writer.append(name)
            blackHole(writer.bytes)
        }
    }
}
