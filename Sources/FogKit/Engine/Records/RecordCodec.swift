import FogStorage
import Foundation

// The binary record format: `RecordCodec`, which writes and reads it, and
// `FieldSelection`, the fields of a record that a request decodes.

/// The fields to decode, by name id: `nil` for all. Resolved once per request, so that
/// decoding a record compares small integers instead of hashing field names.
struct FieldSelection {
    let ids: [Int64]?

    static let all = FieldSelection(ids: nil)

    init(ids: [Int64]?) { self.ids = ids }

    /// The selection of `keys` (`nil` for all); names never interned select nothing.
    init<Store>(_ keys: Set<String>?, names: inout NameResolver<Store>) throws {
        guard let keys else {
            ids = nil
            return
        }
        // A key selects the plain field and the encrypted field of that name (a record has
        // at most one of them).
        var ids: [Int64] = []
        for key in keys {
            if let id = try names.id(key) { ids.append(id) }
            if let id = try names.id(Record.encryptedKey(key)) { ids.append(id) }
        }
        self.ids = ids
    }

    @inline(__always)
    func contains(_ id: Int64) -> Bool { ids?.contains(id) ?? true }

    /// Every field either selection holds.
    func union(_ other: FieldSelection) -> FieldSelection {
        guard let ids, let others = other.ids else { return .all }
        return FieldSelection(ids: ids + others.filter { !ids.contains($0) })
    }

    /// Whether every field `other` selects is selected here.
    func covers(_ other: FieldSelection) -> Bool {
        guard let ids else { return true }
        guard let others = other.ids else { return false }
        return others.allSatisfy(ids.contains)
    }
}

/// The binary record format (version 1), described in `Docs/OnDiskFormat.md`.
///
/// A header with the system fields is followed by a field table — one entry
/// per field: name id, type code, payload length — and then the payloads. A
/// reader that wants only some fields walks the table and decodes just those
/// payloads, which is what desired keys and predicates need.
enum RecordCodec {
    static let version: UInt8 = 1

    static let hasParent: UInt8 = 1
    static let hasShare: UInt8 = 2

    /// Encodes `record`, interning its names through `names`. (The size limit is
    /// checked before, with ``countedSize(of:)``.)
    static func encode<Store>(_ record: StoredRecord, names: inout NameWriter<Store>) throws -> [UInt8] {
        try encode(record) { try names.intern($0) }
    }

    /// Encodes `record`, with `intern` giving the id of each name.
    static func encode(_ record: StoredRecord, intern: (String) throws -> Int64) throws -> [UInt8] {
        var w = ByteWriter(capacity: 128 + record.recordName.utf8.count)
        try encodeHeader(record, into: &w, intern: intern)
        let keys = record.values.keys.sorted()
        w.varint(keys.count)
        var payloads = ByteWriter(capacity: 256)
        for key in keys {
            let value = record.values[key]!
            let start = payloads.bytes.count
            encodePayload(value, into: &payloads)
            let length = payloads.bytes.count - start
            w.varint(try intern(key))
            w.u8(value.fieldType.rawValue)
            w.varint(length)
        }
        w.bytes.append(contentsOf: payloads.bytes)
        return w.bytes
    }

    /// Writes the header of `record`: its system fields, everything before the field count.
    static func encodeHeader(_ record: StoredRecord, into w: inout ByteWriter, intern: (String) throws -> Int64) throws {
        w.u8(version)
        w.varint(try intern(record.recordType))
        w.varint(record.zone)
        w.string(record.recordName)
        w.u8((record.parent != nil ? hasParent : 0) | (record.share != nil ? hasShare : 0))
        w.f64(record.creationDate.timeIntervalSinceReferenceDate)
        w.f64(record.modificationDate.timeIntervalSinceReferenceDate)
        w.varint(try intern(record.creator))
        w.varint(try intern(record.modifier))
        w.varint(record.changeSequence)
        if let parent = record.parent { w.string(parent) }
        if let share = record.share { w.string(share) }
    }

    /// The size `values` count toward the record size limit: field names and
    /// payloads, assets excluded. Computed from the values, without encoding them.
    /// `values` is a dictionary's pairs or any other sequence of them, one per key.
    static func countedSize(of values: some Sequence<(key: String, value: FieldValue)>) -> Int {
        var total = 0
        for (key, value) in values where value.fieldType != .asset && value.fieldType != .assetList {
            total += payloadSize(of: value) + key.utf8.count + 4
        }
        return total
    }

