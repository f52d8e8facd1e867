import FogStorage
import FogStoragePostgres
import Foundation
import Synchronization
import Testing

/// Several store objects (as several processes would have) on one store.
@Suite(.enabled(if: TestServer.enabled)) struct ConcurrencyTests {
    static let configuration = StoreConfiguration(
        tables: ["counters", "log", "odd name/ü"], layouts: ["log": .multiValue(fixedSizeValues: false)], durability: .none)

    /// Two store objects (two pools) increment one counter with read-modify-write
    /// transactions at once: serialization failures are retried, and no increment is lost.
    @Test func concurrentReadModifyWritesLoseNothing() async throws {
        try await TestServer.withLocation { location async throws in
            let first = try PostgresStore.open(at: location, configuration: Self.configuration)
            defer { first.close() }
            let second = try PostgresStore.open(at: location, configuration: Self.configuration)
            defer { second.close() }
            let perWriter = 25
            let writers = 6
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    let store = writer % 2 == 0 ? first : second
                    group.addTask {
                        let table = store.table(named: "counters")
                        for _ in 0..<perWriter {
                            do {
                                try await store.write { txn throws in
                                    let current =
                                        try txn.value(forKey: [1], in: table).map {
                                            UInt64(bigEndian: $0.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) })
                                        } ?? 0
                                    try txn.put(withUnsafeBytes(of: (current + 1).bigEndian) { Array($0) }, forKey: [1], in: table)
                                }
                            } catch {
                                Issue.record("write failed: \(error)")
                            }
                        }
                    }
                }
            }
            let total = try first.read { txn throws in
                try txn.value(forKey: [1], in: first.table(named: "counters")).map {
                    UInt64(bigEndian: $0.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) })
                }
            }
            #expect(total == UInt64(perWriter * writers))
            let commits = try first.storeStatistics().commits + second.storeStatistics().commits
            #expect(commits == perWriter * writers)
        }
    }

    /// Many first opens of one store at once (as many processes starting together): every one
    /// succeeds, and the tables are there once, with their layouts.
    @Test func concurrentFirstOpensCreateTheTablesOnce() throws {
        try TestServer.withLocation { location throws in
            let failures = Mutex<[String]>([])
            let group = DispatchGroup()
            for _ in 0..<8 {
                group.enter()
                Thread {
                    defer { group.leave() }
                    do {
                        let store = try PostgresStore.open(at: location, configuration: Self.configuration)
                        _ = try store.writeAndWait { txn throws in try txn.addValue([1], forKey: [1], in: store.table(named: "log")) }
                        store.close()
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }.start()
            }
            group.wait()
            #expect(failures.withLock { $0 } == [])
            #expect(PostgresStore.storeExists(at: location))
            let store = try PostgresStore.open(at: location, configuration: Self.configuration)
            defer { store.close() }
            try store.read { txn throws in
                #expect(try txn.layout(of: store.table(named: "log")) == .multiValue(fixedSizeValues: false))
                #expect(try txn.layout(of: store.table(named: "odd name/ü")) == .singleValue)
                #expect(try txn.count(of: store.table(named: "log")) == 1)
            }
            let schema = try PostgresAddress(location).schema
            let tables = try TestServer.execute(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = '\(schema)' ORDER BY tablename", at: location)
            #expect(tables == ["fog_tables", "t_counters", "t_log", "t_odd_20name_2f_c3_bc"])
        }
    }

    /// Opening without creating a missing table throws notFound and creates nothing.
    @Test func aMissingTableIsNotCreatedWhenNotAllowed() throws {
        try TestServer.withLocation { location throws in
            var configuration = Self.configuration
            configuration.createsMissingTables = false
            #expect(throws: StorageError.notFound) { _ = try PostgresStore.open(at: location, configuration: configuration) }
            #expect(!PostgresStore.storeExists(at: location))
            let schema = try PostgresAddress(location).schema
            #expect(try TestServer.execute("SELECT nspname::text FROM pg_namespace WHERE nspname = '\(schema)'", at: location) == [])
            // With the store there but one table missing: still nothing created.
            let store = try PostgresStore.open(at: location, configuration: StoreConfiguration(tables: ["counters"]))
            store.close()
            #expect(throws: StorageError.notFound) { _ = try PostgresStore.open(at: location, configuration: configuration) }
            #expect(try TestServer.execute("SELECT name FROM \"\(schema)\".fog_tables", at: location) == ["counters"])
        }
    }

    /// A scan of more entries than a page reads every page, in both directions, and a body that
    /// stops ends it.
    @Test func scansReadPageByPage() throws {
        try TestServer.withLocation { location throws in
            let store = try PostgresStore.open(at: location, configuration: Self.configuration)
            defer { store.close() }
            let table = store.table(named: "counters")
            let log = store.table(named: "log")
            let count = PostgresStore.scanPageSize * 2 + 7
            func key(_ i: Int) -> [UInt8] { [UInt8(i >> 8), UInt8(i & 0xFF)] }
            try store.writeAndWait { txn throws in
                for i in 0..<count {
                    try txn.put([UInt8(i & 0xFF)], forKey: key(i), in: table)
                    try txn.addValue(key(i), forKey: [UInt8(i % 3)], in: log)
                }
            }
            try store.read { txn throws in
                var keys: [[UInt8]] = []
                try txn.scan(table) { k, _ in
                    keys.append(Array(k))
                    return true
                }
                #expect(keys == (0..<count).map(key))
                keys = []
                try txn.scan(table, range: .all, reverse: true) { k, _ in
                    keys.append(Array(k))
                    return true
                }
                #expect(keys == (0..<count).reversed().map(key))
                var pairs: [[UInt8]] = []
                try txn.scan(log, range: .exactly([1]), reverse: false) { _, v in
                    pairs.append(Array(v))
                    return true
                }
                #expect(pairs == (0..<count).filter { $0 % 3 == 1 }.map(key))
                var seen = 0
                try txn.scan(table) { _, _ in
                    seen += 1
                    return seen < PostgresStore.scanPageSize + 3
                }
                #expect(seen == PostgresStore.scanPageSize + 3)
            }
        }
    }
}
