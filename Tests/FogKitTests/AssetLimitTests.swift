import FogKit
import FogKitTesting
import Foundation
import Testing

/// The per-asset size limit (`Container.Configuration.maximumAssetSize`, CloudKit's 50 MB by
/// default): a larger asset file fails its record with `limitExceeded` before it is copied,
/// and leaves nothing in `assets/`.
@Suite struct AssetLimitTests {
    /// A folder of source files, removed with the test.
    let sources: TemporaryDirectory

    init() throws { sources = try TemporaryDirectory() }

    /// A store whose assets may be at most `limit` bytes.
    func store(limit: Int) throws -> TestStore {
        try TestStore(configuration: .init(durability: .none, maximumAssetSize: limit))
    }

    /// The files in the store's assets folder.
    func storedAssetFiles(_ store: TestStore) -> [String] { store.settledAssetFiles }

    /// A source file of `size` bytes (pseudo-random, so that files of different sizes differ).
    func file(_ name: String, size: Int) throws -> URL {
        let url = sources.url.appendingPathComponent(name)
        try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ size) }).write(to: url)
        return url
    }

    /// A sparse source file of `size` bytes (zeros), cheap to make however large.
    func sparseFile(_ name: String, size: Int) throws -> URL {
        let url = sources.url.appendingPathComponent(name)
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        return url
    }

    func note(_ name: String, _ url: URL, key: String = "file", in zone: RecordZone.ID = .default) -> Record {
        let record = Record(recordType: "Note", recordID: .init(recordName: name, zoneID: zone))
        record[key] = Asset(fileURL: url)
        return record
    }

    @Test func theDefaultIsCloudKitsFiftyMegabytes() throws {
        #expect(Container.Configuration.defaultMaximumAssetSize == 50_000_000)
        #expect(Container.Configuration().maximumAssetSize == 50_000_000)
        let store = try TestStore()
        #expect(store.container.configuration.maximumAssetSize == 50_000_000)
    }

    @Test func theDefaultLimitIsEnforced() async throws {
        let store = try TestStore()
        let db = store.privateDatabase
        let atLimit = note("atLimit", try sparseFile("at", size: 50_000_000))
        let saved = try await db.save(atLimit)
        let asset: Asset? = saved["file"]
        let stored = try #require(asset?.fileURL)
        #expect(try FileManager.default.attributesOfItem(atPath: stored.path)[.size] as? Int == 50_000_000)
        let files = storedAssetFiles(store)
        #expect(files.count == 1)

        let over = note("over", try sparseFile("over", size: 50_000_001))
        let error = await expectFogError(.limitExceeded) { try await db.save(over) }
        #expect(error?.message.contains("50000001") == true)
        #expect(error?.message.contains("50000000") == true)
        #expect(storedAssetFiles(store) == files)
        await expectNotStored(over.recordID, in: db)
    }

    @Test func anAssetAtACustomLimitSaves() async throws {
        let store = try store(limit: 1_024)
        let record = try await store.privateDatabase.save(note("a", try file("a", size: 1_024)))
        let asset: Asset? = record["file"]
        let url = try #require(asset?.fileURL)
        #expect(try Data(contentsOf: url).count == 1_024)
        #expect(storedAssetFiles(store).count == 1)
    }

    @Test func oneByteOverFailsAndLeavesNoFile() async throws {
        let store = try store(limit: 1_024)
        let db = store.privateDatabase
        let record = note("a", try file("a", size: 1_025), key: "photo")
        let error = await expectFogError(.limitExceeded) { try await db.save(record) }
        let message = error?.message ?? ""
        #expect(message.contains("'photo'"))
        #expect(message.contains("1025 bytes"))
        #expect(message.contains("1024"))
        #expect(storedAssetFiles(store).isEmpty)
        await expectNotStored(record.recordID, in: db)
        #expect(try store.admin.checkIntegrity().problems.isEmpty)
    }

    @Test func anOversizedElementOfAnAssetListFailsTheRecord() async throws {
        let store = try store(limit: 1_024)
        let db = store.privateDatabase
        let record = Record(recordType: "Note", recordID: .init(recordName: "list"))
        record["files"] = [Asset(fileURL: try file("small", size: 10)), Asset(fileURL: try file("big", size: 2_000))]
        await expectFogError(.limitExceeded) { try await db.save(record) }
        #expect(storedAssetFiles(store).isEmpty)
        await expectNotStored(record.recordID, in: db)
    }

    @Test func otherRecordsOfANonAtomicRequestStillSave() async throws {
        let store = try store(limit: 1_024)
        let db = store.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: "Custom")).zoneID
        let good = note("good", try file("good", size: 100), in: zone)
        let big = note("big", try file("big", size: 1_025), in: zone)
        let plain = Record(recordType: "Note", recordID: .init(recordName: "plain", zoneID: zone))
        let (saves, _) = try await db.modifyRecords(saving: [good, big, plain], deleting: [], atomically: false)
        #expect(saves[good.recordID]?.succeeded == true)
        #expect(saves[plain.recordID]?.succeeded == true)
        #expect(saves[big.recordID]?.fogCode == .limitExceeded)
        #expect(storedAssetFiles(store).count == 1)
        await expectNotStored(big.recordID, in: db)
        let fetched: Asset? = try await db.record(for: good.recordID)["file"]
        #expect(try fetched?.fileURL.map { try Data(contentsOf: $0).count } == 100)
        #expect(try store.admin.checkIntegrity().problems.isEmpty)
    }

    @Test func anAtomicZoneFailsItsWholeBatch() async throws {
        let store = try store(limit: 1_024)
        let db = store.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: "Atomic")).zoneID
        let good = note("good", try file("good", size: 100), in: zone)
        let big = note("big", try file("big", size: 1_025), in: zone)
        let plain = Record(recordType: "Note", recordID: .init(recordName: "plain", zoneID: zone))
        let error = await expectFogError(.partialFailure) {
            try await db.modifyRecords(saving: [good, big, plain], deleting: [], atomically: true)
        }
        let partial = error?.partialErrorsByItemID ?? [:]
        #expect(fogCode(partial[big.recordID]) == .limitExceeded)
        #expect(fogCode(partial[good.recordID]) == .batchRequestFailed)
        #expect(fogCode(partial[plain.recordID]) == .batchRequestFailed)
        for id in [good.recordID, big.recordID, plain.recordID] { await expectNotStored(id, in: db) }
        #expect(storedAssetFiles(store).isEmpty)
        #expect(try store.admin.checkIntegrity().problems.isEmpty)
    }

    /// A file that grows past the limit after it was measured stops the copy. A Linux `/proc`
    /// file stands in for it: a regular file whose size reads as 0 but that holds more bytes.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/maps")))
    func aFileThatGrowsPastTheLimitWhileCopiedFails() async throws {
        let store = try store(limit: 16)
        let db = store.privateDatabase
        let record = note("growing", URL(fileURLWithPath: "/proc/self/maps"))
        let error = await expectFogError(.limitExceeded) { try await db.save(record) }
        #expect(error?.message.contains("grew") == true)
        #expect(storedAssetFiles(store).isEmpty)
        await expectNotStored(record.recordID, in: db)
        // Within a generous limit the copy completes, but the file's size (0) and the bytes
        // read disagree: it changed while it was copied (`ErrorCodeTests` covers that code).
        let roomy = try self.store(limit: 1 << 30)
        await expectFogError(.assetFileModified) {
            try await roomy.privateDatabase.save(note("growing", URL(fileURLWithPath: "/proc/self/maps")))
        }
        #expect(storedAssetFiles(roomy).isEmpty)
    }

    @Test func invalidLimitsAreRefusedAtOpen() throws {
        for limit in [0, -1, Int.min] {
            let directory = try TemporaryDirectory()
            let configuration = Container.Configuration(maximumAssetSize: limit)
            #expect(throws: FogError.self) {
                try Container(identifier: "iCloud.test", directory: directory.url, user: "alice", configuration: configuration)
            }
            #expect(throws: FogError.self) {
                try Container.Administrator(identifier: "iCloud.test", directory: directory.url, configuration: configuration)
            }
            directory.remove()
        }
        #expect(throws: Never.self) { _ = try TestStore(configuration: .init(durability: .none, maximumAssetSize: 1)) }
    }
}
