// Fuzzes the stored-record reader, `RecordView`, on arbitrary bytes: parsing and checking,
// then everything a query or fetch reads from a view (field payloads, predicates' values,
// the client record built from it). Damaged bytes must throw, never crash.

import Foundation

@testable import FogKit

@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
)
    -> CInt
{
    writeSeedsIfAsked(Fixture.shared.storedRecords())
    _ = Fixture.shared
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = input(data, size)
    let fixture = Fixture.shared
    try? fixture.engine.read { _, names in
        var ids: [String: Int64] = [:]
        for name in ["n", "title", "tags", "place", "when", "owner", "blob"] {
            if let id = try names.id(name) { ids[name] = id }
        }
        let some = FieldSelection(ids: Array(ids.values.prefix(3)))
        for selection in [FieldSelection.all, FieldSelection(ids: []), some] {
            guard let view = try? RecordView(buffer, checking: selection) else { continue }
            _ = view.recordName
            // What predicates and order keys read: any field, checked or not.
            let fields = ViewFields(view: view, ids: FieldIDs(ids), creator: "alice", modifier: nil)
            for key in ids.keys { _ = fields.value(forKey: key) }
            _ = fields.compareString(forKey: "title", with: "item")
            _ = fields.values(named: nil)
            for key in [Record.SystemFieldKey.recordID, Record.SystemFieldKey.parent, Record.SystemFieldKey.share] {
                _ = fields.value(forKey: key)
            }
            _ = OrderKey(order: [Query.SortDescriptor(key: "title", ascending: false), Query.SortDescriptor(key: "n", ascending: true)])
                .key(for: fields, row: 1)
            // What a fetch hands out: a record whose fields decode when read.
            let table = FieldNameTable(zoneID: fixture.zoneID, assetDirectory: fixture.directory, selection: selection)
            var arena = FieldArenaWriter(expectedRecords: 1)
            guard let record = try? view.makeRecord(id: nil, table: table, arena: &arena, names: &names) else { continue }
            for key in record.allKeys() { _ = record.fieldValue(forKey: key) }
        }
    }
    return 0
}
