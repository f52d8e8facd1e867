import FogKit
import FogKitTesting
import Foundation
import Testing

/// The content-addressed asset store (`Docs/OnDiskFormat.md`, "Assets"): identical bytes are
/// stored once, under their SHA-256; reference counts follow saves, updates, deletions,
/// cascades and zone deletions; unreferenced files are collected after the commit that drops
/// their last reference, and at open.
@Suite struct AssetStoreTests {
    let store: TestStore
    var db: Database { store.privateDatabase }
    /// A folder of source files, removed with the test.
    let sources: TemporaryDirectory

    init() throws {
        store = try TestStore()
        sources = try TemporaryDirectory()
    }

    var assetFolder: URL { store.directory.appendingPathComponent("assets") }

    /// The files in the store's assets folder, sorted, once no collection waits.
    var storedAssetFiles: [String] { store.settledAssetFiles }

    func file(_ name: String, _ bytes: Data) throws -> URL {
        let url = sources.url.appendingPathComponent(name)
        try bytes.write(to: url)
        return url
    }

    func note(_ name: String, _ assets: [String: URL], in zone: RecordZone.ID = .default) -> Record {
        let record = Record(recordType: "Note", recordID: .init(recordName: name, zoneID: zone))
        for (key, url) in assets { record[key] = Asset(fileURL: url) }
        return record
    }

    /// The bytes behind a fetched record's asset field.
    func storedBytes(_ id: Record.ID, _ key: String) async throws -> Data? {
        let asset: Asset? = try await db.record(for: id)[key]
        return try asset?.fileURL.map { try Data(contentsOf: $0) }
    }

    /// The lowercase hexadecimal SHA-256 of `data`, computed by the `sha256sum` tool.
    func sha256(_ data: Data) throws -> String? {
        let url = try file("hashed-\(UUID().uuidString)", data)
        guard let tool = ChildProcess.which("sha256sum"),
            let process = try? ChildProcess(tool, [url.path], standardOutput: .pipe), let output = process.standardOutput
        else { return nil }
        let printed = output.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: printed, as: UTF8.self).split(separator: " ").first.map(String.init)
    }

    @Test func identicalBytesAreStoredOnceUntilTheLastRecordGoes() async throws {
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let a = note("a", ["file": try file("one", bytes)])
        let b = note("b", ["file": try file("two", bytes)])
        try await db.save(a)
        try await db.save(b)
        #expect(storedAssetFiles.count == 1)
        if let digest = try sha256(bytes) { #expect(storedAssetFiles == [digest]) }
        #expect(try await storedBytes(a.recordID, "file") == bytes)
        #expect(try await storedBytes(b.recordID, "file") == bytes)

        try await db.deleteRecord(withID: a.recordID)
        #expect(storedAssetFiles.count == 1)
        #expect(try await storedBytes(b.recordID, "file") == bytes)
        try await db.deleteRecord(withID: b.recordID)
        #expect(storedAssetFiles.isEmpty)
        #expect(try store.admin.checkIntegrity().problems.isEmpty)
    }

    @Test func oneRecordHoldingTheSameBytesTwiceCountsTwice() async throws {
        let bytes = Data(repeating: 7, count: 5_000)
        let record = Record(recordType: "Note", recordID: .init(recordName: "twice"))
        record["file"] = Asset(fileURL: try file("x", bytes))
        record["files"] = [Asset(fileURL: try file("y", bytes)), Asset(fileURL: try file("z", Data([1, 2, 3])))]
        try await db.save(record)
        #expect(storedAssetFiles.count == 2)
        // Dropping the list keeps the single asset's file.
        let fetched = try await db.record(for: record.recordID)
        fetched["files"] = nil
        try await db.save(fetched)
        #expect(storedAssetFiles.count == 1)
        #expect(try await storedBytes(record.recordID, "file") == bytes)
        try await db.deleteRecord(withID: record.recordID)
        #expect(storedAssetFiles.isEmpty)
    }

    @Test func replacingAnAssetFieldCollectsTheOldFile() async throws {
        let first = Data(repeating: 1, count: 2_000)
        let second = Data(repeating: 2, count: 3_000)
        let record = note("r", ["file": try file("first", first)])
        try await db.save(record)
        let oldFile = try #require(storedAssetFiles.first)

        let fetched = try await db.record(for: record.recordID)
        fetched["file"] = Asset(fileURL: try file("second", second))
        try await db.save(fetched)
        #expect(storedAssetFiles.count == 1)
        #expect(!storedAssetFiles.contains(oldFile))
        #expect(try await storedBytes(record.recordID, "file") == second)

        // Saving a fetched record again, its asset untouched, keeps the file and its count.
        let again = try await db.record(for: record.recordID)
        again["title"] = "kept"
        try await db.save(again)
        #expect(storedAssetFiles.count == 1)
        // Another record reusing the fetched asset shares the file.
        let copy = Record(recordType: "Note", recordID: .init(recordName: "copy"))
        copy["file"] = again["file"] as Asset?
        try await db.save(copy)
        try await db.deleteRecord(withID: record.recordID)
        #expect(storedAssetFiles.count == 1)
        #expect(try await storedBytes(copy.recordID, "file") == second)

        // Replacing with the same bytes changes nothing on disk.
        let same = try await db.record(for: copy.recordID)
        same["file"] = Asset(fileURL: try file("second-again", second))
        try await db.save(same)
        #expect(storedAssetFiles.count == 1)
        try await db.deleteRecord(withID: copy.recordID)
        #expect(storedAssetFiles.isEmpty)
        #expect(try store.admin.checkIntegrity().problems.isEmpty)
    }

    @Test func deletingAZoneReleasesItsAssets() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Files")).zoneID
        let shared = Data(repeating: 9, count: 4_096)
        let only = Data(repeating: 8, count: 4_096)
        try await db.save(note("kept", ["file": try file("shared", shared)]))
        for i in 0..<5 {
            try await db.save(note("z\(i)", ["file": try file("s\(i)", shared), "other": try file("o\(i)", only)], in: zone))
        }
        #expect(storedAssetFiles.count == 2)
        try await db.deleteRecordZone(withID: zone)
        #expect(storedAssetFiles.count == 1)
        #expect(try await storedBytes(Record.ID(recordName: "kept"), "file") == shared)
        #expect(try store.admin.checkIntegrity().problems.isEmpty)
    }

    @Test func aDeleteSelfCascadeReleasesTheReferrersAssets() async throws {
        let target = Record(recordType: "Note", recordID: .init(recordName: "target"))
        try await db.save(target)
        let referrer = note("referrer", ["file": try file("f", Data(repeating: 3, count: 1_000))])
        referrer["owner"] = Record.Reference(recordID: target.recordID, action: .deleteSelf)
        try await db.save(referrer)
        #expect(storedAssetFiles.count == 1)
        try await db.deleteRecord(withID: target.recordID)
        await expectNotStored(referrer.recordID, in: db)
        #expect(storedAssetFiles.isEmpty)
    }

    @Test func theSweepAtOpenRemovesFilesWithoutAReference() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("store")
        let bytes = Data(repeating: 5, count: 1_000)
        let source = try file("kept", bytes)
        do {
            let admin = try Container.Administrator(identifier: "iCloud.sweep", directory: url, configuration: .init(durability: .none))
            let container = try admin.container(user: "alice")
            try await container.privateCloudDatabase.save(note("n", ["file": source]))
            container.close()
            admin.close()
        }
        // What a save that crashed before its commit leaves: a finished copy and a temporary one.
        let assets = url.appendingPathComponent("assets")
        try Data(repeating: 6, count: 10).write(to: assets.appendingPathComponent(String(repeating: "ab", count: 32)))
        try Data(repeating: 6, count: 10).write(to: assets.appendingPathComponent(".tmp-crashed"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: assets.path).count == 3)
        let admin = try Container.Administrator(identifier: "iCloud.sweep", directory: url, configuration: .init(durability: .none))
        defer { admin.close() }
        let container = try admin.container(user: "alice")
        defer { container.close() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: assets.path).count == 1)
        let asset: Asset? = try await container.privateCloudDatabase.record(for: .init(recordName: "n"))["file"]
        #expect(try asset?.fileURL.map { try Data(contentsOf: $0) } == bytes)
    }
}

