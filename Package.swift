// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "FogKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FogKit", targets: ["FogKit"]),
        .library(name: "FogStorage", targets: ["FogStorage"]),
        .library(name: "FogStorageLMDB", targets: ["FogStorageLMDB"]),
        .library(name: "FogStoragePostgres", targets: ["FogStoragePostgres"]),
        .library(name: "FogServer", targets: ["FogServer"]),
        .executable(name: "fog", targets: ["fog"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // MARK: - C
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // LMDB calls that a damaged file cannot crash (signal guard); used by FogStorageLMDB only.
        .target(name: "CLMDBGuard", dependencies: ["CLMDB"]),
        // MARK: - Library layers (arrows point down only)
        // The storage interface (no backend), then LMDB behind it; only FogStorageLMDB imports CLMDB.
        .target(name: "FogStorage", swiftSettings: swiftSettings),
        .target(name: "FogStorageLMDB", dependencies: ["FogStorage", "CLMDB", "CLMDBGuard"], swiftSettings: swiftSettings),
        // The same interface over a PostgreSQL server (postgres-nio); FogKit does not link it.
        .target(
            name: "FogStoragePostgres", dependencies: [
                "FogStorage", .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "FogKit",
            dependencies: [
                "FogStorage", "FogStorageLMDB", .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // MARK: - Server
        // CloudKit Web Services over HTTP (Hummingbird), its authentication and the web
        // console; a thin shell over FogKit, which knows nothing about HTTP.
        .target(
            name: "FogServer",
            dependencies: [
                "FogKit",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                // PBKDF2 for the sign-in page's password hashes.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Console/Site")],
            swiftSettings: swiftSettings
        ),
        // MARK: - Command line
        .executableTarget(
            name: "fog",
            dependencies: [
                "FogKit", "FogServer", "FogStoragePostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // MARK: - Tests
        // A process the fault tests start and kill (reader slots, power loss); not a product.
        .executableTarget(
            name: "FogTestHelper", dependencies: ["FogKit", "FogStorage", "FogStorageLMDB", "FogStoragePostgres"], swiftSettings: swiftSettings),
        // Helpers the test targets share (temporary stores and directories, seeded
        // generators, sample records); not a product.
        .target(name: "FogKitTesting", dependencies: ["FogKit", "FogStoragePostgres"], swiftSettings: swiftSettings),
        .testTarget(
            name: "FogStorageLMDBTests", dependencies: ["FogStorage", "FogStorageLMDB", "FogKitTesting"], swiftSettings: swiftSettings),
        .testTarget(
            name: "FogStorageConformanceTests", dependencies: ["FogStorage", "FogStorageLMDB", "FogStoragePostgres", "FogKitTesting"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "FogStoragePostgresTests",
            dependencies: ["FogStorage", "FogStoragePostgres", "FogKitTesting", .product(name: "PostgresNIO", package: "postgres-nio")],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "FogKitTests", dependencies: ["FogKit", "FogStorage", "FogStorageLMDB", "FogKitTesting"], swiftSettings: swiftSettings),
        // The `fog` tool, run as a process (it is built beside the tests).
        // The server, started on an ephemeral port and spoken to over real HTTP.
        .testTarget(
            name: "FogServerTests",
            dependencies: [
                "FogServer", "FogKit", "FogKitTesting", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "fogTests", dependencies: ["FogKit", "FogKitTesting", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings),
    ],
    swiftLanguageModes: [.v6]
)
