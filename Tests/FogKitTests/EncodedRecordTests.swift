import FogKitTesting
import Foundation
import Synchronization
import Testing

@testable import FogKit

/// Fetched records keep their encoded fields and decode a field when it is read; query
/// candidates are tested on the encoded bytes in place. These tests hold that path to the
/// decoded one: the same values, and corrupt bytes refused up front with a typed error,
/// never discovered when a field is read.
@Suite struct EncodedRecordTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    private static func encoded(_ values: [String: FieldValue], names: inout [String: Int64]) throws -> [UInt8] {
        let record = StoredRecord(
            recordType: "Note", recordName: "r1", zone: 3, values: values, parent: nil, share: nil, creationDate: Date(),
            modificationDate: Date(), creator: "alice", modifier: "alice", changeSequence: 7)
        return try RecordCodec.encode(record) { name in
            if let id = names[name] { return id }
            names[name] = Int64(names.count + 1)
            return Int64(names.count)
        }
    }

    /// A payload that passes the check decodes: what makes decoding on read safe.
    @Test func everyPayloadThatPassesTheCheckDecodes() {
        var rng = SplitMix64(seed: 21)
        for _ in 0..<4_000 {
            let value = RandomFieldValues.value(&rng, scale: 12)
            var bytes = RandomFieldValues.payload(value)
            // The intact payload passes and decodes to the value.
            bytes.withUnsafeBytes { buffer in
                #expect((try? RecordCodec.checkPayload(buffer, type: value.fieldType)) != nil)
                #expect((try? RecordCodec.decodePayload(buffer, type: value.fieldType)) == value)
            }
            // Damaged: truncated, extended or with a byte changed.
            switch rng.int(0...2) {
            case 0: if !bytes.isEmpty { bytes.removeLast(rng.int(1...bytes.count)) }
            case 1: bytes.append(UInt8(truncatingIfNeeded: rng.next()))
            default: if !bytes.isEmpty { bytes[rng.int(0...bytes.count - 1)] = UInt8(truncatingIfNeeded: rng.next()) }
            }
            bytes.withUnsafeBytes { buffer in
                if (try? RecordCodec.checkPayload(buffer, type: value.fieldType)) != nil {
                    #expect((try? RecordCodec.decodePayload(buffer, type: value.fieldType)) != nil, "\(value.fieldType) \(bytes)")
                }
            }
        }
    }

    /// A view reads the same fields the decoder does; a damaged record is refused whole.
    @Test func viewsReadWhatTheDecoderReadsAndRefuseDamage() throws {
        var rng = SplitMix64(seed: 22)
        for _ in 0..<1_500 {
            var values: [String: FieldValue] = [:]
            for i in 0..<rng.int(0...6) { values["f\(i)"] = RandomFieldValues.value(&rng, scale: 12) }
            var names: [String: Int64] = [:]
            var bytes = try Self.encoded(values, names: &names)
            try bytes.withUnsafeBytes { buffer in
                let view = try RecordView(buffer, checking: .all)
                #expect(view.recordName == "r1" && view.zone == 3 && view.changeSequence == 7 && view.count == values.count)
                for (key, value) in values { #expect(view.value(of: names[key]!) == value) }
            }
            if !bytes.isEmpty {
                if rng.chance(0.5) {
                    bytes.removeLast(rng.int(1...min(bytes.count, 20)))
                } else {
                    bytes[rng.int(0...bytes.count - 1)] = UInt8(truncatingIfNeeded: rng.next())
                }
            }
            bytes.withUnsafeBytes { buffer in
                guard let view = try? RecordView(buffer, checking: .all) else { return }
                // Whatever passes must read without failing.
                RecordView.forEachField(buffer, count: view.count, tableStart: view.tableStart, payloadStart: view.payloadStart) {
                    id, _, _ in
                    #expect(view.value(of: id) != nil)
                    return true
                }
            }
        }
    }

    /// The fast parse accepts exactly what the checking parse accepts, for any selection of
    /// fields to check, and reads the same layout: intact and damaged records of every field
    /// type `RandomFieldValues` makes (all but assets, whose payloads take the same path as
    /// references and locations), fixed-size and structured payloads in any order.
    @Test func theFastParseAcceptsWhatTheCheckingParseAccepts() throws {
        var rng = SplitMix64(seed: 23)
        var accepted = 0, refused = 0
        for _ in 0..<3_000 {
            var values: [String: FieldValue] = [:]
            for i in 0..<rng.int(0...7) { values["f\(i)"] = RandomFieldValues.value(&rng, scale: 8) }
            var names: [String: Int64] = [:]
            var bytes = try Self.encoded(values, names: &names)
            switch rng.int(0...3) {
            case 0: break
            case 1: bytes.removeLast(rng.int(1...min(bytes.count, 24)))
            case 2: bytes.append(contentsOf: (0..<rng.int(1...4)).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            default:
                for _ in 0..<rng.int(1...3) { bytes[rng.int(0...bytes.count - 1)] = UInt8(truncatingIfNeeded: rng.next()) }
            }
            let ids = Array(names.values)
            let selections: [FieldSelection] = [
                .all, FieldSelection(ids: []), FieldSelection(ids: ids.filter { _ in rng.chance(0.5) }),
            ]
            bytes.withUnsafeBytes { buffer in
                for selection in selections {
                    let fast = RecordView.parsed(buffer, checking: selection)
                    let checked = try? RecordView(checkedParseOf: buffer, checking: selection)
                    #expect((fast != nil) == (checked != nil), "\(bytes) checking \(selection.ids.map { "\($0)" } ?? "all")")
                    if let fast, let checked {
                        accepted += 1
                        #expect(fast.count == checked.count && fast.tableStart == checked.tableStart)
                        #expect(fast.payloadStart == checked.payloadStart && fast.fieldsStart == checked.fieldsStart)
                        #expect(fast.nameRange == checked.nameRange && fast.changeSequence == checked.changeSequence)
                    } else {
                        refused += 1
                    }
                }
            }
        }
        // Both outcomes occur often enough for the comparison to mean something.
        #expect(accepted > 1_000 && refused > 1_000, "accepted \(accepted), refused \(refused)")
    }

    /// A view checks the payloads of the fields it is asked to: a damaged field fails a view
    /// that reads it, and only such a view.
    @Test func viewsCheckTheFieldsTheyRead() throws {
        var names: [String: Int64] = [:]
        var bytes = try Self.encoded(["a": .int64(1), "b": .stringList(["x", "y"])], names: &names)
        // "b" is the last payload: 02 01 78 01 79. Claim 127 elements.
        bytes[bytes.count - 5] = 0x7F
        try bytes.withUnsafeBytes { buffer in
            let onlyA = try RecordView(buffer, checking: FieldSelection(ids: [names["a"]!]))
            #expect(onlyA.value(of: names["a"]!) == .int64(1))
            #expect(onlyA.checked.covers(FieldSelection(ids: [names["a"]!])) && !onlyA.checked.covers(.all))
            #expect(throws: FormatError.self) { try RecordView(buffer, checking: .all) }
            #expect(throws: FormatError.self) { try RecordView(buffer, checking: FieldSelection(ids: [names["b"]!])) }
        }
    }

    /// Damaged UTF-8 is compared as the decoder repairs it, by every condition alike: the
    /// in-place comparison leaves non-ASCII bytes to the decoding path.
    @Test func damagedTextComparesAsDecoded() throws {
        var names: [String: Int64] = [:]
        var bytes = try Self.encoded(["s": .string("ab")], names: &names)
        bytes[bytes.count - 1] = 0xFF
        try bytes.withUnsafeBytes { buffer in
            let fields = ViewFields(
                view: try RecordView(buffer, checking: .all), ids: FieldIDs(["s": names["s"]!]), creator: nil, modifier: nil)
            #expect(fields.compareString(forKey: "s", with: "a") == nil)
            #expect(fields.value(forKey: "s") == .string("a\u{FFFD}"))
        }
    }

    /// Records fetched, queried and read from the change feed hold exactly what was saved,
    /// also with desired keys.
    @Test func fetchedRecordsHoldWhatWasSaved() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        var rng = SplitMix64(seed: 23)
        var saved: [Record.ID: [String: FieldValue]] = [:]
        for batch in 0..<4 {
            var records: [Record] = []
            for i in 0..<50 {
                let record = Record(recordType: "Item", recordID: Record.ID(recordName: "r\(batch)-\(i)", zoneID: zone))
                var values: [String: FieldValue] = [:]
                // Named by type: one type per field name, as the schema requires.
                for _ in 0..<rng.int(0...5) {
                    let value = RandomFieldValues.value(&rng, scale: 12).resolvedForTest(zone)
                    values["k\(value.fieldType.rawValue)"] = value
                }
                for (key, value) in values { record.setFieldValue(value, forKey: key) }
                saved[record.recordID] = values
                records.append(record)
            }
            _ = try await db.modifyRecords(saving: records, deleting: [])
        }
        let ids = Array(saved.keys)
        let fetched = try await db.records(for: ids)
        for id in ids {
            let record = try fetched[id]!.get()
            #expect(Set(record.allKeys()) == Set(saved[id]!.keys))
            for (key, value) in saved[id]! { #expect(record.fieldValue(forKey: key) == value, "\(id.recordName).\(key)") }
        }
        // Desired keys: only those fields, with their values, in a fetch and in a query. Random
        // selections over every type's key (and names never saved), so that the projected copy
        // takes fields from every place of a record's table: first, last, between, and all of
        // them (the whole copy). (No assets here: `desiredKeysLimitWhatRecordsKeep` has them.)
        let allKeys = (0...0x1A).map { "k\($0)" }
        for _ in 0..<12 {
            let desired = allKeys.filter { _ in rng.chance(0.3) }
            let some = try await db.records(for: ids, desiredKeys: desired)
            for id in ids {
                let record = try some[id]!.get()
                let kept = Set(saved[id]!.keys).intersection(desired)
                #expect(Set(record.allKeys()) == kept, "\(id.recordName) desiring \(desired)")
                for key in kept { #expect(record.fieldValue(forKey: key) == saved[id]![key], "\(id.recordName).\(key)") }
            }
        }
        var (matches, next) = try await db.records(
            matching: Query(recordType: "Item", predicate: QueryPredicate(value: true)), inZoneWith: zone, desiredKeys: ["k2"],
            resultsLimit: 33)
        var seen = 0
        while true {
            for (id, result) in matches {
                let record = try result.get()
                #expect(record.fieldValue(forKey: "k2") == saved[id]!["k2"])
                #expect(record.allKeys() == (saved[id]!["k2"] == nil ? [] : ["k2"]))
                seen += 1
            }
            guard let cursor = next else { break }
            (matches, next) = try await db.records(continuingMatchFrom: cursor, desiredKeys: ["k2"], resultsLimit: 33)
        }
        #expect(seen == saved.count)
    }

    /// Desired keys limit what a fetched record keeps, not only what it shows: a large field
    /// left out takes no memory. Assets read twice are the same instance, as in CloudKit.
    @Test func desiredKeysLimitWhatRecordsKeep() async throws {
        let record = Record(recordType: "Doc", recordID: Record.ID(recordName: "d"))
        record["title"] = "t"
        record["blob"] = Data(count: 600_000)
        let file = store.directory.appendingPathComponent("a.bin")
        try Data("asset".utf8).write(to: file)
        record["file"] = Asset(fileURL: file)
        try await db.save(record)
        for fetched in [
            try await db.records(for: [record.recordID], desiredKeys: ["title"])[record.recordID]!.get(),
            try await db.records(matching: Query(recordType: "Doc", predicate: QueryPredicate(value: true)), desiredKeys: ["title"])
                .matchResults[0].1.get(),
        ] {
            #expect(fetched.allKeys() == ["title"] && fetched["title"] as? String == "t")
            #expect((fetched.state.withLock { $0.encoded?.byteCount } ?? 0) < 100)
        }
        let whole = try await db.record(for: record.recordID)
        #expect((whole["blob"] as? Data)?.count == 600_000)
        let a = try #require(whole["file"] as? Asset), b = try #require(whole["file"] as? Asset)
        #expect(a === b)
        // A selected asset comes through the projected copy: decoded once, its file readable.
        let projected = try await db.records(for: [record.recordID], desiredKeys: ["file", "title"])[record.recordID]!.get()
        #expect(projected.allKeys() == ["file", "title"])
        let c = try #require(projected["file"] as? Asset), d = try #require(projected["file"] as? Asset)
        #expect(c === d)
        #expect(try Data(contentsOf: try #require(c.fileURL)) == Data("asset".utf8))
    }

    /// Changing a fetched record works as on any record: the changed key is recorded, the
    /// other fields stay, and reverting for a conflict restores what was fetched.
    @Test func aFetchedRecordChangesLikeAnyOther() async throws {
        let note = Record(recordType: "Note", recordID: Record.ID(recordName: "n"))
        note["title"] = "a"
        note["count"] = 1
        note["tags"] = ["x", "y"]
        try await db.save(note)
        let fetched = try await db.record(for: note.recordID)
        #expect(fetched.changedKeys().isEmpty)
        let copy = fetched.copy()
        fetched["title"] = "b"
        #expect(fetched.changedKeys() == ["title"])
        #expect(fetched["title"] as? String == "b" && fetched["count"] as? Int == 1 && fetched["tags"] as? [String] == ["x", "y"])
        #expect(copy["title"] as? String == "a" && copy.allKeys() == ["count", "tags", "title"])
        fetched["count"] = nil
        #expect(fetched.allKeys() == ["tags", "title"])
        let saved = try await db.save(fetched)
        #expect(saved["title"] as? String == "b" && saved["count"] == nil)
        // The tag of the fetched record is the one the store gave it.
        #expect(fetched.recordChangeTag == copy.recordChangeTag && saved.recordChangeTag != copy.recordChangeTag)
    }
}

extension FieldValue {
    /// The value with its references in `zone` (references never leave their zone).
    fileprivate func resolvedForTest(_ zone: RecordZone.ID) -> FieldValue {
        switch self {
        case .reference(let r):
            .reference(Record.Reference(recordID: Record.ID(recordName: r.recordID.recordName, zoneID: zone), action: r.action))
        case .referenceList(let l):
            .referenceList(
                l.map { Record.Reference(recordID: Record.ID(recordName: $0.recordID.recordName, zoneID: zone), action: $0.action) })
        default: self
        }
    }
}
