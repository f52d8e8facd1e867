import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// A record the store returns keeps its system fields as stored and decodes them when read
/// (`StoredSystemFields`), its users' names from the request's name table; that table finds
/// field ids below 64 by a bit set and the others, like names past its first 16, by a scan or
/// a dictionary. These tests hold each path to what the saves returned.
@Suite struct StoredSystemFieldsTests {
    /// The system fields a record shows, for comparing two records.
    private struct SystemFields: Equatable {
        var tag: String?
        var created: Date?
        var modified: Date?
        var creator: String?
        var modifier: String?

        init(_ record: Record) {
            tag = record.recordChangeTag
            created = record.creationDate
            modified = record.modificationDate
            creator = record.creatorUserRecordID?.recordName
            modifier = record.lastModifiedUserRecordID?.recordName
        }
    }

    /// Twenty users each create a record in the public database and the next user changes
    /// it, so that the records of one request have more creators and modifiers than a name
    /// table scans. Fetches one by one and together, a query, copies and archives all show
    /// what the last save returned.
    @Test func returnedRecordsShowTheirSavedSystemFields() async throws {
        let store = try TestStore(user: "u0")
        try await store.admin.importSchema(
            try Schema(
                parsing: """
                    DEFINE SCHEMA RECORD TYPE Note (
                        text STRING QUERYABLE,
                        GRANT CREATE TO "_icloud", GRANT WRITE TO "_icloud", GRANT READ TO "_world"
                    );
                    """))
        let users = try (0..<20).map { try store.container(user: "u\($0)").publicCloudDatabase }
        var saved: [Record.ID: Record] = [:]
        for (i, db) in users.enumerated() {
            let note = Record(recordType: "Note", recordID: Record.ID(recordName: "note-\(i)"))
            note["text"] = "by u\(i)"
            let created = try await db.save(note)
            // Every other note is changed by the next user: its modifier is not its creator.
            if i % 2 == 0 {
                created["text"] = "changed by u\((i + 1) % 20)"
                saved[note.recordID] = try await users[(i + 1) % 20].save(created)
            } else {
                saved[note.recordID] = created
            }
        }
        let ids = saved.keys.sorted { $0.recordName < $1.recordName }
        let reader = try store.container(user: "reader").publicCloudDatabase
        func check(_ record: Record, _ how: String) {
            let expected = saved[record.recordID]!
            #expect(SystemFields(record) == SystemFields(expected), "\(record.recordID.recordName), \(how)")
        }
        for id in ids { check(try await reader.record(for: id), "fetched alone") }
        for (_, result) in try await reader.records(for: ids) { check(try result.get(), "fetched together") }
        var (matches, cursor) = try await reader.records(
            matching: Query(recordType: "Note", predicate: QueryPredicate(value: true)), desiredKeys: ["text"], resultsLimit: 7)
        var seen = 0
        while true {
            for (_, result) in matches {
                let record = try result.get()
                check(record, "queried")
                check(record.copy(), "a copy")
                let restored = try Record(systemFieldsData: record.systemFieldsData())
                check(restored, "restored from its archive")
                seen += 1
            }
            guard let next = cursor else { break }
            (matches, cursor) = try await reader.records(continuingMatchFrom: next, desiredKeys: ["text"], resultsLimit: 7)
        }
        #expect(seen == ids.count)
        // The creator and the last modifier differ where another user changed the note.
        let changed = try await reader.record(for: ids[0])
        #expect(changed.creatorUserRecordID?.recordName != changed.lastModifiedUserRecordID?.recordName)
    }

    /// A fetched record keeps its tag while its fields change and are reverted; saving it
    /// with the default policy compares that tag, and the saved record has a new one.
    @Test func aChangedFetchedRecordKeepsItsTag() async throws {
        let store = try TestStore()
        let db = store.privateDatabase
        let note = Record(recordType: "Note", recordID: Record.ID(recordName: "n"))
        note["text"] = "a"
        let first = try await db.save(note)
        let fetched = try await db.record(for: note.recordID)
        let stale = try await db.record(for: note.recordID)
        fetched["text"] = "b"
        #expect(fetched.recordChangeTag == first.recordChangeTag && fetched.creationDate == first.creationDate)
        let second = try await db.save(fetched)
        #expect(second.recordChangeTag != first.recordChangeTag && second.creationDate == first.creationDate)
        // The stale copy's tag is the first one: the default policy refuses it.
        stale["text"] = "c"
        await #expect(throws: FogError.self) { try await db.save(stale) }
        #expect(try await db.record(for: note.recordID)["text"] as? String == "b")
        #expect(fetched.description.contains("tag=\(first.recordChangeTag!)"))
    }

    /// Records whose fields have name ids below 64 and above, and more than 16 names in one
    /// request's table, read back every field they hold and no other, fetched with every field
    /// and with desired keys, one by one, together and in a query.
    @Test func namesPastTheBitSetAndTheScanAreFound() async throws {
        let store = try TestStore()
        let db = store.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        // Seventy field names: the store's first names (the type, the zone, the user) and
        // these fill the ids up to past 64.
        let keys = (0..<70).map { "f\($0)" }
        var random = SplitMix64(seed: 0x64)
        var saved: [Record.ID: [String: FieldValue]] = [:]
        var records: [Record] = []
        for i in 0..<60 {
            let record = Record(recordType: "Wide", recordID: Record.ID(recordName: "w\(i)", zoneID: zone))
            var values: [String: FieldValue] = [:]
            for key in keys where random.chance(0.4) { values[key] = .int64(Int64(i * 100 + (Int(key.dropFirst()) ?? 0))) }
            for (key, value) in values { record.setFieldValue(value, forKey: key) }
            saved[record.recordID] = values
            records.append(record)
        }
        _ = try await db.modifyRecords(saving: records, deleting: [])
        let ids = records.map(\.recordID)
        func check(_ record: Record, desired: Set<String>?, _ how: String) {
            let values = saved[record.recordID]!.filter { desired?.contains($0.key) ?? true }
            #expect(Set(record.allKeys()) == Set(values.keys), "\(record.recordID.recordName), \(how)")
            for key in keys { #expect(record.fieldValue(forKey: key) == values[key], "\(record.recordID.recordName).\(key), \(how)") }
        }
        for id in ids { check(try await db.record(for: id), desired: nil, "fetched alone") }
        for (_, result) in try await db.records(for: ids) { check(try result.get(), desired: nil, "fetched together") }
        for _ in 0..<4 {
            let desired = Set(keys.filter { _ in random.chance(0.3) })
            for (_, result) in try await db.records(for: ids, desiredKeys: Array(desired)) {
                check(try result.get(), desired: desired, "fetched with desired keys")
            }
            let (matches, _) = try await db.records(
                matching: Query(recordType: "Wide", predicate: QueryPredicate(value: true)), inZoneWith: zone,
                desiredKeys: Array(desired), resultsLimit: 100)
            #expect(matches.count == ids.count)
            for (_, result) in matches { check(try result.get(), desired: desired, "queried with desired keys") }
        }
    }
}
