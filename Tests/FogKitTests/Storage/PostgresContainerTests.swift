import FogKitTesting
import FogStoragePostgres
import Foundation
import Testing

@testable import FogKit

/// Whether the tests of containers on PostgreSQL run: a server is given, or this is CI (where
/// they fail without one).
private let postgresTestsRun = TestBackend.postgresServer != nil || ProcessInfo.processInfo.environment["CI"] != nil

/// Containers on PostgreSQL (`FogStoragePostgres`): moving stores both ways, assets kept in the
/// database, and several processes sharing one store.
@Suite(.enabled(if: postgresTestsRun)) struct PostgresContainerTests {
    @Test func anEmbeddedStoreCopiesToPostgreSQL() async throws {
        let source = try TestStore(backend: .lmdb)
        let destination = try TestBackend.freshPostgresLocation()
        defer { TestBackend.remove(destination) }
        try await StoreCopyCheck.roundTrip(source: source, into: destination)
    }

    @Test func aPostgreSQLStoreCopiesToAFolder() async throws {
        let source = try TestStore(backend: .postgres)
        let target = try TemporaryDirectory()
        try await StoreCopyCheck.roundTrip(source: source, into: .directory(target.url.appendingPathComponent("copy")))
    }

    @Test func assetsLiveInTheDatabaseAndAreWrittenOutOnFirstRead() async throws {
        let store = try TestStore(backend: .postgres)
        let bytes = Data((0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pg-asset-\(UUID().uuidString)")
        try bytes.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let record = Record(recordType: "Photo", recordID: Record.ID(recordName: "p"))
        record["image"] = Asset(fileURL: file)
        try await store.privateDatabase.save(record)
        // As on another machine: this process's working folder loses its copy.
        try FileManager.default.removeItem(at: store.directory.appendingPathComponent("assets"))
        let fetched = try await store.privateDatabase.record(for: Record.ID(recordName: "p"))
        let url = try #require((fetched["image"] as? Asset)?.fileURL)
        #expect(try Data(contentsOf: url) == bytes)
        // The bytes go with the last reference.
        try await store.privateDatabase.deleteRecord(withID: Record.ID(recordName: "p"))
        let chunks = try store.admin.engine.core.store.read { txn in
            try txn.count(of: store.admin.engine.core.store.table(named: "assetChunks"))
        }
        #expect(chunks == 0)
    }

    @Test func encryptedFieldsNeedAGivenKey() async throws {
        let store = try TestStore(backend: .postgres)
        let record = Record(recordType: "Secret", recordID: Record.ID(recordName: "s"))
        record.encryptedValues["pin"] = "1234"
        await expectFogError(.badContainer) { try await store.privateDatabase.save(record) }
        var configuration = Container.Configuration(durability: .none)
        configuration.encryptionKey = Data(repeating: 7, count: 32)
        let keyed = try store.admin.container(user: "alice", configuration: configuration)
        defer { keyed.close() }
        try await keyed.privateCloudDatabase.save(record)
        #expect(try await keyed.privateCloudDatabase.record(for: record.recordID).encryptedValues["pin"] as? String == "1234")
    }

    /// Three processes write one zone at once: no increment is lost, failed atomic batches
    /// leave nothing, every process's feed delivers each record once, and roles hold.
    @Test(.timeLimit(.minutes(5))) func threeProcessesShareOneStore() async throws {
        let location = try TestBackend.freshPostgresLocation()
        defer { TestBackend.remove(location) }
        let alice = try Container(identifier: "iCloud.fog.shared", store: location, user: "alice")
        defer { alice.close() }
        let zone = try await alice.privateCloudDatabase.save(RecordZone(zoneName: "Shared")).zoneID
        let counter = Record(recordType: "Counter", recordID: Record.ID(recordName: "counter", zoneID: zone))
        counter["value"] = 0
        try await alice.privateCloudDatabase.save(counter)
        let board = Record(recordType: "Board", recordID: Record.ID(recordName: "board"))
        board["title"] = "alice's"
        try await alice.publicCloudDatabase.save(board)
        // Mallory exists before the processes start (so that they do not race to add her).
        let mallory = try Container(identifier: "iCloud.fog.shared", store: location, user: "mallory")
        mallory.close()

        let rounds = 8
        let processes = try (0..<3).map { i in
            try HelperProcess(
                HelperProcess.executable("FogTestHelper"), ["shared-store", location.url.absoluteString, "\(i)", "\(rounds)"])
        }
        var feeds: [[String]] = []
        for process in processes {
            let done = try await process.waitForLine(startingWith: "done", timeout: 240)
            #expect(done != nil, "a process did not finish: \(process.printed)")
            #expect(process.lines.contains { $0.hasPrefix("role-check permissionFailure") }, "\(process.printed)")
            let feed = process.lines.first { $0.hasPrefix("feed ") }.map { $0.dropFirst(5).split(separator: " ").map(String.init) } ?? []
            feeds.append(feed)
        }
        let value = try await alice.privateCloudDatabase.record(for: counter.recordID)["value"] as? Int
        #expect(value == 3 * rounds, "an increment was lost")
        var expected: Set<String> = ["counter"]
        for p in 0..<3 {
            for round in 0..<rounds where round % 4 != 3 {
                for suffix in ["a", "b", "c"] { expected.insert("p\(p)-r\(round)-\(suffix)") }
            }
        }
        // The feed, read in small pages after every process is done: each record once.
        var token: ServerChangeToken? = nil
        var delivered: [String] = []
        while true {
            let page = try await alice.privateCloudDatabase.recordZoneChanges(inZoneWith: zone, since: token, resultsLimit: 5)
            delivered += page.modificationResultsByID.keys.map(\.recordName)
            token = page.changeToken
            if !page.moreComing { break }
        }
        #expect(delivered.count == Set(delivered).count, "the feed delivered a record twice")
        #expect(Set(delivered) == expected, "a failed atomic batch left records, or a saved one is missing")
        // Each process's own feed, read while the others may still have been writing: what it
        // saw is committed, and seen once, but for `counter`, which others changed again after
        // an earlier page had delivered it (a record changed later comes again, as in CloudKit).
        for feed in feeds {
            let items = feed.filter { $0 != "counter" }
            #expect(!items.isEmpty)
            #expect(items.count == Set(items).count, "a process's feed delivered a record twice")
            #expect(Set(feed).isSubset(of: expected))
        }
        #expect(try await alice.publicCloudDatabase.record(for: board.recordID)["title"] as? String == "alice's")
    }
}
