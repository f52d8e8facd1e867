import FogStorage
import Foundation

/// A stored record read for an update: its system fields decoded, its fields left encoded.
///
/// An update decodes only the fields it must compare — the indexed fields it writes, the
/// references (for `deleteSelf` counts) — and the new encoding copies the bytes of the fields
/// it keeps (``RecordCodec/encode(_:keeping:changes:intern:)``), so that a save of one key
/// does not decode and encode the whole record.
struct EncodedRecord {
    /// One entry of the field table.
    struct Field {
        let name: String
        let id: Int64
        let type: FieldType
        /// Where the payload lies in ``EncodedRecord/bytes``.
        let payload: Range<Int>
    }

    let row: Int64
    /// The system fields; its `values` are empty.
    let header: StoredRecord
    /// The encoded record, copied out of the transaction.
    let bytes: [UInt8]
    /// The field table, in stored order.
    let fields: [Field]

    /// Parses the record in `buffer` (its header, field table and every payload are checked,
    /// as a full decode would) and copies it.
    init<Store>(row: Int64, _ buffer: UnsafeRawBufferPointer, names: inout NameResolver<Store>) throws {
        try self.init(row: row, buffer) { try names.name($0) }
    }

    /// The form of ``init(row:_:names:)`` with `name` giving the name of each id.
    init(row: Int64, _ buffer: UnsafeRawBufferPointer, name: (Int64) throws -> String) throws {
        let view = try RecordView(buffer, checking: .all)
        self.row = row
        header = StoredRecord(
            recordType: try name(view.type), recordName: view.recordName, zone: view.zone, values: [:],
            parent: view.parentRange.map(view.string), share: view.shareRange.map(view.string),
            creationDate: Date(timeIntervalSinceReferenceDate: view.creationDate),
            modificationDate: Date(timeIntervalSinceReferenceDate: view.modificationDate), creator: try name(view.creator),
            modifier: try name(view.modifier),
            changeSequence: view.changeSequence)
        var fields: [Field] = []
        fields.reserveCapacity(view.count)
        var offset = view.payloadStart
        try RecordView.forEachField(view.buffer, count: view.count, tableStart: view.tableStart, payloadStart: view.payloadStart) {
            id, type, payload in
            fields.append(Field(name: try name(id), id: id, type: type, payload: offset..<offset + payload.count))
            offset += payload.count
            return true
        }
        guard fields.count == view.count else { throw FormatError(message: "record \(header.recordName) has a damaged field table") }
        self.fields = fields
        bytes = Array(buffer)
    }

    /// The decoded value of the field named `name`, if the record has it.
    func value(_ name: String) throws -> FieldValue? {
        guard let field = fields.first(where: { $0.name == name }) else { return nil }
        return try decode(field)
    }

    private func decode(_ field: Field) throws -> FieldValue {
        try bytes.withUnsafeBytes { try RecordCodec.decodePayload(UnsafeRawBufferPointer(rebasing: $0[field.payload]), type: field.type) }
    }

    /// The record with every field decoded (a conflict error returns the server's record).
    func decoded() throws -> StoredRecord {
        var record = header
        for field in fields { record.values[field.name] = try decode(field) }
        return record
    }

    /// The fields holding references, decoded: where the record's `deleteSelf` targets are.
    func referenceValues() throws -> [String: FieldValue] {
        var values: [String: FieldValue] = [:]
        for field in fields where field.type == .reference || field.type == .referenceList {
            values[field.name] = try decode(field)
        }
        return values
    }

    /// The size the fields that `changes` leaves alone count toward the record size limit
    /// (``RecordCodec/countedSize(of:)``), from their encoded lengths.
    func countedSize(keptBeside changes: [String: FieldValue?]) -> Int {
        var total = 0
        for field in fields where field.type != .asset && field.type != .assetList && changes.index(forKey: field.name) == nil {
            total += field.payload.count + field.name.utf8.count + 4
        }
        return total
    }
}

extension RecordCodec {
    /// Encodes `record`'s system fields (its `values` are ignored) with the fields of `old`,
    /// those named in `changes` replaced by their new values (`nil` removes one): the bytes
    /// ``encode(_:intern:)`` gives for the merged values, without decoding the fields kept.
    static func encode<Store>(
        _ record: StoredRecord, keeping old: EncodedRecord, changes: [String: FieldValue?], names: inout NameWriter<Store>
    ) throws -> [UInt8] {
        try encode(record, keeping: old, changes: changes) { try names.intern($0) }
    }

    /// The form of ``encode(_:keeping:changes:names:)`` with `intern` giving the id of each name.
    static func encode(
        _ record: StoredRecord, keeping old: EncodedRecord, changes: [String: FieldValue?], intern: (String) throws -> Int64
    ) throws -> [UInt8] {
        var w = ByteWriter(capacity: old.bytes.count + 64)
        try encodeHeader(record, into: &w, intern: intern)
        // Every field of the new record, in name order (as `encode(_:intern:)` writes them):
        // an index into `old.fields` for a kept one, the value for a written one.
        var entries: [(name: String, kept: Int?, value: FieldValue?)] = []
        entries.reserveCapacity(old.fields.count + changes.count)
        for (i, field) in old.fields.enumerated() where changes.index(forKey: field.name) == nil {
            entries.append((field.name, i, nil))
        }
        for (key, value) in changes {
            if let value { entries.append((key, nil, value)) }
        }
        entries.sort { $0.name < $1.name }
        w.varint(entries.count)
        var payloads = ByteWriter(capacity: old.bytes.count)
        for entry in entries {
            let start = payloads.bytes.count
            if let i = entry.kept {
                let field = old.fields[i]
                payloads.bytes.append(contentsOf: old.bytes[field.payload])
                w.varint(field.id)
                w.u8(field.type.rawValue)
            } else {
                let value = entry.value!
                encodePayload(value, into: &payloads)
                w.varint(try intern(entry.name))
                w.u8(value.fieldType.rawValue)
            }
            w.varint(payloads.bytes.count - start)
        }
        w.bytes.append(contentsOf: payloads.bytes)
        return w.bytes
    }
}
