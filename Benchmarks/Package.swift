// swift-tools-version:6.1
// FogKit's benchmarks: a package of their own so `swift test` at the root never builds them.
//
//   cd Benchmarks && swift run -c release fog-bench writers   # group commit: 1, 8, 64 writers
//   cd Benchmarks && swift package benchmark            # run every micro-benchmark
//   cd Benchmarks && swift package benchmark --filter "record.*"
import PackageDescription

let package = Package(
    name: "FogKitBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "FogKit", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Whole-workload runs that print `<name> <ops/s> ops/s …` lines.
        .executableTarget(
            name: "fog-bench",
            dependencies: [.product(name: "FogKit", package: "FogKit")],
            path: "Sources/fog-bench"
        ),
        // Micro-costs with ordo-one/benchmark.
        .executableTarget(
            name: "FogKitBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FogKit", package: "FogKit"),
                .product(name: "FogStorage", package: "FogKit"),
            ],
            path: "Benchmarks/FogKitBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ],
    swiftLanguageModes: [.v6]
)
