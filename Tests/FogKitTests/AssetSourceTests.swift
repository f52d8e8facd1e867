import FogKit
import FogKitTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An asset's source must be a readable regular file, checked before anything is copied, and
/// a save that fails leaves no copy behind (`Docs/Reliability.md`, "Bad input").
@Suite struct AssetSourceTests {
    let store: TestStore
    var db: Database { store.privateDatabase }
    /// A folder of source files, removed with the test.
    let sources: TemporaryDirectory

    init() throws {
        store = try TestStore()
        sources = try TemporaryDirectory()
    }

    /// The files in the store's assets folder, once no collection waits.
    var storedAssetFiles: [String] { store.settledAssetFiles }

    func file(_ name: String, bytes: Int = 100) throws -> URL {
        let url = sources.url.appendingPathComponent(name)
        try Data(repeating: 0x61, count: bytes).write(to: url)
        return url
    }

    func note(_ name: String, asset: URL, in zone: RecordZone.ID = .default) -> Record {
        let record = Record(recordType: "Note", recordID: .init(recordName: name, zoneID: zone))
        record["file"] = Asset(fileURL: asset)
        return record
    }

    @Test func aDirectoryIsRefusedWithInvalidArgumentsAndNothingIsCopied() async throws {
        let tree = sources.url.appendingPathComponent("tree")
        try FileManager.default.createDirectory(at: tree.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try Data(repeating: 1, count: 10_000).write(to: tree.appendingPathComponent("sub/big"))
        let record = note("dir", asset: tree)
        let error = await expectFogError(.invalidArguments) { try await db.save(record) }
        #expect(error?.message.contains("directory") == true, "\(error?.message ?? "")")
        #expect(storedAssetFiles.isEmpty)
        await expectNotStored(record.recordID, in: db)
    }

    @Test func aFIFOIsRefusedWithoutHangingTheSave() async throws {
        let fifo = sources.url.appendingPathComponent("pipe")
        #expect(mkfifo(fifo.path, 0o644) == 0)
        let record = note("fifo", asset: fifo)
        let error = await expectFogError(.invalidArguments) { try await db.save(record) }
        #expect(error?.message.contains("FIFO") == true, "\(error?.message ?? "")")
        #expect(storedAssetFiles.isEmpty)
        // In a list too, beside a good file: the record fails whole and copies nothing.
        let list = Record(recordType: "Note", recordID: .init(recordName: "list"))
        list["files"] = [Asset(fileURL: try file("good")), Asset(fileURL: fifo)]
        await expectFogError(.invalidArguments) { try await db.save(list) }
        #expect(storedAssetFiles.isEmpty)
    }

    @Test(arguments: ["/dev/null", "/dev/zero", "/dev/urandom"])
    func devicesAreRefusedWithInvalidArguments(path: String) async throws {
        await expectFogError(.invalidArguments, "\(path)") { try await db.save(note("dev", asset: URL(fileURLWithPath: path))) }
        #expect(storedAssetFiles.isEmpty)
    }

    @Test func missingAndUnreadableFilesAreAssetFileNotFound() async throws {
        await expectFogError(.assetFileNotFound) {
            try await db.save(note("missing", asset: sources.url.appendingPathComponent("nothing-here")))
        }
        await expectFogError(.assetFileNotFound) {
            try await db.save(note("under-a-file", asset: try file("plain").appendingPathComponent("child")))
        }
        // A dangling symbolic link is missing too; a link to a regular file is fine.
        let dangling = sources.url.appendingPathComponent("dangling")
        try FileManager.default.createSymbolicLink(at: dangling, withDestinationURL: sources.url.appendingPathComponent("gone"))
        await expectFogError(.assetFileNotFound) { try await db.save(note("dangling", asset: dangling)) }
        #expect(storedAssetFiles.isEmpty)
        let link = sources.url.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: try file("target", bytes: 7))
        let saved = try await db.save(note("linked", asset: link))
        let stored: Asset? = saved["file"]
        #expect(try stored.flatMap { try $0.fileURL.map { try Data(contentsOf: $0) } } == Data(repeating: 0x61, count: 7))
        // Unreadable: only observable when not running as root (root reads every file).
        if getuid() != 0 {
            let secret = try file("secret")
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: secret.path)
            await expectFogError(.assetFileNotFound) { try await db.save(note("secret", asset: secret)) }
        }
        #expect(storedAssetFiles.count == 1)
    }

    @Test func theCopiesOfSavesThatFailInTheTransactionAreRemoved() async throws {
        // An atomic zone: one record fails its save policy, so the other fails too.
        let zone = try await db.save(RecordZone(zoneName: "Atomic")).zoneID
        try await db.save(Record(recordType: "Note", recordID: .init(recordName: "taken", zoneID: zone)))
        let conflicting = note("taken", asset: try file("a"), in: zone)
        let innocent = note("innocent", asset: try file("b"), in: zone)
        let error = await expectFogError(.partialFailure) {
            try await db.modifyRecords(
                saving: [innocent, conflicting], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
        }
        #expect(fogCode(error?.partialErrorsByItemID?[conflicting.recordID]) == .serverRecordChanged)
        #expect(fogCode(error?.partialErrorsByItemID?[innocent.recordID]) == .batchRequestFailed)
        #expect(storedAssetFiles.isEmpty)

        // Not atomic: the failed save's copy goes, the saved one's stays.
        let separate = try await db.modifyRecords(
            saving: [innocent, conflicting], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: false)
        #expect(separate.saveResults[innocent.recordID]?.succeeded == true)
        #expect(separate.saveResults[conflicting.recordID]?.fogCode == .serverRecordChanged)
        let saved: Asset? = try await db.record(for: innocent.recordID)["file"]
        #expect(storedAssetFiles == [saved?.fileURL?.lastPathComponent].compactMap { $0 })

        // A zone that does not exist fails every item of its group: nothing is left.
        let nowhere = RecordZone.ID(zoneName: "Nowhere")
        let missingZone = try await db.modifyRecords(
            saving: [note("n", asset: try file("c"), in: nowhere)], deleting: [], savePolicy: .allKeys, atomically: false)
        #expect(missingZone.saveResults.values.allSatisfy { !$0.succeeded })
        #expect(storedAssetFiles.count == 1)
        #expect(try store.admin.checkIntegrity().problems.isEmpty)
    }
}
