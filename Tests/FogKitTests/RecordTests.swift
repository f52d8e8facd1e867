import FogKit
import FogKitTesting
import Foundation
import Testing

/// CKRecord behaviour (reference §3.1–3.6, §4.1): defaults, value types and
/// how they are stored, changed keys, copies, system fields and parents.
@Suite struct RecordTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    // MARK: - Creation

    @Test func aNewRecordHasAUUIDNameInTheDefaultZoneAndNoMetadata() {
        let record = Record(recordType: "Note")
        #expect(record.recordType == "Note")
        #expect(UUID(uuidString: record.recordID.recordName) != nil, "\(record.recordID.recordName)")
        #expect(record.recordID.zoneID == .default)
        #expect(Record(recordType: "Note").recordID != record.recordID)
        #expect(record.creationDate == nil)
        #expect(record.modificationDate == nil)
        #expect(record.creatorUserRecordID == nil)
        #expect(record.lastModifiedUserRecordID == nil)
        #expect(record.recordChangeTag == nil)
        #expect(record.parent == nil)
        #expect(record.share == nil)
        #expect(record.allKeys().isEmpty)
        #expect(record.changedKeys().isEmpty)
        #expect(record["anything"] == nil)
    }

    @Test func recordIDDefaultsToAUUIDNameInTheDefaultZone() {
        let id = Record.ID()
        #expect(UUID(uuidString: id.recordName) != nil)
        #expect(id.zoneID == .default)
        #expect(Record.ID(recordName: "x").zoneID == .default)
        #expect(Record.ID(recordName: "x") == Record.ID(recordName: "x", zoneID: .default))
        #expect(Record.ID(recordName: "x") != Record.ID(recordName: "x", zoneID: .init(zoneName: "Z")))
    }

    @Test func aRecordCreatedInAZoneGetsAUUIDNameInThatZone() {
        let zone = RecordZone.ID(zoneName: "Notes")
        let record = Record(recordType: "Note", zoneID: zone)
        #expect(record.recordID.zoneID == zone)
        #expect(UUID(uuidString: record.recordID.recordName) != nil)
    }

    // MARK: - Values

    /// A file holding `bytes`, in a fresh temporary location.
    static func makeFile(_ bytes: Data) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-asset-\(UUID().uuidString)")
        try bytes.write(to: url)
        return url
    }

    @Test func everyValueTypeRoundTripsThroughTheStore() async throws {
        let target = Record(recordType: "Target", recordID: .init(recordName: "target"))
        try await db.save(target)
        let date = Date(timeIntervalSinceReferenceDate: 123_456_789.123_456)
        let location = Location(
            latitude: 37.33, longitude: -122.03, altitude: 12.5, horizontalAccuracy: 5, verticalAccuracy: 3, course: 90,
            speed: 1.5, timestamp: date)
        let reference = Record.Reference(recordID: target.recordID, action: .none)
        let assetBytes = Data("asset bytes".utf8)
        let file1 = try Self.makeFile(assetBytes)
        let file2 = try Self.makeFile(Data([0, 1, 2]))
        defer { for f in [file1, file2] { try? FileManager.default.removeItem(at: f) } }

        let r = Record(recordType: "Everything")
        r["string"] = "héllo wörld"
        r["int64"] = Int64.min
        r["double"] = -0.125
        r["bytes"] = Data([0, 255, 0, 7])
        r["date"] = date
        r["location"] = location
        r["reference"] = reference
        r["asset"] = Asset(fileURL: file1)
        r["stringList"] = ["a", "", "ç"]
        r["int64List"] = [Int64.max, 0, -1]
        r["doubleList"] = [1.5, -2.25]
        r["bytesList"] = [Data([1]), Data()]
        r["dateList"] = [date, Date(timeIntervalSince1970: 0)]
        r["locationList"] = [
            location, Location(latitude: -10, longitude: 20, altitude: 0, horizontalAccuracy: 1, verticalAccuracy: -1, timestamp: date),
        ]
        r["referenceList"] = [reference, Record.Reference(recordID: .init(recordName: "elsewhere"), action: .none)]
        r["assetList"] = [Asset(fileURL: file1), Asset(fileURL: file2)]
        let saved = try await db.save(r)
        let fetched = try await db.record(for: r.recordID)

        for got in [saved, fetched] {
            #expect(got.allKeys() == r.allKeys())
            let s: String? = got["string"]
            #expect(s == "héllo wörld")
            let i: Int64? = got["int64"]
            #expect(i == Int64.min)
            let d: Double? = got["double"]
            #expect(d == -0.125)
            let b: Data? = got["bytes"]
            #expect(b == Data([0, 255, 0, 7]))
            let dt: Date? = got["date"]
            #expect(dt == date)
            let l: Location? = got["location"]
            #expect(l == location)
            let ref: Record.Reference? = got["reference"]
            #expect(ref == reference)
            let sl: [String]? = got["stringList"]
            #expect(sl == ["a", "", "ç"])
            let il: [Int64]? = got["int64List"]
            #expect(il == [Int64.max, 0, -1])
            let dl: [Double]? = got["doubleList"]
            #expect(dl == [1.5, -2.25])
            let bl: [Data]? = got["bytesList"]
            #expect(bl == [Data([1]), Data()])
            let datel: [Date]? = got["dateList"]
            #expect(datel == [date, Date(timeIntervalSince1970: 0)])
            let ll: [Location]? = got["locationList"]
            #expect(
                ll == [
                    location,
                    Location(latitude: -10, longitude: 20, altitude: 0, horizontalAccuracy: 1, verticalAccuracy: -1, timestamp: date),
                ])
            let rl: [Record.Reference]? = got["referenceList"]
            #expect(rl == [reference, Record.Reference(recordID: .init(recordName: "elsewhere"), action: .none)])
            // Stored forms.
            #expect(got.fieldValue(forKey: "int64") == .int64(.min))
            #expect(got.fieldValue(forKey: "stringList") == .stringList(["a", "", "ç"]))
            #expect(got.fieldValue(forKey: "int64List") == .int64List([.max, 0, -1]))
            #expect(got.fieldValue(forKey: "dateList")?.fieldType == .timestampList)
            #expect(got.fieldValue(forKey: "assetList")?.fieldType == .assetList)
            // Assets: the stored copy holds the bytes.
            let asset: Asset? = got["asset"]
            let url = try #require(asset?.fileURL)
            #expect(try Data(contentsOf: url) == assetBytes)
            let assets: [Asset]? = got["assetList"]
            #expect(assets?.map { $0.fileURL.flatMap { try? Data(contentsOf: $0) } } == [assetBytes, Data([0, 1, 2])])
        }
    }

    @Test func anAssetIsACopyThatLaterChangesToTheSourceFileDoNotAffect() async throws {
        let file = try Self.makeFile(Data("v1".utf8))
        defer { try? FileManager.default.removeItem(at: file) }
        let r = Record(recordType: "Doc")
        r["file"] = Asset(fileURL: file)
        try await db.save(r)
        try Data("v2 changed".utf8).write(to: file)
        let fetched = try await db.record(for: r.recordID)
        let asset: Asset? = fetched["file"]
        #expect(try Data(contentsOf: #require(asset?.fileURL)) == Data("v1".utf8))
    }

    @Test(
        arguments: [
            (Int64(42) as any RecordValueProtocol & Sendable, Int64(42)),
            (Int(-7), Int64(-7)),
            (Int32(Int32.max), Int64(Int32.max)),
            (Int16(-300), Int64(-300)),
            (Int8(-8), Int64(-8)),
            (UInt8(200), Int64(200)),
            (UInt32(UInt32.max), Int64(UInt32.max)),
            (true, Int64(1)),
            (false, Int64(0)),
        ] as [(any RecordValueProtocol & Sendable, Int64)])
    func integersAndBooleansAreStoredAsInt64(value: any RecordValueProtocol & Sendable, stored: Int64) async throws {
        let r = Record(recordType: "Numbers")
        r.setObject(value, forKey: "n")
        #expect(r.fieldValue(forKey: "n") == .int64(stored))
        let fetched = try await db.record(for: try await db.save(r).recordID)
        #expect(fetched.fieldValue(forKey: "n") == .int64(stored))
        #expect(fetched.fieldValue(forKey: "n")?.fieldType == .int64)
        let asInt64: Int64? = fetched["n"]
        #expect(asInt64 == stored)
        #expect(fetched["n"] as? Int == Int(stored))
        #expect(fetched["n"] as? Int64 == stored)
        // Numbers never come back as Double when stored as integers.
        #expect(fetched.fieldValue(forKey: "n")?.fieldType != .double)
    }

    @Test func booleansReadBackThroughBoolAndInt() async throws {
        let r = Record(recordType: "Flags")
        r["yes"] = true
        r["no"] = false
        r["flags"] = [true, false, true]
        let fetched = try await db.record(for: try await db.save(r).recordID)
        #expect(fetched["yes"] as? Bool == true)
        #expect(fetched["no"] as? Bool == false)
        #expect(fetched["yes"] as? Int == 1)
        let typed: Bool? = fetched["yes"]
        #expect(typed == true)
        let typedNo: Bool? = fetched["no"]
        #expect(typedNo == false)
        #expect(fetched.fieldValue(forKey: "flags") == .int64List([1, 0, 1]))
        let flags: [Bool]? = fetched["flags"]
        #expect(flags == [true, false, true])
    }

    @Test func floatIsStoredAsDouble() async throws {
        let r = Record(recordType: "Numbers")
        r["f"] = Float(1.5)
        r["fl"] = [Float(0.5), Float(-2)]
        #expect(r.fieldValue(forKey: "f") == .double(1.5))
        #expect(r.fieldValue(forKey: "fl") == .doubleList([0.5, -2]))
        let fetched = try await db.record(for: try await db.save(r).recordID)
        #expect(fetched.fieldValue(forKey: "f") == .double(1.5))
        let d: Double? = fetched["f"]
        #expect(d == 1.5)
        #expect(fetched["f"] as? Double == 1.5)
        #expect(fetched["f"] as? Float == 1.5)
    }

    @Test func intListsAreStoredAsInt64Lists() async throws {
        let r = Record(recordType: "Numbers")
        r["ints"] = [1, 2, 3]
        r["int32s"] = [Int32(-1), Int32(5)]
        #expect(r.fieldValue(forKey: "ints") == .int64List([1, 2, 3]))
        #expect(r.fieldValue(forKey: "int32s") == .int64List([-1, 5]))
        let fetched = try await db.record(for: try await db.save(r).recordID)
        let ints: [Int64]? = fetched["ints"]
        #expect(ints == [1, 2, 3])
        #expect(fetched["ints"] as? [Int] == [1, 2, 3])
    }

    @Test func nsNumberIsStoredByItsKind() {
        let r = Record(recordType: "Numbers")
        r["i"] = NSNumber(value: 5)
        r["d"] = NSNumber(value: 2.5)
        #expect(r.fieldValue(forKey: "i") == .int64(5))
        #expect(r.fieldValue(forKey: "d") == .double(2.5))
    }

    @Test func locationRoundTripsEveryProperty() async throws {
        let location = Location(
            latitude: -33.8688, longitude: 151.2093, altitude: -12.75, horizontalAccuracy: 4.5, verticalAccuracy: 8.25,
            course: 271.5, speed: 13.375, timestamp: Date(timeIntervalSince1970: 1_700_000_000.25))
        let r = Record(recordType: "Place")
        r["where"] = location
        let fetched = try await db.record(for: try await db.save(r).recordID)
        let got = try #require(fetched["where"] as? Location)
        #expect(got.latitude == location.latitude)
        #expect(got.longitude == location.longitude)
        #expect(got.altitude == location.altitude)
        #expect(got.horizontalAccuracy == location.horizontalAccuracy)
        #expect(got.verticalAccuracy == location.verticalAccuracy)
        #expect(got.course == location.course)
        #expect(got.speed == location.speed)
        #expect(got.timestamp == location.timestamp)
        #expect(got == location)
    }

    @Test(arguments: [Record.ReferenceAction.none, .deleteSelf], [false, true])
    func referenceRoundTripsWithItsAction(action: Record.ReferenceAction, customZone: Bool) async throws {
        let zoneID: RecordZone.ID = customZone ? .init(zoneName: "Refs") : .default
        if customZone { try await db.save(RecordZone(zoneID: zoneID)) }
        let target = Record(recordType: "Target", recordID: .init(recordName: "t", zoneID: zoneID))
        let source = Record(recordType: "Source", recordID: .init(recordName: "s", zoneID: zoneID))
        source["to"] = Record.Reference(record: target, action: action)
        _ = try await db.modifyRecords(saving: [target, source], deleting: [])
        let fetched = try await db.record(for: source.recordID)
        let ref = try #require(fetched["to"] as? Record.Reference)
        #expect(ref.recordID == target.recordID)
        #expect(ref.recordID.zoneID == zoneID)
        #expect(ref.action == action)
        #expect(Record.ReferenceAction.none.rawValue == 0)
        #expect(Record.ReferenceAction.deleteSelf.rawValue == 1)
    }

    @Test(arguments: [
        Date(timeIntervalSinceReferenceDate: 0),
        Date(timeIntervalSince1970: 1_234_567_890.123_456_789),
        Date(timeIntervalSinceReferenceDate: -1e9 - 0.000_001),
        Date.distantPast,
        Date.distantFuture,
    ])
    func datesRoundTripExactly(date: Date) async throws {
        let r = Record(recordType: "Event")
        r["at"] = date
        let now = Date()
        r["now"] = now
        let fetched = try await db.record(for: try await db.save(r).recordID)
        #expect(fetched["at"] as? Date == date)
        #expect((fetched["at"] as? Date)?.timeIntervalSinceReferenceDate == date.timeIntervalSinceReferenceDate)
        #expect(fetched["now"] as? Date == now)
    }

    @Test func dataRoundTripsExactly() async throws {
        var generator = SystemRandomNumberGenerator()
        let random = Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let r = Record(recordType: "Blob")
        r["random"] = random
        r["zeros"] = Data(count: 100)
        r["empty"] = Data()
        let fetched = try await db.record(for: try await db.save(r).recordID)
        #expect(fetched["random"] as? Data == random)
        #expect(fetched["zeros"] as? Data == Data(count: 100))
        #expect(fetched.fieldValue(forKey: "empty") == .bytes(Data()))
    }

    @Test func emptyListsAndEmptyStringsRoundTrip() async throws {
        let r = Record(recordType: "Empty")
        r["strings"] = [String]()
        r["ints"] = [Int64]()
        r["doubles"] = [Double]()
        r["dates"] = [Date]()
        r["refs"] = [Record.Reference]()
        r["text"] = ""
        let fetched = try await db.record(for: try await db.save(r).recordID)
        #expect(fetched.fieldValue(forKey: "strings") == .stringList([]))
        #expect(fetched.fieldValue(forKey: "ints") == .int64List([]))
        #expect(fetched.fieldValue(forKey: "doubles") == .doubleList([]))
        #expect(fetched.fieldValue(forKey: "dates") == .dateList([]))
        #expect(fetched.fieldValue(forKey: "refs") == .referenceList([]))
        #expect(fetched.fieldValue(forKey: "text") == .string(""))
        #expect(fetched.allKeys() == ["dates", "doubles", "ints", "refs", "strings", "text"])
    }

    @Test func typedSubscriptReturnsNilForAnotherType() {
        let r = Record(recordType: "Note")
        r["title"] = "x"
        let asInt: Int64? = r["title"]
        #expect(asInt == nil)
        let missing: String? = r["missing"]
        #expect(missing == nil)
        #expect(r.object(forKey: "title") as? String == "x")
        r.setObject(5, forKey: "n")
        #expect(r["n"] as? Int == 5)
    }

    // MARK: - Keys

    @Test func changedKeysAndAllKeysTrackSetsAndRemovals() {
        let r = Record(recordType: "Note")
        r["a"] = "1"
        r["b"] = 2
        r["a"] = "again"
        #expect(r.changedKeys() == ["a", "b"])
        #expect(r.allKeys() == ["a", "b"])
        r["b"] = nil
        #expect(r.allKeys() == ["a"], "a key set to nil holds no value")
        #expect(Set(r.changedKeys()) == ["a", "b"], "a removal is a change")
        #expect(r["b"] == nil)
        // Removing a key that was never set is still a change to send.
        r["c"] = nil
        #expect(r.allKeys() == ["a"])
        #expect(r.changedKeys().contains("c"))
    }

    @Test func savedAndFetchedRecordsHaveNoChangedKeys() async throws {
        let r = Record(recordType: "Note")
        r["title"] = "t"
        r["body"] = "b"
        let saved = try await db.save(r)
        #expect(saved.changedKeys().isEmpty)
        #expect(saved.allKeys() == ["body", "title"])
        let fetched = try await db.record(for: r.recordID)
        #expect(fetched.changedKeys().isEmpty)
        fetched["title"] = "t2"
        #expect(fetched.changedKeys() == ["title"])
        let resaved = try await db.save(fetched)
        #expect(resaved.changedKeys().isEmpty)
        #expect(resaved.allKeys() == ["body", "title"])
    }

    @Test func aKeyRemovedAndSavedIsGoneFromTheStore() async throws {
        let r = Record(recordType: "Note")
        r["title"] = "t"
        r["body"] = "b"
        let saved = try await db.save(r)
        saved["body"] = nil
        let resaved = try await db.save(saved)
        #expect(resaved.allKeys() == ["title"])
        #expect(try await db.record(for: r.recordID).allKeys() == ["title"])
    }

    @Test func copyHasTheSameContentsAndIsIndependent() async throws {
        let parent = Record(recordType: "Folder")
        try await db.save(parent)
        let r = Record(recordType: "Note")
        r["title"] = "t"
        r.setParent(parent)
        let saved = try await db.save(r)
        saved["pending"] = 1
        let copy = saved.copy()
        #expect(copy !== saved)
        #expect(copy.recordType == saved.recordType)
        #expect(copy.recordID == saved.recordID)
        #expect(copy.allKeys() == saved.allKeys())
        #expect(copy.changedKeys() == saved.changedKeys())
        #expect(copy.recordChangeTag == saved.recordChangeTag)
        #expect(copy.creationDate == saved.creationDate)
        #expect(copy.modificationDate == saved.modificationDate)
        #expect(copy.creatorUserRecordID == saved.creatorUserRecordID)
        #expect(copy.parent == saved.parent)
        copy["title"] = "changed in copy"
        saved["other"] = "changed in original"
        #expect(saved["title"] as? String == "t")
        #expect(copy["other"] == nil)
        // The changed keys and the values before the changes are the copy's own too.
        #expect(saved.changedKeys() == ["pending", "other"])
        #expect(copy.changedKeys() == ["pending", "title"])
        // The copy saves like the original would (same tag).
        let resaved = try await db.save(copy)
        #expect(resaved["title"] as? String == "changed in copy")
        #expect(resaved["pending"] as? Int == 1)
    }

    @Test func aChangedFetchedRecordAndItsCopyChangeApart() async throws {
        // A fetched record keeps its changes in a box its copies share until one changes:
        // changed keys, values, the parent's change and the values before the changes are
        // each record's own.
        let r = Record(recordType: "Note")
        r["title"] = "t"
        r["count"] = 1
        try await db.save(r)
        let fetched = try await db.record(for: r.recordID)
        fetched["title"] = "first"
        let copy = fetched.copy()
        copy["count"] = 2
        copy.setParent(Record.ID(recordName: "folder"))
        fetched["title"] = "second"
        #expect(fetched.changedKeys() == ["title"])
        #expect(fetched["title"] as? String == "second")
        #expect(fetched["count"] as? Int == 1)
        #expect(fetched.parent == nil)
        #expect(copy.changedKeys() == ["title", "count"])
        #expect(copy["title"] as? String == "first")
        #expect(copy["count"] as? Int == 2)
        #expect(copy.parent?.recordID.recordName == "folder")
        #expect(copy.recordChangeTag == fetched.recordChangeTag)
        // Another device changes the record: each save then conflicts, and each ancestor is
        // the record as fetched (the values before that record's own changes).
        let other = try await db.record(for: r.recordID)
        other["title"] = "server"
        try await db.save(other)
        for mine in [fetched, copy] {
            let error = try #require(await expectFogError(.serverRecordChanged) { try await db.save(mine) })
            let ancestor = try #require(error.ancestorRecord)
            #expect(ancestor["title"] as? String == "t")
            #expect(ancestor["count"] as? Int == 1)
            #expect(ancestor.parent == nil)
        }
    }

    @Test func allTokensSplitsStringFieldsOnWhitespace() {
        let r = Record(recordType: "Note")
        r["title"] = "hello  world"
        r["tags"] = ["one two", "three"]
        r["n"] = 5
        #expect(Set(r.allTokens()) == ["hello", "world", "one", "two", "three"])
    }

    // MARK: - System fields

    @Test func systemFieldsAreSetOnCreate() async throws {
        let before = Date()
        let r = Record(recordType: "Note")
        r["title"] = "t"
        let saved = try await db.save(r)
        let me = try await store.container.userRecordID()
        let created = try #require(saved.creationDate)
        #expect(saved.modificationDate == created)
        #expect(created >= before.addingTimeInterval(-1))
        #expect(saved.creatorUserRecordID == me)
        #expect(saved.lastModifiedUserRecordID == me)
        #expect(saved.recordChangeTag != nil)
        // The caller's record is not turned into the saved one.
        #expect(r.recordChangeTag == nil)
        // The fetched record agrees with the returned one.
        let fetched = try await db.record(for: r.recordID)
        #expect(fetched.creationDate == saved.creationDate)
        #expect(fetched.modificationDate == saved.modificationDate)
        #expect(fetched.recordChangeTag == saved.recordChangeTag)
        #expect(fetched.creatorUserRecordID == me)
    }

    @Test func anUpdateAdvancesModificationDateAndKeepsCreationDate() async throws {
        let r = Record(recordType: "Note")
        r["title"] = "t"
        let first = try await db.save(r)
        first["title"] = "t2"
        let second = try await db.save(first)
        #expect(second.creationDate == first.creationDate)
        let firstModified = try #require(first.modificationDate)
        let secondModified = try #require(second.modificationDate)
        #expect(secondModified > firstModified)
        #expect(second.creatorUserRecordID == first.creatorUserRecordID)
        #expect(second.recordChangeTag != first.recordChangeTag)
    }

    @Test func recordChangeTagChangesOnEverySave() async throws {
        var current = try await db.save(Record(recordType: "Note"))
        var tags = [try #require(current.recordChangeTag)]
        for i in 0..<5 {
            if i % 2 == 0 { current["n"] = i }  // odd rounds save with no changes
            current = try await db.save(current)
            tags.append(try #require(current.recordChangeTag))
        }
        #expect(Set(tags).count == tags.count, "\(tags)")
        #expect(try await db.record(for: current.recordID).recordChangeTag == tags.last)
    }

    @Test func aRecordMayReferenceTheUserRecord() async throws {
        // User record names start with "_"; referencing them is the usual pattern.
        let me = try await store.container.userRecordID()
        let note = Record(recordType: "Note")
        note["author"] = Record.Reference(recordID: me, action: .none)
        try await db.save(note)
        let fetched = try await db.record(for: note.recordID)
        #expect((fetched["author"] as? Record.Reference)?.recordID == me)
    }

    // MARK: - Parent

    @Test func parentRoundTripsWithActionNoneAndCanBeRemoved() async throws {
        let folder = Record(recordType: "Folder", recordID: .init(recordName: "folder"))
        let other = Record(recordType: "Folder", recordID: .init(recordName: "other"))
        _ = try await db.modifyRecords(saving: [folder, other], deleting: [])

        let note = Record(recordType: "Note")
        note.setParent(folder)
        #expect(note.parent == Record.Reference(recordID: folder.recordID, action: .none))
        let saved = try await db.save(note)
        #expect(saved.parent?.recordID == folder.recordID)
        #expect(saved.parent?.action == Record.ReferenceAction.none)
        #expect(!saved.allKeys().contains("parent"), "the parent is a system field, not a user field")

        // Saving without touching the parent keeps it.
        let fetched = try await db.record(for: note.recordID)
        #expect(fetched.parent?.recordID == folder.recordID)
        fetched["title"] = "edited"
        let edited = try await db.save(fetched)
        #expect(edited.parent?.recordID == folder.recordID)

        // By ID.
        edited.setParent(other.recordID)
        let moved = try await db.save(edited)
        #expect(moved.parent?.recordID == other.recordID)
        #expect(try await db.record(for: note.recordID).parent?.recordID == other.recordID)

        // Removed.
        moved.setParent(nil as Record?)
        #expect(moved.parent == nil)
        let orphan = try await db.save(moved)
        #expect(orphan.parent == nil)
        #expect(try await db.record(for: note.recordID).parent == nil)
    }
}