/// A child process saving, replacing and deleting records with shared assets is killed with
/// SIGKILL at random moments; after reopening, `assets/` holds exactly the files the records
/// reference, and every record's assets have the right bytes (`Docs/Reliability.md`).
@Suite(.serialized) struct AssetCrashTests {
    @Test func killedSavesLeaveNoOrphanAndNoMissingAsset() async throws {
        let directory = try TemporaryDirectory()
        let storeURL = directory.url.appendingPathComponent("store")
        let sources = directory.url.appendingPathComponent("sources")
        let variants = 48
        var generator = SystemRandomNumberGenerator()
        for round in 0..<3 {
            let child = try HelperProcess(HelperProcess.executable("FogTestHelper"), ["asset-workload", storeURL.path, sources.path])
            let started = try await child.waitForLine(startingWith: "committed ")
            try #require(started != nil, "round \(round): the workload committed nothing: \(child.printed)")
            try await Task.sleep(for: .milliseconds(Int.random(in: 10...300, using: &generator)))
            child.kill()

            let admin = try Container.Administrator(identifier: "iCloud.fog.assets", directory: storeURL)
            defer { admin.close() }
            let container = try admin.container(user: Container.defaultUser)
            defer { container.close() }
            let ids = (0..<24).map { Record.ID(recordName: "r\($0)") }
            var referenced: Set<String> = []
            var present = 0
            for (id, result) in try await container.privateCloudDatabase.records(for: ids) {
                guard let record = try? result.get() else { continue }
                present += 1
                let v = Int(try #require(record["variant"] as Int64?))
                let file: Asset = try #require(record["file"])
                let files: [Asset] = try #require(record["files"])
                for (asset, k) in zip([file] + files, [v, (v + 1) % variants, (v + 2) % variants]) {
                    let url = try #require(asset.fileURL)
                    referenced.insert(url.lastPathComponent)
                    #expect((try? Data(contentsOf: url)) == assetVariant(k), "round \(round): \(id.recordName) variant \(k)")
                }
            }
            let onDisk = Set(try FileManager.default.contentsOfDirectory(atPath: storeURL.appendingPathComponent("assets").path))
            #expect(onDisk == referenced, "round \(round): \(present) records; orphans \(onDisk.subtracting(referenced))")
            #expect(referenced.count < variants, "round \(round): some variants are unreferenced, so collection is tested")
            #expect(try admin.checkIntegrity().problems.isEmpty)
        }
    }

    /// The bytes of variant `k` of the helper's workload (`assetVariantBytes` there).
    func assetVariant(_ k: Int) -> Data {
        Data((0..<(1024 * (k % 8 + 1) + k)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ k &* 7) })
    }
}
