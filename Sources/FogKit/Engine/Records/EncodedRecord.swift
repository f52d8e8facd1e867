import FogStorage
import Foundation

/// A stored record read for an update: its system fields decoded, its fields left encoded.
///
/// An update decodes only the fields it must compare — the indexed fields it writes, the
/// references (for `deleteSelf` counts) — and the new encoding copies the bytes of the fields
/// it keeps (``RecordCodec/encode(_:keeping:changes:intern:)``), so that a save of one key
/// does not decode and encode the whole record.
///
/// A class: a save's plan and checks pass it around, and a struct's copy would retain each
/// of its fields (the header's strings, the table's names, the bytes) every time.
final class EncodedRecord {
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
    /// The name ids of the record type, the creator and the last modifier.
    let typeID: Int64
    let creatorID: Int64
    let modifierID: Int64
    /// The encoded record, copied out of the transaction.
    let bytes: [UInt8]
    /// The field table, in stored order.
    let fields: [Field]

    /// Parses the record in `buffer` (its header, field table and every payload are checked,
    /// as a full decode would) and copies it. `lookedUp` is the record name the row was found
    /// by: the header shares that string when the stored name is the same (an update's record
    /// name is not made again from the bytes), and has the stored one otherwise.
    convenience init<Store>(
        row: Int64, _ buffer: UnsafeRawBufferPointer, lookedUp: String? = nil, names: inout NameResolver<Store>
    ) throws {
        try self.init(row: row, buffer, lookedUp: lookedUp) { try names.name($0) }
    }

    /// The form of ``init(row:_:lookedUp:names:)`` with `name` giving the name of each id.
    init(row: Int64, _ buffer: UnsafeRawBufferPointer, lookedUp: String? = nil, name: (Int64) throws -> String) throws {
        let view = try RecordView(buffer, checking: .all)
        self.row = row
        (typeID, creatorID, modifierID) = (view.type, view.creator, view.modifier)
        let recordName = lookedUp.flatMap { view.holdsName($0) ? $0 : nil } ?? view.recordName
        let header = StoredRecord(
            recordType: try name(view.type), recordName: recordName, zone: view.zone, values: [:],
            parent: view.parentRange.map(view.string), share: view.shareRange.map(view.string),
            creationDate: Date(timeIntervalSinceReferenceDate: view.creationDate),
            modificationDate: Date(timeIntervalSinceReferenceDate: view.modificationDate), creator: try name(view.creator),
            modifier: try name(view.modifier),
            changeSequence: view.changeSequence)
        self.header = header
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
    func countedSize(keptBeside changes: FieldChanges) -> Int {
        var total = 0
        for field in fields where field.type != .asset && field.type != .assetList && !changes.contains(field.name) {
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
        _ record: StoredRecord, keeping old: EncodedRecord, changes: FieldChanges, names: inout NameWriter<Store>
    ) throws -> [UInt8] {
        try encode(record, keeping: old, changes: changes) { try names.intern($0) }
    }

    /// The form of ``encode(_:keeping:changes:names:)`` with `intern` giving the id of each name.
    static func encode(
        _ record: StoredRecord, keeping old: EncodedRecord, changes: FieldChanges, intern: (String) throws -> Int64
    ) throws -> [UInt8] {
        var w = ByteWriter(capacity: old.bytes.count + 64)
        // The header's names are most often the old record's: their ids are at hand.
        try encodeHeader(record, into: &w) { name in
            if name == old.header.recordType { return old.typeID }
            if name == old.header.creator { return old.creatorID }
            if name == old.header.modifier { return old.modifierID }
            return try intern(name)
        }
        // Every field of the new record, in name order (as `encode(_:intern:)` writes them):
        // `source` ≥ 0 is the index of a kept field in `old.fields`, `-1 - i` the index of a
        // written value in `changes`.
        var entries: [(name: String, source: Int)] = []
        entries.reserveCapacity(old.fields.count + changes.keys.count)
        for (i, field) in old.fields.enumerated() where !changes.contains(field.name) {
            entries.append((field.name, i))
        }
        for (i, value) in changes.values.enumerated() where value != nil {
            entries.append((changes.keys[i], -1 - i))
        }
        entries.sort { $0.name < $1.name }
        w.varint(entries.count)
        var payloads = ByteWriter(capacity: old.bytes.count)
        for entry in entries {
            let start = payloads.bytes.count
            if entry.source >= 0 {
                let field = old.fields[entry.source]
                old.bytes.withUnsafeBufferPointer { payloads.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[field.payload])) }
                w.varint(field.id)
                w.u8(field.type.rawValue)
            } else {
                let value = changes.values[-1 - entry.source]!
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

/// The keys an update writes, each once, with their new values (`nil`: the key is removed).
/// A save writes a few keys: arrays searched in order cost less than hashing the names, and
/// the keys apart from the values are compared without copying a value.
struct FieldChanges {
    private(set) var keys: [String] = []
    private(set) var values: [FieldValue?] = []

    /// Each written key with its value, in first-write order.
    var entries: Zip2Sequence<[String], [FieldValue?]> { zip(keys, values) }

    /// Writes `value` to `key` (the last write of a key wins).
    mutating func set(_ key: String, _ value: FieldValue?) {
        if let i = keys.firstIndex(of: key) {
            values[i] = value
        } else {
            keys.append(key)
            values.append(value)
        }
    }

    /// Whether the update writes `key`.
    func contains(_ key: String) -> Bool { keys.contains(key) }

    /// The value written to `key`: `nil` when the update does not write it, `.some(nil)` when
    /// it removes it.
    func written(_ key: String) -> FieldValue?? {
        guard let i = keys.firstIndex(of: key) else { return nil }
        return .some(values[i])
    }
}
