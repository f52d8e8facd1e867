import FogKit
import FogKitTesting
import Foundation
import Testing

/// `fog export`, `fog import`, `fog backup` and `fog restore`, run as the built tool.
@Suite struct InterchangeCLITests {
    static let identifier = "iCloud.test.interchange"

    /// Runs `fog` with `arguments`; returns its exit status, standard output and standard error.
    @discardableResult
    static func fog(_ arguments: [String], stdin: URL? = nil) throws -> (status: Int32, out: String, err: String) {
        let run = try FogTool.run(arguments, stdin: stdin, executable: CrashTests.fogTool)
        return (run.status, run.out, run.err)
    }

    /// A store with records of every type in alice's custom zone, a record in her default
    /// zone, one in bob's and one in the public database; returns the saved records.
    static func makeStore(at directory: URL, assets: URL) async throws -> [Record] {
        let admin = try Container.Administrator(identifier: identifier, directory: directory, configuration: .init(durability: .none))
        defer { admin.close() }
        let alice = try admin.container(user: "alice")
        defer { alice.close() }
        let bob = try admin.container(user: "bob")
        defer { bob.close() }
        let db = alice.privateCloudDatabase
        _ = try await db.save(RecordZone(zoneID: InterchangeTests.zone))
        var saved: [Record] = []
        saved.append(
            try await db.save(Record(recordType: "Target", recordID: Record.ID(recordName: "target", zoneID: InterchangeTests.zone))))
        saved.append(try await db.save(try InterchangeTests.everyType(assets: assets)))
        let plain = Record(recordType: "Note", recordID: Record.ID(recordName: "alice-default"))
        plain["title"] = "in the default zone"
        saved.append(try await db.save(plain))
        let bobs = Record(recordType: "Note", recordID: Record.ID(recordName: "bob-default"))
        bobs["title"] = "bob's"
        saved.append(try await bob.privateCloudDatabase.save(bobs))
        let shared = Record(recordType: "Notice", recordID: Record.ID(recordName: "public-1"))
        shared["text"] = "for everyone"
        saved.append(try await alice.publicCloudDatabase.save(shared))
        return saved
    }

    /// Expects the store at `directory` to hold `records` (in the same users' databases).
    static func expectStoreHolds(_ records: [Record], at directory: URL) async throws {
        let admin = try Container.Administrator(identifier: identifier, directory: directory, configuration: .init(durability: .none))
        defer { admin.close() }
        let alice = try admin.container(user: "alice")
        defer { alice.close() }
        let bob = try admin.container(user: "bob")
        defer { bob.close() }
        for original in records {
            let db: Database =
                switch original.recordID.recordName {
                case "public-1": alice.publicCloudDatabase
                case "bob-default": bob.privateCloudDatabase
                default: alice.privateCloudDatabase
                }
            let copy = try await db.record(for: original.recordID)
            try InterchangeTests.expectSameFields(original, copy)
        }
        let info = try admin.storeInfo()
        #expect(info.recordCount == records.count + 4, "the records and the four Users records, nothing else")
    }

    @Test func exportToAFolderAndImportIntoAnotherStore() async throws {
        let work = try TemporaryDirectory("interchange-cli")
        let source = work.appending("source"), export = work.appending("export"), target = work.appending("target")
        let records = try await Self.makeStore(at: source, assets: work.url)
        let exported = try Self.fog(["export", "--store", source.path, "--output", export.path])
        #expect(exported.status == 0, "\(exported.err)")
        let lines = try String(contentsOf: export.appendingPathComponent("records.jsonl"), encoding: .utf8).split(separator: "\n")
        #expect(lines.count == records.count)
        // Two distinct asset files (the list repeats one of the three values' files, which the
        // store keeps once, by content), named by downloadURL relative to the folder.
        let assetFiles = try FileManager.default.contentsOfDirectory(atPath: export.appendingPathComponent("assets").path)
        #expect(assetFiles.count == 2)
        #expect(lines.contains { $0.contains(#""downloadURL":"assets/"#) })
        let imported = try Self.fog(["import", export.path, "--store", target.path, "--container", Self.identifier])
        #expect(imported.status == 0, "\(imported.err)")
        #expect(imported.err.contains("imported \(records.count) records"))
        try await Self.expectStoreHolds(records, at: target)
        // The imported assets are the target store's own copies.
        let admin = try Container.Administrator(identifier: Self.identifier, directory: target)
        defer { admin.close() }
        let alice = try admin.container(user: "alice")
        defer { alice.close() }
        let copy = try await alice.privateCloudDatabase.record(for: records[1].recordID)
        guard case .asset(let asset)? = copy.fieldValue(forKey: "asset") else {
            Issue.record("no asset")
            return
        }
        #expect(asset.fileURL?.path.hasPrefix(target.path) == true)
    }

