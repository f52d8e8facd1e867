import Foundation

/// The field names, zone, asset folder and desired keys that the records of one request share.
///
/// Records decoded by one fetch, query page or change batch refer to it, so each record
/// holds name ids (small integers) and the names themselves are looked up once per
/// request. It is filled while the request decodes, inside its read transaction, and only
/// read afterwards.
final class FieldNameTable: @unchecked Sendable {
    /// The names of the fields the request's records hold, in the order first seen. A
    /// request reads a handful of fields, so a scan that compares short strings costs less
    /// than hashing the name; past 16 names a dictionary takes over.
    private var entries: [(id: Int64, name: String)] = []
    private var byName: [String: Int64] = [:]
    let zoneID: RecordZone.ID
    let assetDirectory: URL
    /// The fields the request returns (its desired keys).
    let selection: FieldSelection

    init(zoneID: RecordZone.ID, assetDirectory: URL, selection: FieldSelection) {
        self.zoneID = zoneID
        self.assetDirectory = assetDirectory
        self.selection = selection
    }

    /// Makes sure the name of `id` is known; `expected` sizes the table on first use.
    @inline(__always)
    func register(_ id: Int64, expected: Int, names resolver: inout NameResolver) throws {
        for entry in entries where entry.id == id { return }
        let name = try resolver.name(id)
        if entries.isEmpty { entries.reserveCapacity(max(expected, 4)) }
        entries.append((id, name))
        if entries.count > 16 { byName[name] = id }
        if entries.count == 17 { for entry in entries.prefix(16) { byName[entry.name] = entry.id } }
    }

    /// The id of `name` when a record of the request holds the field; `nil` otherwise.
    func id(of name: String) -> Int64? {
        if entries.count > 16 { return byName[name] }
        for entry in entries where entry.name == name { return entry.id }
        return nil
    }

    func name(of id: Int64) -> String? {
        for entry in entries where entry.id == id { return entry.name }
        return nil
    }
}

/// Memory for the field bytes of a request's records: records copy their bytes into
/// chunks, so that a page of records costs a few allocations instead of one per record
/// (many live blocks of assorted sizes are what glibc's allocator handles worst).
///
/// A chunk lives as long as any record whose bytes it holds: keeping one record of a
/// page keeps its chunk (at most ``FieldArena/recordsPerChunk`` records' bytes, or
/// ``FieldArena/maximumChunk`` bytes, or one record's).
final class FieldArena: ManagedBuffer<FieldArena.Header, UInt8>, @unchecked Sendable {
    struct Header {
        var used: Int
        let capacity: Int
    }

    /// How many records' bytes a chunk is sized for, at most.
    static let recordsPerChunk = 128
    /// The largest chunk made for several records, in bytes.
    static let maximumChunk = 256 * 1024

    static func make(capacity: Int) -> FieldArena {
        unsafeDowncast(create(minimumCapacity: capacity) { _ in Header(used: 0, capacity: capacity) }, to: FieldArena.self)
    }

    /// Copies `bytes` in when they fit; returns their offset.
    @inline(__always)
    func append(_ bytes: UnsafeRawBufferPointer) -> Int? {
        withUnsafeMutablePointers { header, elements in
            let offset = header.pointee.used
            guard bytes.count <= header.pointee.capacity - offset else { return nil }
            if let base = bytes.baseAddress { UnsafeMutableRawPointer(elements + offset).copyMemory(from: base, byteCount: bytes.count) }
            header.pointee.used += bytes.count
            return offset
        }
    }
}

/// Hands out space in ``FieldArena`` chunks for one request.
struct FieldArenaWriter {
    private var current: FieldArena?
    /// How many more records the request expects to copy (sizes the next chunk).
    private var expected: Int

    init(expectedRecords: Int) { expected = max(1, expectedRecords) }

