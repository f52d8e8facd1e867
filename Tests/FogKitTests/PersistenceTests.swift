import FogKit
import FogKitTesting
import Foundation
import Synchronization
import Testing

/// What survives closing and reopening a container, what reads leave alone,
/// and what concurrent readers see.
@Suite struct PersistenceTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    static func fieldValues(_ r: Record) -> [String: FieldValue] {
        Dictionary(uniqueKeysWithValues: r.allKeys().map { ($0, r.fieldValue(forKey: $0)!) })
    }

    @Test func aReopenedContainerSeesEveryRecordFieldZoneAndUser() async throws {
        let dir = try TemporaryDirectory()
        let assetFile = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-asset-\(UUID().uuidString)")
        try Data("asset contents".utf8).write(to: assetFile)
        defer { try? FileManager.default.removeItem(at: assetFile) }
        let zoneID = RecordZone.ID(zoneName: "Notes")
        let date = Date(timeIntervalSinceReferenceDate: 700_000_000.123_456)
        let location = Location(
            latitude: 48.85, longitude: 2.35, altitude: 35, horizontalAccuracy: 10, verticalAccuracy: 4, course: 180,
            speed: 2, timestamp: date)

        var saved: [Record] = []
        let aliceID: Record.ID
        let bobID: Record.ID
        do {
            let alice = try dir.open(user: "alice")
            let bob = try dir.open(user: "bob")
            defer {
                bob.close()
                alice.close()
            }
            aliceID = try await alice.userRecordID()
            bobID = try await bob.userRecordID()
            let db = alice.privateCloudDatabase
            _ = try await db.modifyRecordZones(saving: [RecordZone(zoneID: zoneID), RecordZone(zoneName: "Empty")], deleting: [])

            let folder = Record(recordType: "Folder", recordID: .init(recordName: "folder", zoneID: zoneID))
            let note = Record(recordType: "Note", recordID: .init(recordName: "note", zoneID: zoneID))
            note["string"] = "text"
            note["int"] = 42
            note["double"] = 2.5
            note["bytes"] = Data([9, 8, 7])
            note["date"] = date
            note["location"] = location
            note["reference"] = Record.Reference(record: folder, action: .deleteSelf)
            note["asset"] = Asset(fileURL: assetFile)
            note["strings"] = ["x", "y"]
            note["ints"] = [Int64(1), 2]
            note["doubles"] = [0.5]
            note["datas"] = [Data([1]), Data()]
            note["dates"] = [date]
            note["locations"] = [location]
            note["references"] = [Record.Reference(record: folder, action: .none)]
            note.setParent(folder)
            let result = try await db.modifyRecords(saving: [folder, note], deleting: [])
            saved.append(try #require(try result.saveResults[folder.recordID]?.get()))
            saved.append(try #require(try result.saveResults[note.recordID]?.get()))
            let inDefault = Record(recordType: "Note", recordID: .init(recordName: "plain"))
            inDefault["string"] = "default zone"
            saved.append(try await db.save(inDefault))
            let post = Record(recordType: "Post", recordID: .init(recordName: "post"))
            post["string"] = "public"
            saved.append(try await bob.publicCloudDatabase.save(post))
        }

        let alice = try dir.open(user: "alice")
        let bob = try dir.open(user: "bob")
        defer {
            bob.close()
            alice.close()
        }
        #expect(try await alice.userRecordID() == aliceID)
        #expect(try await bob.userRecordID() == bobID)
        let zones = try await alice.privateCloudDatabase.allRecordZones()
        #expect(zones.map(\.zoneID.zoneName) == [RecordZone.ID.defaultZoneName, "Empty", "Notes"])
        #expect(zones.dropFirst().allSatisfy { $0.capabilities == [.fetchChanges, .atomic, .sharing, .zoneWideSharing] })

        for record in saved {
            let db = record.recordType == "Post" ? alice.publicCloudDatabase : alice.privateCloudDatabase
            let fetched = try await db.record(for: record.recordID)
            expectSameRecord(fetched, record)
            #expect(Self.fieldValues(fetched) == Self.fieldValues(record), "\(record.recordID.recordName)")
        }
        let note = try await alice.privateCloudDatabase.record(for: .init(recordName: "note", zoneID: zoneID))
        let asset = try #require(note["asset"] as? Asset)
        #expect(try Data(contentsOf: #require(asset.fileURL)) == Data("asset contents".utf8))
        #expect(note["location"] as? Location == location)
        #expect(note.parent?.recordID == Record.ID(recordName: "folder", zoneID: zoneID))

        // The schema (fixed field types) and the cascade links persisted too.
        let clash = Record(recordType: "Note", zoneID: zoneID)
        clash["int"] = "not an int"
        await expectFogError(.invalidArguments) { try await alice.privateCloudDatabase.save(clash) }
        try await alice.privateCloudDatabase.deleteRecord(withID: .init(recordName: "folder", zoneID: zoneID))
        await expectNotStored(note.recordID, in: alice.privateCloudDatabase)
        // Stored tags still work for conflict detection.
        let plain = try await alice.privateCloudDatabase.record(for: .init(recordName: "plain"))
        plain["string"] = "edited after reopen"
        try await alice.privateCloudDatabase.save(plain)
    }

    @Test func readsDoNotChangeTheStoreFile() async throws {
        let dir = try TemporaryDirectory()
        let ids: [Record.ID]
        do {
            let c = try dir.open(user: "alice")
            defer { c.close() }
            try await c.privateCloudDatabase.save(RecordZone(zoneName: "Z"))
            var records = (0..<20).map { i -> Record in
                let r = Record(recordType: "Note", recordID: .init(recordName: "n\(i)"))
                r["i"] = i
                r["s"] = String(repeating: "x", count: i * 10)
                return r
            }
            let inZone = Record(recordType: "Note", recordID: .init(recordName: "z", zoneID: .init(zoneName: "Z")))
            try await c.privateCloudDatabase.save(inZone)
            _ = try await c.privateCloudDatabase.modifyRecords(saving: records, deleting: [])
            records.append(inZone)
            ids = records.map(\.recordID)
        }
        let dataFile = dir.url.appendingPathComponent("data.mdb")
        let before = try Data(contentsOf: dataFile)

        do {
            let c = try dir.open(user: "alice")
            defer { c.close() }
            let db = c.privateCloudDatabase
            _ = try await c.userRecordID()
            _ = try await c.accountStatus()
            _ = try await db.allRecordZones()
            _ = try await db.recordZone(for: .init(zoneName: "Z"))
            _ = try await db.recordZones(for: [.init(zoneName: "Z"), .init(zoneName: "Missing")])
            let fetched = try await db.records(for: ids + [.init(recordName: "missing")])
            #expect(fetched.values.filter(\.succeeded).count == ids.count)
            _ = try await db.records(for: ids, desiredKeys: ["i"])
            _ = try await db.record(for: ids[0])
            _ = try await c.publicCloudDatabase.records(for: [.init(recordName: "missing")])
        }
        let after = try Data(contentsOf: dataFile)
        #expect(before == after, "data.mdb changed across a reopen with only reads (\(before.count) → \(after.count) bytes)")
    }

    @Test func readersSeeConsistentSnapshotsWhileAWriterCommits() async throws {
        let zoneID = RecordZone.ID(zoneName: "Snapshots")
        try await db.save(RecordZone(zoneID: zoneID))
        let ids = (0..<20).map { Record.ID(recordName: "r\($0)", zoneID: zoneID) }
        func batch(_ generation: Int) -> [Record] {
            ids.map { id in
                let r = Record(recordType: "Counter", recordID: id)
                r["gen"] = generation
                return r
            }
        }
        _ = try await db.modifyRecords(saving: batch(0), deleting: [], savePolicy: .changedKeys, atomically: true)

        let generations = 40
        let done = Flag()
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                defer { done.set() }
                for g in 1...generations {
                    let result = try await db.modifyRecords(saving: batch(g), deleting: [], savePolicy: .changedKeys, atomically: true)
                    #expect(result.saveResults.values.allSatisfy { $0.succeeded })
                }
                return 0
            }
            for _ in 0..<2 {
                group.addTask {
                    var reads = 0
                    var last = 0
                    while reads < 2_000 {
                        let finished = done.isSet
                        let results = try await db.records(for: ids)
                        let gens = try ids.map { id -> Int in
                            let record = try #require(try results[id]?.get())
                            return try #require(record["gen"] as? Int)
                        }
                        let first = gens[0]
                        #expect(gens.allSatisfy { $0 == first }, "torn read: \(gens)")
                        #expect(first >= last, "generations went backwards: \(last) → \(first)")
                        last = first
                        reads += 1
                        if finished { break }
                        await Task.yield()
                    }
                    return reads
                }
            }
            for try await _ in group {}
        }
        let final = try await db.records(for: ids)
        #expect(ids.allSatisfy { (try? final[$0]?.get())?["gen"] as? Int == generations })
    }

    @Test func archivedSystemFieldsDetectConflictsAfterAReopen() async throws {
        let dir = try TemporaryDirectory()
        let archive: Data
        let id = Record.ID(recordName: "cached")
        do {
            let c = try dir.open()
            defer { c.close() }
            let r = Record(recordType: "Note", recordID: id)
            r["title"] = "v1"
            let saved = try await c.privateCloudDatabase.save(r)
            let archiver = NSKeyedArchiver(requiringSecureCoding: true)
            saved.encodeSystemFields(with: archiver)
            archive = archiver.encodedData
        }
        let c = try dir.open()
        defer { c.close() }
        let db = c.privateCloudDatabase
        let restored = try #require(Record(coder: try NSKeyedUnarchiver(forReadingFrom: archive)))
        #expect(restored.recordID == id)
        #expect(restored.allKeys().isEmpty)
        #expect(restored.recordChangeTag == (try await db.record(for: id)).recordChangeTag)
        restored["title"] = "v2"
        let v2 = try await db.save(restored)
        #expect(v2["title"] as? String == "v2")
        // The archive is now stale.
        let stale = try #require(Record(coder: try NSKeyedUnarchiver(forReadingFrom: archive)))
        stale["title"] = "stale"
        await expectFogError(.serverRecordChanged) { try await db.save(stale) }
        #expect(try await db.record(for: id)["title"] as? String == "v2")
    }
}
