import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// The shortcuts of the read path (issue 14) give what the plain path gives: keys built on
/// the stack are the tuple layer's bytes, and fetches that share a name table across
/// requests read every record's own fields, whatever names earlier fetches saw.
@Suite struct ReadPathTests {
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    @Test func keysOnTheStackAreTheTupleKeys() throws {
        let names = ["", "a", "r-1", String(repeating: "x", count: 36), "é\u{301}", "zero\u{0}byte", String(repeating: "long", count: 80)]
        for zone in [Int64.min, -1, 0, 1, 127, 128, 255, 256, 65_535, 1 << 40, .max] {
            for name in names {
                let stack = try Layout.withNameKey(zone: zone, recordName: name) { Array($0) }
                #expect(stack == Layout.nameKey(zone: zone, recordName: name), "zone \(zone), name \(name.debugDescription)")
                for owner in ["", "_0123456789abcdef0123456789abcdef", "a\u{0}"] {
                    let scope = Int(truncatingIfNeeded: zone)
                    let zoneKey = try Layout.withZoneKey(scope: scope, owner: owner, zoneName: name) { Array($0) }
                    #expect(zoneKey == Layout.zoneKey(scope: scope, owner: owner, zoneName: name), "scope \(scope), \(owner), \(name)")
                }
            }
        }
    }