    /// Copies `bytes` into a chunk; returns the chunk and the offset.
    mutating func copy(_ bytes: UnsafeRawBufferPointer) -> (FieldArena, Int) {
        defer { expected = max(1, expected - 1) }
        if let current, let offset = current.append(bytes) { return (current, offset) }
        // Size the chunk for the records still expected, each as large as this one plus
        // slack, within `maximumChunk` (a large record gets a chunk of its own size).
        let records = min(expected, FieldArena.recordsPerChunk)
        let wanted = records == 1 ? bytes.count : min(records * (bytes.count + bytes.count / 4), FieldArena.maximumChunk)
        let chunk = FieldArena.make(capacity: max(bytes.count, wanted))
        current = chunk
        return (chunk, chunk.append(bytes)!)
    }
}

/// A record's fields as stored: the field table and payloads of its encoding, copied out
/// of the read transaction, decoded one field at a time when read.
///
/// A fetched ``Record`` keeps this instead of a dictionary of values, so that fetching
/// costs one copy per record and the fields a caller never reads are never decoded. The
/// bytes were checked when copied (``RecordView/init(_:)``), so decoding cannot fail.
/// Setting a field turns the record's fields into a dictionary first.
struct EncodedFields: @unchecked Sendable {
    /// The chunk holding the field count, table and payloads, from `start`.
    private let chunk: FieldArena
    private let start: Int32
    private let length: Int32
    private let count: Int32
    private let tableStart: Int32
    private let payloadStart: Int32
    /// The names, and the fields the request asked for (desired keys); others are not there.
    private let table: FieldNameTable

    /// Copies the fields of `view` into `arena`, registering the names of those the
    /// table's selection keeps.
    init(_ view: RecordView, table: FieldNameTable, arena: inout FieldArenaWriter, names: inout NameResolver) throws {
        let base = view.fieldsStart
        let source = UnsafeRawBufferPointer(rebasing: view.buffer[base...])
        guard source.count <= Int(Int32.max) else { throw FormatError(message: "record of \(source.count) bytes") }
        let (chunk, offset) = arena.copy(source)
        self.chunk = chunk
        start = Int32(offset)
        length = Int32(source.count)
        count = Int32(view.count)
        tableStart = Int32(view.tableStart - base)
        payloadStart = Int32(view.payloadStart - base)
        self.table = table
        let selection = table.selection
        var error: (any Error)?
        RecordView.forEachField(view.buffer, count: view.count, tableStart: view.tableStart, payloadStart: view.payloadStart) { id, _, _ in
            guard selection.contains(id) else { return true }
            do { try table.register(id, expected: view.count, names: &names) } catch let e {
                error = e
                return false
            }
            return true
        }
        if let error { throw error }
    }

    @inline(__always)
    private func forEachField(_ body: (Int64, FieldType, UnsafeRawBufferPointer) -> Bool) {
        let selection = table.selection
        chunk.withUnsafeMutablePointerToElements { elements in
            let buffer = UnsafeRawBufferPointer(start: elements + Int(start), count: Int(length))
            RecordView.forEachField(buffer, count: Int(count), tableStart: Int(tableStart), payloadStart: Int(payloadStart)) { id, type, payload in
                guard selection.contains(id) else { return true }
                return body(id, type, payload)
            }
        }
    }

    private func decode(_ type: FieldType, _ payload: UnsafeRawBufferPointer) -> FieldValue? {
        guard let value = RecordCodec.decodeChecked(payload, type: type) else { return nil }
        return value.needsResolution ? value.resolved(zoneID: table.zoneID, assetDirectory: table.assetDirectory) : value
    }

    /// The value of field `key`, decoded now; `nil` when the record does not have it.
    func value(forKey key: String) -> FieldValue? {
        guard let id = table.id(of: key) else { return nil }
        var value: FieldValue?
        forEachField { fieldID, type, payload in
            guard fieldID == id else { return true }
            value = decode(type, payload)
            return false
        }
        return value
    }

    /// The names of the fields present.
    var keys: [String] {
        var keys: [String] = []
        forEachField { id, _, _ in
            if let name = table.name(of: id) { keys.append(name) }
            return true
        }
        return keys
    }

    /// Every field present, decoded.
    func allValues() -> [String: FieldValue] {
        var values: [String: FieldValue] = [:]
        values.reserveCapacity(Int(count))
        forEachField { id, type, payload in
            if let name = table.name(of: id), let value = decode(type, payload) { values[name] = value }
            return true
        }
        return values
    }
}
