import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// An update re-encodes a stored record by copying the bytes of the fields it keeps
/// (``RecordCodec/encode(_:keeping:changes:intern:)``). These tests hold it to the full
/// encoder: the same bytes for the merged values, the same counted size, the same references.
@Suite struct UpdateEncodingTests {
    /// Interns names into a dictionary, as the store's schema would.
    private struct Names {
        var ids: [String: Int64] = [:]
        var names: [Int64: String] = [:]

        mutating func intern(_ name: String) -> Int64 {
            if let id = ids[name] { return id }
            let id = Int64(ids.count + 1)
            ids[name] = id
            names[id] = name
            return id
        }
    }

    private static func record(_ values: [String: FieldValue], sequence: Int64, modifier: String) -> StoredRecord {
        StoredRecord(
            recordType: "Note", recordName: "r1", zone: 3, values: values, parent: sequence.isMultiple(of: 2) ? "p" : nil, share: nil,
            creationDate: Date(timeIntervalSinceReferenceDate: 1_000),
            modificationDate: Date(timeIntervalSinceReferenceDate: Double(sequence)),
            creator: "alice", modifier: modifier, changeSequence: sequence)
    }

    /// The name a stored record was looked up by is its header's name only when the stored
    /// bytes hold it: a name index that points at another record's row (damage) leaves the
    /// header with the stored name, which the update's checks then see.
    @Test func theLookedUpNameIsKeptOnlyWhenTheRecordHoldsIt() throws {
        var names = Names()
        let stored = try RecordCodec.encode(Self.record(["a": .int64(1)], sequence: 5, modifier: "alice")) { names.intern($0) }
        for (lookedUp, expected) in [("r1", "r1"), ("r2", "r1"), ("r10", "r1"), ("", "r1"), ("R1", "r1")] {
            let old = try stored.withUnsafeBytes { buffer in
                try EncodedRecord(row: 9, buffer, lookedUp: lookedUp) { id in try #require(names.names[id]) }
            }
            #expect(old.header.recordName == expected, "looked up as \(lookedUp.debugDescription)")
        }
        let empty = StoredRecord(
            recordType: "Note", recordName: "", zone: 3, values: [:], parent: nil, share: nil,
            creationDate: Date(timeIntervalSinceReferenceDate: 0), modificationDate: Date(timeIntervalSinceReferenceDate: 0),
            creator: "alice", modifier: "alice", changeSequence: 1)
        let unnamed = try RecordCodec.encode(empty) { names.intern($0) }
        for lookedUp in ["", "x"] {
            let old = try unnamed.withUnsafeBytes { buffer in
                try EncodedRecord(row: 9, buffer, lookedUp: lookedUp) { id in try #require(names.names[id]) }
            }
            #expect(old.header.recordName == "")
        }
    }

    @Test func keepingFieldsGivesTheBytesOfAFullEncoding() throws {
        var rng = SplitMix64(seed: 41)
        for _ in 0..<2_000 {
            var names = Names()
            var values: [String: FieldValue] = [:]
            for _ in 0..<rng.int(0...7) {
                var value = RandomFieldValues.value(&rng, scale: 8)
                // Some references cascade, so that the record has `deleteSelf` targets.
                if case .reference(let r) = value, rng.int(0...1) == 0 {
                    value = .reference(Record.Reference(recordID: r.recordID, action: .deleteSelf))
                }
                values["f\(rng.int(0...9))"] = value
            }
            let stored = try RecordCodec.encode(Self.record(values, sequence: 5, modifier: "alice")) { names.intern($0) }
            let old = try stored.withUnsafeBytes { buffer in
                try EncodedRecord(row: 9, buffer) { id in try #require(names.names[id]) }
            }
            #expect(try old.decoded().values == values)

            // Some keys written: new values, removals (also of absent keys), rewrites of a value.
            var changes = FieldChanges()
            for _ in 0..<rng.int(0...4) {
                let key = "f\(rng.int(0...11))"
                changes.set(key, rng.int(0...3) == 0 ? nil : RandomFieldValues.value(&rng, scale: 8))
            }
            var merged = values
            for (key, value) in changes.entries { merged[key] = value }

            let next = Self.record([:], sequence: 6, modifier: "bob")
            let patched = try RecordCodec.encode(next, keeping: old, changes: changes) { names.intern($0) }
            var full = next
            full.values = merged
            #expect(patched == (try RecordCodec.encode(full) { names.intern($0) }))

            var written: [String: FieldValue] = [:]
            for case (let key, let value?) in changes.entries { written[key] = value }
            #expect(
                old.countedSize(keptBeside: changes) + RecordCodec.countedSize(of: written) == RecordCodec.countedSize(of: merged))
            #expect(try old.referenceValues().deleteSelfTargets == values.deleteSelfTargets)
        }
    }
}