    @Test func exportToStandardOutputAndImportIt() async throws {
        let work = try TemporaryDirectory("interchange-pipe")
        let source = work.appending("source"), target = work.appending("target")
        let records = try await Self.makeStore(at: source, assets: work.url)
        let exported = try Self.fog(["export", "--store", source.path])
        #expect(exported.status == 0, "\(exported.err)")
        #expect(exported.err.isEmpty, "no progress when standard error is not a terminal")
        let file = work.appending("all.jsonl")
        try Data(exported.out.utf8).write(to: file)
        let imported = try Self.fog(["import", "-", "--store", target.path, "--container", Self.identifier], stdin: file)
        #expect(imported.status == 0, "\(imported.err)")
        try await Self.expectStoreHolds(records, at: target)
        // One zone, into another user and zone.
        let zoneOnly = try Self.fog(["export", "--store", source.path, "--user", "alice", "--zone", "Interchange"])
        #expect(zoneOnly.out.split(separator: "\n").count == 2)
        let bobsZone = work.appending("zone.jsonl")
        try Data(zoneOnly.out.utf8).write(to: bobsZone)
        let moved = try Self.fog(["import", bobsZone.path, "--store", target.path, "--user", "bob", "--zone", "Moved"])
        #expect(moved.status == 0, "\(moved.err)")
        let admin = try Container.Administrator(identifier: Self.identifier, directory: target)
        defer { admin.close() }
        let bob = try admin.container(user: "bob")
        defer { bob.close() }
        let copy = try await bob.privateCloudDatabase.record(
            for: Record.ID(recordName: "every-type", zoneID: RecordZone.ID(zoneName: "Moved")))
        try InterchangeTests.expectSameFields(records[1], copy, movedTo: RecordZone.ID(zoneName: "Moved"))
    }

    @Test func aBadLineStopsTheImportWithItsNumberAndKeepsCommittedBatches() async throws {
        let work = try TemporaryDirectory("interchange-bad")
        var lines: [String] = []
        for i in 1...5 {
            lines.append(
                #"{"recordName":"r\#(i)","recordType":"T","zoneID":{"zoneName":"Z"},"fields":{"n":{"type":"INT64","value":\#(i)}}}"#)
        }
        lines.append(#"{"recordName":"r6","recordType":"T","zoneID":{"zoneName":"Z"},"fields":{"n":{"type":"INT64","value":"six"}}}"#)
        lines.append(#"{"recordName":"r7","recordType":"T","zoneID":{"zoneName":"Z"}}"#)
        let file = work.appending("bad.jsonl")
        try Data(lines.joined(separator: "\n").utf8).write(to: file)
        let store = work.appending("store")
        let result = try Self.fog(["import", file.path, "--store", store.path, "--user", "alice", "--batch-size", "2"])
        #expect(result.status != 0)
        #expect(result.err.contains("line 6: fields.n.value: is not a 64-bit integer (type INT64)"), "\(result.err)")
        #expect(result.err.contains("4 records were committed"), "\(result.err)")
        let admin = try Container.Administrator(identifier: "iCloud.fog.import", directory: store)
        defer { admin.close() }
        let alice = try admin.container(user: "alice")
        defer { alice.close() }
        let zone = RecordZone.ID(zoneName: "Z")
        let found = try await alice.privateCloudDatabase.records(for: (1...7).map { Record.ID(recordName: "r\($0)", zoneID: zone) })
        let present = found.filter { (try? $0.value.get()) != nil }.map(\.key.recordName).sorted()
        #expect(present == ["r1", "r2", "r3", "r4"], "whole batches only: r5 shared its batch with the bad line")
    }

    @Test func backupAndRestoreMakeANewIncarnation() async throws {
        let work = try TemporaryDirectory("interchange-backup")
        let source = work.appending("source"), backup = work.appending("backup"), restored = work.appending("restored")
        let records = try await Self.makeStore(at: source, assets: work.url)
        // A change token from the original store.
        let token: ServerChangeToken
        do {
            let admin = try Container.Administrator(identifier: Self.identifier, directory: source)
            defer { admin.close() }
            let alice = try admin.container(user: "alice")
            defer { alice.close() }
            token = try await alice.privateCloudDatabase.recordZoneChanges(inZoneWith: InterchangeTests.zone, since: nil).changeToken
        }
        let backedUp = try Self.fog(["backup", backup.path, "--store", source.path])
        #expect(backedUp.status == 0, "\(backedUp.err)")
        let restoredRun = try Self.fog(["restore", backup.path, "--store", restored.path])
        #expect(restoredRun.status == 0, "\(restoredRun.err)")
        try await Self.expectStoreHolds(records, at: restored)
        do {
            let admin = try Container.Administrator(identifier: Self.identifier, directory: restored)
            defer { admin.close() }
            let alice = try admin.container(user: "alice")
            defer { alice.close() }
            await expectFogError(.changeTokenExpired) {
                try await alice.privateCloudDatabase.recordZoneChanges(inZoneWith: InterchangeTests.zone, since: token)
            }
            let sourceInfo = try Container.Administrator(identifier: Self.identifier, directory: source)
            defer { sourceInfo.close() }
            #expect(try admin.storeInfo().incarnation != sourceInfo.storeInfo().incarnation)
        }
        // Restore refuses an existing store, and the folder without a store.
        let again = try Self.fog(["restore", backup.path, "--store", restored.path])
        #expect(again.status != 0)
        #expect(again.err.contains("not empty"), "\(again.err)")
        let nothing = try Self.fog(["restore", work.appending("missing").path, "--store", work.appending("other").path])
        #expect(nothing.status != 0)
    }
}
