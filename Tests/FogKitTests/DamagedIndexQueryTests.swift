import FogKitTesting
import FogStorage
import Foundation
import Testing

@testable import FogKit

/// A sorted query over an index entry that its record does not back (a damaged store) ends
/// with an error instead of handing out cursors that repeat one batch for ever.
/// `DamagedStoreTests` found it: `fog query --all` ran without end on a copy with a flipped byte.
@Suite struct DamagedIndexQueryTests {
    @Test func anIndexEntryItsRecordDoesNotBackEndsTheQueryInsteadOfRepeatingIt() async throws {
        let store = try TestStore()
        let db = store.privateDatabase
        let zone = try await db.save(RecordZone(zoneName: "Items")).zoneID
        let records = (0..<60).map { i in
            let record = Record(recordType: "Item", recordID: Record.ID(recordName: "item-\(i)", zoneID: zone))
            record["n"] = Int64(i)
            return record
        }
        _ = try await db.modifyRecords(saving: records, deleting: [])
        let query = Query(recordType: "Item", predicate: try QueryPredicate(format: "n >= %@", Int64(40)))
        query.sortDescriptors = [Query.SortDescriptor(key: "n")]
        // Sound: the batches follow each other to the end.
        var names: [String] = []
        var (matches, cursor) = try await db.records(matching: query, inZoneWith: zone, resultsLimit: 11)
        names += matches.map(\.0.recordName)
        while let next = cursor {
            (matches, cursor) = try await db.records(continuingMatchFrom: next, resultsLimit: 11)
            names += matches.map(\.0.recordName)
        }
        #expect(names == (40..<60).map { "item-\($0)" })

        // The damage: item-1 (n = 1) also filed under n = 50, as a flipped byte could file it.
        let engine = store.admin.engine
        let (zoneKey, type, field, row) = try engine.indexes.read { txn, names -> (Int64, Int64, Int64, Int64) in
            var zones: [Int64] = []
            try txn.scan(engine.indexes.zoneIDTable) { key, _ in
                zones.append(try readBigEndianKey(key))
                return true
            }
            for zoneKey in zones {
                if let row = try engine.records.rowID(zone: zoneKey, name: "item-1", in: txn) {
                    return (zoneKey, try #require(try names.id("Item")), try #require(try names.id("n")), row)
                }
            }
            throw FormatError(message: "item-1 has no row")
        }
        try engine.core.writeAndWait { txn, _ in
            _ = try txn.addValue(
                bigEndianKey(row), forKey: Layout.valuePrefix(zone: zoneKey, type: type, field: field) + IndexValue.int(50).encoded,
                in: engine.indexes.indexTable, appending: false)
        }

        // The first batch ends with item-1 (under 50, before item-50's row); its position is
        // item-1's own value, before the range: continuing from it used to give the same batch.
        (matches, cursor) = try await db.records(matching: query, inZoneWith: zone, resultsLimit: 11)
        #expect(matches.last?.0.recordName == "item-1")
        let next = try #require(cursor)
        let error = await #expect(throws: FogError.self) { try await db.records(continuingMatchFrom: next, resultsLimit: 11) }
        #expect(error?.code == .internalError)
        #expect(error?.localizedDescription.contains("disagree") == true, "\(String(describing: error))")
    }
}