    /// Records with different sets of fields, fetched one at a time, then together, in two
    /// zones: each sees its own fields, including names the previous fetch never saw.
    @Test func fetchesThatShareNameTablesReadTheirOwnFields() async throws {
        let zoneA = try await db.save(RecordZone(zoneName: "A")).zoneID
        let zoneB = try await db.save(RecordZone(zoneName: "B")).zoneID
        var expected: [Record.ID: [String: FieldValue]] = [:]
        var records: [Record] = []
        for (i, fields) in [["x", "y"], ["x", "z"], ["w"], [], ["y", "x", "z", "w"]].enumerated() {
            for zone in [zoneA, zoneB] {
                let record = Record(recordType: "Item", recordID: Record.ID(recordName: "r\(i)", zoneID: zone))
                var values: [String: FieldValue] = [:]
                for (j, field) in fields.enumerated() { values[field] = .string("\(zone.zoneName)-\(i)-\(j)") }
                for (key, value) in values { record.setFieldValue(value, forKey: key) }
                expected[record.recordID] = values
                records.append(record)
            }
        }
        _ = try await db.modifyRecords(saving: records, deleting: [])
        func check(_ record: Record) {
            let values = expected[record.recordID]!
            #expect(Set(record.allKeys()) == Set(values.keys), "\(record.recordID)")
            for key in ["w", "x", "y", "z"] { #expect(record.fieldValue(forKey: key) == values[key], "\(record.recordID).\(key)") }
        }
        let ids = records.map(\.recordID)
        for id in ids + ids.reversed() { check(try await db.record(for: id)) }
        for result in try await db.records(for: ids).values { check(try result.get()) }
        for id in ids { check(try await db.record(for: id)) }
        // Desired keys never share a table with fetches of every field.
        for id in ids {
            let some = try await db.records(for: [id], desiredKeys: ["x"])[id]!.get()
            #expect(some.allKeys() == (expected[id]!["x"] == nil ? [] : ["x"]))
            #expect(some.fieldValue(forKey: "y") == nil)
            check(try await db.record(for: id))
        }
    }

    /// Fetches by ID take a row hint only when the record at that row is the one asked for in
    /// the fetch's snapshot: hints pointing at other records (of the same name in another
    /// zone, of other names), at deleted rows or at rows past the end change no result.
    /// A fetch takes the zone the previous fetch read only while no commit came between:
    /// a zone deleted, created again or changed is read again, in every order of fetches.
    @Test func theLastZoneReadIsKeptForItsSnapshotOnly() async throws {
        let zone = RecordZone.ID(zoneName: "Kept")
        let other = RecordZone.ID(zoneName: "Other")
        _ = try await db.modifyRecordZones(saving: [RecordZone(zoneID: zone), RecordZone(zoneID: other)], deleting: [])
        let id = Record.ID(recordName: "r", zoneID: zone)
        let record = Record(recordType: "Item", recordID: id)
        record["v"] = "first"
        _ = try await db.save(record)
        #expect(try await db.record(for: id)["v"] as? String == "first")
        #expect(try await db.record(for: id)["v"] as? String == "first")
        // Deleted: the next fetch reads the zone again and finds none.
        _ = try await db.deleteRecordZone(withID: zone)
        let deleted = await #expect(throws: FogError.self) { try await db.record(for: id) }
        #expect(deleted?.code == .zoneNotFound)
        // Created again (a new zone id): the old record is not in it.
        _ = try await db.save(RecordZone(zoneID: zone))
        let missing = await #expect(throws: FogError.self) { try await db.record(for: id) }
        #expect(missing?.code == .unknownItem)
        let again = Record(recordType: "Item", recordID: id)
        again["v"] = "second"
        _ = try await db.save(again)
        // Alternating zones in one snapshot and across snapshots.
        let otherID = Record.ID(recordName: "o", zoneID: other)
        let otherRecord = Record(recordType: "Item", recordID: otherID)
        otherRecord["v"] = "other"
        _ = try await db.save(otherRecord)
        for _ in 0..<3 {
            #expect(try await db.record(for: id)["v"] as? String == "second")
            #expect(try await db.record(for: otherID)["v"] as? String == "other")
        }
        // Another container of the same user deletes the zone.
        let elsewhere = try store.container(user: "alice")
        _ = try await elsewhere.privateCloudDatabase.deleteRecordZone(withID: other)
        let gone = await #expect(throws: FogError.self) { try await db.record(for: otherID) }
        #expect(gone?.code == .zoneNotFound)
    }

    @Test func rowHintsAreCheckedAgainstTheSnapshot() async throws {
        let zoneA = try await db.save(RecordZone(zoneName: "A")).zoneID
        let zoneB = try await db.save(RecordZone(zoneName: "B")).zoneID
        var records: [Record] = []
        for i in 0..<12 {
            for zone in [zoneA, zoneB] {
                let record = Record(recordType: "Item", recordID: Record.ID(recordName: "r\(i)", zoneID: zone))
                record["v"] = "\(zone.zoneName)-\(i)"
                records.append(record)
            }
        }
        _ = try await db.modifyRecords(saving: records, deleting: [])
        let ids = records.map(\.recordID)
        let hints = db.engine.records.rowHints
        func poison(_ offset: Int64) {
            // Zone ids are small integers: every (zone, name) pair a fetch can ask for.
            for zone in Int64(0)..<64 {
                for (k, id) in ids.enumerated() {
                    hints.remember((Int64(k) + offset) % 80, for: RowHints.hash(zone: zone, name: id.recordName))
                }
            }
        }
        for offset in Int64(0)..<6 {
            poison(offset)
            for id in ids {
                let record = try await db.record(for: id)
                #expect(record["v"] as? String == "\(id.zoneID.zoneName)-\(id.recordName.dropFirst())")
            }
            poison(offset + 7)
            let results = try await db.records(for: ids)
            for id in ids { #expect(try results[id]?.get()["v"] as? String == "\(id.zoneID.zoneName)-\(id.recordName.dropFirst())") }
        }
        // A deleted record is gone whatever its hint says; saved again, it is the new record.
        let gone = ids[3]
        _ = try await db.deleteRecord(withID: gone)
        await #expect(throws: FogError.self) { try await db.record(for: gone) }
        let again = Record(recordType: "Item", recordID: gone)
        again["v"] = "again"
        _ = try await db.save(again)
        poison(0)
        #expect(try await db.record(for: gone)["v"] as? String == "again")
        #expect(try await db.records(for: [gone])[gone]?.get()["v"] as? String == "again")
    }
}