    /// The number of bytes ``encodePayload(_:into:)`` writes for `value`.
    static func payloadSize(of value: FieldValue) -> Int {
        func prefixed(_ n: Int) -> Int { varintSize(n) + n }
        func referenceSize(_ r: Record.Reference) -> Int { 1 + prefixed(r.recordID.recordName.utf8.count) }
        func assetSize(_ a: Asset) -> Int { prefixed((a.storedName ?? "").utf8.count) + 8 }
        switch value {
        case .string(let s): return s.utf8.count
        case .int64, .double, .date: return 8
        case .bytes(let d): return d.count
        case .location: return 64
        case .reference(let r): return referenceSize(r)
        case .asset(let a): return assetSize(a)
        case .stringList(let l): return l.reduce(varintSize(l.count)) { $0 + prefixed($1.utf8.count) }
        case .int64List(let l): return varintSize(l.count) + 8 * l.count
        case .doubleList(let l): return varintSize(l.count) + 8 * l.count
        case .dateList(let l): return varintSize(l.count) + 8 * l.count
        case .bytesList(let l): return l.reduce(varintSize(l.count)) { $0 + prefixed($1.count) }
        case .locationList(let l): return varintSize(l.count) + 64 * l.count
        case .referenceList(let l): return l.reduce(varintSize(l.count)) { $0 + referenceSize($1) }
        case .assetList(let l): return l.reduce(varintSize(l.count)) { $0 + assetSize($1) }
        }
    }

    /// The length of the varint encoding of `n`.
    static func varintSize(_ n: Int) -> Int {
        var v = UInt64(bitPattern: Int64(n))
        var size = 1
        while v >= 0x80 {
            v >>= 7
            size += 1
        }
        return size
    }

    /// Decodes a stored record. With `desiredKeys`, only those fields are decoded
    /// (an empty set decodes none).
    static func decode<Store>(
        _ buffer: UnsafeRawBufferPointer, names: inout NameResolver<Store>, desiredKeys: Set<String>? = nil
    ) throws -> StoredRecord {
        try decode(buffer, names: &names, fields: FieldSelection(desiredKeys, names: &names))
    }

