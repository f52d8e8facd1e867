// swift-tools-version:6.1
// FogKit's benchmarks: a package of their own so `swift test` at the root never builds them.
//
// FogKit vs SQLite (GRDB), the seven reference workloads W1–W5, in one command:
//
//   Benchmarks/compare.sh                  # 3 interleaved rounds; median table, ratios, db sizes, checks
//   Benchmarks/compare.sh -n 1             # one round (a few minutes; GRDB builds the first time)
//   Benchmarks/compare.sh -n 3 --only W2a,W3a   # extra arguments go to `fog-bench workloads`
//
// Its columns are `fog-bench workloads` (durable, and `--durability relaxed`) and
// `bench-grdb` (SQLite in WAL mode, synchronous NORMAL, and FULL). Each program alone:
//
//   cd Benchmarks && swift run -c release fog-bench workloads [--durability durable|relaxed|none] [--only W1,W3b]
//   cd Benchmarks && swift run -c release bench-grdb [NORMAL|FULL] [CACHE_MIB MMAP_MIB]
//   cd Benchmarks && swift run -c release fog-bench workloads --store postgres://…   # the same on PostgreSQL
//   cd Benchmarks && swift run -c release fog-bench scaling --store postgres://…     # 1, 2, 4 processes on one store
//   cd Benchmarks && swift run -c release fog-bench writers   # group commit: 1, 4, 16, 64 writers
//   cd Benchmarks && swift run -c release fog-bench changes    # 10,000 changes since a token
//   cd Benchmarks && swift run -c release fog-bench bounded    # peak RSS: migration, pruning (1M entries)
//   cd Benchmarks && swift run -c release server-bench         # FogServer under wrk (64 connections)
//
// Micro-costs with ordo-one/benchmark (key encoding, record encode/decode, predicate parsing,
// save, fetch, indexed query, group commit):
//
//   cd Benchmarks && swift package --disable-sandbox benchmark list
//   cd Benchmarks && swift package --disable-sandbox benchmark                 # every micro-benchmark
//   cd Benchmarks && swift package --disable-sandbox benchmark --filter "record.*"
import PackageDescription

let package = Package(
    name: "FogKitBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "FogKit", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // Whole-workload runs that print `<name> <ops/s> ops/s …` lines.
        // The reference data generator, shared by fog-bench and the micro-benchmarks.
        .target(name: "BenchData", path: "Sources/BenchData"),
        .executableTarget(
            name: "fog-bench",
            dependencies: [
                "BenchData", .product(name: "FogKit", package: "FogKit"), .product(name: "FogStorage", package: "FogKit"),
                .product(name: "FogStorageLMDB", package: "FogKit"), .product(name: "FogStoragePostgres", package: "FogKit"),
            ],
            path: "Sources/fog-bench"
        ),
        // FogServer under wrk on loopback, beside a trivial Hummingbird route and the in-process
        // rate of the same work (issue 20).
        .executableTarget(
            name: "server-bench",
            dependencies: [
                .product(name: "FogKit", package: "FogKit"), .product(name: "FogServer", package: "FogKit"),
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/server-bench"
        ),
        // The same seven workloads over SQLite through GRDB (WAL): the "what a Swift developer
        // would pick instead" column of compare.sh.
        .executableTarget(
            name: "bench-grdb",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift")],
            path: "Sources/bench-grdb"
        ),
        // Micro-costs with ordo-one/benchmark.
        .executableTarget(
            name: "FogKitBenchmarks",
            dependencies: [
                "BenchData",
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
