// swift-tools-version:6.1
// FogKit's benchmarks: a package of their own so `swift test` at the root never builds them.
//
//   cd Benchmarks && swift package benchmark            # run every benchmark
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