    /// Decodes a stored record, with only the fields `fields` selects.
    static func decode<Store>(
        _ buffer: UnsafeRawBufferPointer, names: inout NameResolver<Store>, fields: FieldSelection
    ) throws -> StoredRecord {
        var r = ByteReader(buffer)
        let v = try r.u8()
        guard v == version else { throw FormatError(message: "record format version \(v)") }
        let type = try names.name(r.int64())
        let zone = try r.int64()
        let name = try r.string()
        let flags = try r.u8()
        let created = Date(timeIntervalSinceReferenceDate: try r.f64())
        let modified = Date(timeIntervalSinceReferenceDate: try r.f64())
        let creator = try names.name(r.int64())
        let modifier = try names.name(r.int64())
        let sequence = try r.int64()
        let parent = flags & hasParent != 0 ? try r.string() : nil
        let share = flags & hasShare != 0 ? try r.string() : nil
        let count = try r.int()
        guard count <= buffer.count else { throw FormatError(message: "field count \(count)") }
        var values: [String: FieldValue] = [:]
        if fields.ids?.isEmpty != true {
            // Two passes over the field table (no array to hold it): the first finds where
            // the payloads start, the second decodes the selected ones.
            let tableStart = r.offset
            for _ in 0..<count {
                _ = try r.varint()
                _ = try r.u8()
                _ = try r.varint()
            }
            var offset = r.offset
            var table = ByteReader(UnsafeRawBufferPointer(rebasing: buffer[tableStart..<r.offset]))
            values = [String: FieldValue](room: fields.ids.map { min($0.count, count) } ?? count)
            for _ in 0..<count {
                let id = try table.int64()
                let code = try table.u8()
                let length = try table.int()
                guard length <= buffer.count - offset else { throw FormatError(message: "field table overruns the record") }
                if fields.contains(id) {
                    guard let fieldType = FieldType.decoded(code) else { throw FormatError(message: "field type code \(code)") }
                    let payload = UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length])
                    values[try names.name(id)] = try decodePayload(payload, type: fieldType)
                }
                offset += length
            }
        }
        return StoredRecord(
            recordType: type, recordName: name, zone: zone, values: values, parent: parent, share: share,
            creationDate: created, modificationDate: modified, creator: creator, modifier: modifier,
            changeSequence: sequence)
    }

    /// The record type's name id and the zone id of an encoded record, read from its
    /// header without decoding the rest (whole-type scans filter rows with it).
    @inline(__always)
    static func typeAndZone(_ buffer: UnsafeRawBufferPointer) throws -> (type: Int64, zone: Int64) {
        var r = ByteReader(buffer)
        let v = try r.u8()
        guard v == version else { throw FormatError(message: "record format version \(v)") }
        return (try r.int64(), try r.int64())
    }

    /// The change sequence of an encoded record (its last save's commit), read from its
    /// header without decoding the rest (the change log's compaction tells stale entries by it).
    static func changeSequence(_ buffer: UnsafeRawBufferPointer) throws -> Int64 {
        var r = ByteReader(buffer)
        let v = try r.u8()
        guard v == version else { throw FormatError(message: "record format version \(v)") }
        _ = try r.varint()  // type
        _ = try r.varint()  // zone
        try r.skip(try r.int())  // name
        try r.skip(1 + 8 + 8)  // flags, creation and modification dates
        _ = try r.varint()  // creator
        _ = try r.varint()  // modifier
        return try r.int64()
    }

    // MARK: - Payloads

    static func encodePayload(_ value: FieldValue, into w: inout ByteWriter) {
        switch value {
        case .string(let s): w.raw(s)
        case .int64(let i): w.u64(UInt64(bitPattern: i))
        case .double(let d): w.f64(d)
        case .bytes(let d): w.bytes.append(contentsOf: d)
        case .date(let d): w.f64(d.timeIntervalSinceReferenceDate)
        case .location(let l): location(l, into: &w)
        case .reference(let r): reference(r, into: &w)
        case .asset(let a): asset(a, into: &w)
        case .stringList(let list):
            w.varint(list.count)
            for s in list { w.string(s) }
        case .int64List(let list):
            w.varint(list.count)
            for i in list { w.u64(UInt64(bitPattern: i)) }
        case .doubleList(let list):
            w.varint(list.count)
            for d in list { w.f64(d) }
        case .bytesList(let list):
            w.varint(list.count)
            for d in list { w.data(d) }
        case .dateList(let list):
            w.varint(list.count)
            for d in list { w.f64(d.timeIntervalSinceReferenceDate) }
        case .locationList(let list):
            w.varint(list.count)
            for l in list { location(l, into: &w) }
        case .referenceList(let list):
            w.varint(list.count)
            for r in list { reference(r, into: &w) }
        case .assetList(let list):
            w.varint(list.count)
            for a in list { asset(a, into: &w) }
        }
    }

    private static func location(_ l: Location, into w: inout ByteWriter) {
        for d in [
            l.latitude, l.longitude, l.altitude, l.horizontalAccuracy, l.verticalAccuracy, l.course, l.speed,
            l.timestamp.timeIntervalSinceReferenceDate,
        ] { w.f64(d) }
    }

    private static func reference(_ r: Record.Reference, into w: inout ByteWriter) {
        w.u8(UInt8(r.action.rawValue))
        w.string(r.recordID.recordName)
    }

    private static func asset(_ a: Asset, into w: inout ByteWriter) {
        w.string(a.storedName ?? "")
        w.u64(UInt64(bitPattern: a.storedSize))
    }

    static func decodePayload(_ buffer: UnsafeRawBufferPointer, type: FieldType) throws -> FieldValue {
        var r = ByteReader(buffer)
        func count() throws -> Int {
            let n = try r.int()
            guard n <= buffer.count else { throw FormatError(message: "list of \(n) elements in \(buffer.count) bytes") }
            return n
        }
        let value: FieldValue
        switch type {
        case .string: value = .string(try r.rawString(count: buffer.count))
        case .int64: value = .int64(Int64(bitPattern: try r.u64()))
        case .double: value = .double(try r.f64())
        case .bytes: value = .bytes(try r.data(count: buffer.count))
        case .timestamp: value = .date(Date(timeIntervalSinceReferenceDate: try r.f64()))
        case .location: value = .location(try location(&r))
        case .reference: value = .reference(try reference(&r))
        case .asset: value = .asset(try asset(&r))
        case .stringList: value = .stringList(try (0..<count()).map { _ in try r.string() })
        case .int64List: value = .int64List(try (0..<count()).map { _ in Int64(bitPattern: try r.u64()) })
        case .doubleList: value = .doubleList(try (0..<count()).map { _ in try r.f64() })
        case .bytesList: value = .bytesList(try (0..<count()).map { _ in try r.data() })
        case .timestampList:
            value = .dateList(try (0..<count()).map { _ in Date(timeIntervalSinceReferenceDate: try r.f64()) })
        case .locationList: value = .locationList(try (0..<count()).map { _ in try location(&r) })
        case .referenceList: value = .referenceList(try (0..<count()).map { _ in try reference(&r) })
        case .assetList: value = .assetList(try (0..<count()).map { _ in try asset(&r) })
        }
        guard r.isAtEnd else { throw FormatError(message: "\(buffer.count - r.offset) stray bytes after a \(type) value") }
        return value
    }

    /// Decodes a payload that passed ``checkPayload(_:type:)``: scalars are read directly,
    /// the rest through ``decodePayload(_:type:)``; `nil` only if the check was skipped.
    @inline(__always)
    static func decodeChecked(_ buffer: UnsafeRawBufferPointer, type: FieldType) -> FieldValue? {
        switch type {
        case .string: return .string(String(decoding: buffer, as: UTF8.self))
        case .int64 where buffer.count == 8: return .int64(Int64(littleEndian: buffer.loadUnaligned(as: Int64.self)))
        case .double where buffer.count == 8:
            return .double(Double(bitPattern: UInt64(littleEndian: buffer.loadUnaligned(as: UInt64.self))))
        case .timestamp where buffer.count == 8:
            return .date(
                Date(timeIntervalSinceReferenceDate: Double(bitPattern: UInt64(littleEndian: buffer.loadUnaligned(as: UInt64.self)))))
        case .stringList: return decodeStringList(buffer) ?? (try? decodePayload(buffer, type: type))
        default: return try? decodePayload(buffer, type: type)
        }
    }

    /// A checked list of strings, read without the throwing reader (lists of tags are what
    /// callers read most after scalars); `nil` for anything but a well-formed list.
    @inline(__always)
    private static func decodeStringList(_ buffer: UnsafeRawBufferPointer) -> FieldValue? {
        var i = 0
        guard let count = RecordView.length(buffer, &i), count <= buffer.count else { return nil }
        var list: [String] = []
        list.reserveCapacity(count)
        for _ in 0..<count {
            guard let size = RecordView.length(buffer, &i), size <= buffer.count - i else { return nil }
            list.append(String(decoding: UnsafeRawBufferPointer(rebasing: buffer[i..<i + size]), as: UTF8.self))
            i += size
        }
        guard i == buffer.count else { return nil }
        return .stringList(list)
    }

    /// Checks that `buffer` holds a well-formed payload of `type`, allocating nothing:
    /// once it passes, ``decodePayload(_:type:)`` cannot fail on it.
    static func checkPayload(_ buffer: UnsafeRawBufferPointer, type: FieldType) throws {
        var r = ByteReader(buffer)
        func count() throws -> Int {
            let n = try r.int()
            guard n <= buffer.count else { throw FormatError(message: "list of \(n) elements in \(buffer.count) bytes") }
            return n
        }
        func skipString() throws { try r.skip(try r.int()) }
        func checkReference() throws {
            let action = try r.u8()
            guard Record.ReferenceAction(rawValue: UInt(action)) != nil else { throw FormatError(message: "reference action \(action)") }
            try skipString()
        }
        switch type {
        case .string, .bytes: return
        case .int64, .double, .timestamp: try r.skip(8)
        case .location: try r.skip(64)
        case .reference: try checkReference()
        case .asset:
            try skipString()
            try r.skip(8)
        case .stringList, .bytesList:
            for _ in 0..<(try count()) { try skipString() }
        case .int64List, .doubleList, .timestampList: try r.skip(8 * (try count()))
        case .locationList: try r.skip(64 * (try count()))
        case .referenceList:
            for _ in 0..<(try count()) { try checkReference() }
        case .assetList:
            for _ in 0..<(try count()) {
                try skipString()
                try r.skip(8)
            }
        }
        guard r.isAtEnd else { throw FormatError(message: "\(buffer.count - r.offset) stray bytes after a \(type) value") }
    }

    private static func location(_ r: inout ByteReader) throws -> Location {
        Location(
            latitude: try r.f64(), longitude: try r.f64(), altitude: try r.f64(), horizontalAccuracy: try r.f64(),
            verticalAccuracy: try r.f64(), course: try r.f64(), speed: try r.f64(),
            timestamp: Date(timeIntervalSinceReferenceDate: try r.f64()))
    }

    private static func reference(_ r: inout ByteReader) throws -> Record.Reference {
        let action = try r.u8()
        guard let a = Record.ReferenceAction(rawValue: UInt(action)) else {
            throw FormatError(message: "reference action \(action)")
        }
        return Record.Reference(recordID: Record.ID(recordName: try r.string()), action: a)
    }

    private static func asset(_ r: inout ByteReader) throws -> Asset {
        let name = try r.string()
        let size = Int64(bitPattern: try r.u64())
        // The engine points the URL into its assets folder (`FieldValue.resolved`).
        return Asset(storedName: name, size: size, directory: URL(fileURLWithPath: "/"))
    }
}
