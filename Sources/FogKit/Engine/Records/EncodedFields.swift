import Foundation

/// Memory for the field bytes of a request's records: records copy their bytes into
/// chunks, so that a page of records costs a few allocations instead of one per record
/// (many live blocks of assorted sizes are what glibc's allocator handles worst).
///
/// A chunk lives as long as any record whose bytes it holds: keeping one record of a
/// page keeps its chunk (at most ``FieldArena/recordsPerChunk`` records' bytes and
/// ``FieldArena/maximumChunk`` bytes, or one record's when larger).
///
/// Not `Sendable` (`ManagedBuffer` is explicitly not): records share a chunk only through
/// ``EncodedFields``, whose conformance says why that is safe.
final class FieldArena: ManagedBuffer<FieldArena.Header, UInt8> {
    struct Header {
        var used: Int
        let capacity: Int
    }

    /// How many records' bytes a chunk is sized for, at most.
    static let recordsPerChunk = 32
    /// The largest chunk made for several records, in bytes.
    static let maximumChunk = 16 * 1024

    static func make(capacity: Int) -> FieldArena {
        unsafeDowncast(create(minimumCapacity: capacity) { _ in Header(used: 0, capacity: capacity) }, to: FieldArena.self)
    }

    /// Writes `count` bytes with `write` when they fit; returns their offset.
    @inline(__always)
    func append(count: Int, _ write: (UnsafeMutableRawBufferPointer) -> Void) -> Int? {
        withUnsafeMutablePointers { header, elements in
            let offset = header.pointee.used
            guard count <= header.pointee.capacity - offset else { return nil }
            write(UnsafeMutableRawBufferPointer(start: elements + offset, count: count))
            header.pointee.used += count
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

    /// Writes `count` bytes into a chunk with `write`; returns the chunk and the offset.
    mutating func write(count: Int, _ write: (UnsafeMutableRawBufferPointer) -> Void) -> (FieldArena, Int) {
        defer { expected = max(1, expected - 1) }
        if let current, let offset = current.append(count: count, write) { return (current, offset) }
        // Size the chunk for the records still expected, each as large as this one plus
        // slack, within `maximumChunk` (a large record gets a chunk of its own size).
        let records = min(expected, FieldArena.recordsPerChunk)
        let wanted = records == 1 ? count : min(records * (count + count / 4), FieldArena.maximumChunk)
        let chunk = FieldArena.make(capacity: max(count, wanted))
        current = chunk
        return (chunk, chunk.append(count: count, write)!)
    }
}

/// A record's fields as stored: the field table and payloads of its encoding, copied out
/// of the read transaction, decoded one field at a time when read.
///
/// A fetched ``Record`` keeps this instead of a dictionary of values, so that fetching
/// costs one copy per record and the fields a caller never reads are never decoded. The
/// bytes were checked when copied (``RecordView/init(_:)``), so decoding cannot fail.
/// Setting a field turns the record's fields into a dictionary first.
///
/// `@unchecked Sendable`: the chunk (a non-`Sendable` ``FieldArena``) and the name table
/// are shared across threads, which is safe because a record's bytes in the chunk are written
/// once, before its `EncodedFields` exists, and never changed; later records of the request
/// only append to other bytes of the chunk and to its header, which readers never look at.
/// The name table is filled while the request decodes and only read once its records are
/// handed out.
struct EncodedFields: @unchecked Sendable {
    /// The chunk holding the field count, table and payloads, from `start`.
    private let chunk: FieldArena
    /// Where this record's bytes start in ``chunk``: the chunk's elements never move while it
    /// lives, and this value keeps it alive, so reads need no closure to reach them.
    private let base: UnsafeRawPointer
    private let start: Int32
    private let length: Int32
    private let count: Int32
    private let tableStart: Int32
    private let payloadStart: Int32
    /// The names, and the fields the request asked for (desired keys); others are not there.
    private let table: FieldNameTable
    /// Whether a kept field is an asset or a list of assets.
    let hasAssets: Bool

    /// The bytes this record's fields take in its chunk.
    var byteCount: Int { Int(length) }

    /// Copies the fields of `view` that the table's selection keeps into `arena` (all of the
    /// record's field bytes, or with desired keys a table and payloads of just those fields),
    /// registering their names.
    init<Store>(
        _ view: borrowing RecordView, table: FieldNameTable, arena: inout FieldArenaWriter, names: inout NameResolver<Store>
    ) throws {
        // Desired keys: a table and payloads of the selected fields only, so that fields the
        // caller did not ask for take no memory (unless every field is selected).
        if table.selection.ids != nil, let projected = try Self.project(view, table: table, arena: &arena, names: &names) {
            self = projected
            return
        }
        // Every field: the names to register and whether any is an asset, read straight off
        // the checked table, then the record's field bytes copied as they are.
        let buffer = view.buffer
        var assets = false
        var i = view.tableStart
        for _ in 0..<view.count {
            let id = Int64(bitPattern: RecordView.readVarint(buffer, &i))
            let code = i < buffer.count ? buffer[i] : 0
            i += 1
            _ = RecordView.readVarint(buffer, &i)
            if !table.contains(id) { try table.register(id, expected: view.count, names: &names) }
            assets = assets || code == FieldType.asset.rawValue || code == FieldType.assetList.rawValue
        }
        let fieldsStart = view.fieldsStart
        let source = UnsafeRawBufferPointer(rebasing: buffer[fieldsStart...])
        guard source.count <= Int(Int32.max) else { throw FormatError(message: "record of \(source.count) bytes") }
        let (chunk, offset) = arena.write(count: source.count) { $0.copyMemory(from: source) }
        self.init(
            table: table, chunk: chunk, offset: offset, length: source.count, count: view.count,
            tableStart: view.tableStart - fieldsStart, payloadStart: view.payloadStart - fieldsStart, hasAssets: assets)
    }

    /// The fields written at `offset` in `chunk`: `length` bytes holding `count` fields, their
    /// table from `tableStart` and payloads from `payloadStart` (offsets in those bytes).
    private init(
        table: FieldNameTable, chunk: FieldArena, offset: Int, length: Int, count: Int, tableStart: Int, payloadStart: Int,
        hasAssets: Bool
    ) {
        self.table = table
        self.chunk = chunk
        base = chunk.withUnsafeMutablePointerToElements { UnsafeRawPointer($0 + offset) }
        start = Int32(offset)
        self.length = Int32(length)
        self.count = Int32(count)
        self.tableStart = Int32(tableStart)
        self.payloadStart = Int32(payloadStart)
        self.hasAssets = hasAssets
    }

    /// Copies the fields of `view` that the table's selection keeps into `arena` as a field
    /// count, their table entries and their payloads, registering their names; `nil`, with
    /// nothing copied, when the selection keeps every field of the record.
    ///
    /// One walk of the checked table finds the selected entries (on the stack); the copy
    /// then takes each entry's bytes and payload as they are.
    private static func project<Store>(
        _ view: RecordView, table: FieldNameTable, arena: inout FieldArenaWriter, names: inout NameResolver<Store>
    ) throws -> EncodedFields? {
        let buffer = view.buffer
        let selection = table.selection
        // Per selected field: where its table entry starts and ends, where its payload starts
        // and how long it is.
        return try withUnsafeTemporaryAllocation(of: Int.self, capacity: max(1, 4 * view.count)) { picked in
            var selected = 0, tableSize = 0, payloadSize = 0, assets = false
            var i = view.tableStart
            var offset = view.payloadStart
            for _ in 0..<view.count {
                // The table was checked: plain reads, stopping rather than failing.
                let entryStart = i
                let id = Int64(bitPattern: RecordView.readVarint(buffer, &i))
                guard i < buffer.count, FieldType.decoded(buffer[i]) != nil else { break }
                let code = buffer[i]
                i += 1
                let size = Int(truncatingIfNeeded: RecordView.readVarint(buffer, &i))
                guard size >= 0, size <= buffer.count - offset else { break }
                if selection.contains(id) {
                    try table.register(id, expected: view.count, names: &names)
                    picked[4 * selected] = entryStart
                    picked[4 * selected + 1] = i
                    picked[4 * selected + 2] = offset
                    picked[4 * selected + 3] = size
                    selected += 1
                    tableSize += i - entryStart
                    payloadSize += size
                    assets = assets || code == FieldType.asset.rawValue || code == FieldType.assetList.rawValue
                }
                offset += size
            }
            guard selected < view.count else { return nil }
            let countSize = RecordCodec.varintSize(selected)
            let total = countSize + tableSize + payloadSize
            guard total <= Int(Int32.max) else { throw FormatError(message: "record of \(total) bytes") }
            let (chunk, chunkOffset) = arena.write(count: total) { out in
                var t = 0
                var p = countSize + tableSize
                Self.putVarint(UInt64(selected), into: out, at: &t)
                for k in 0..<selected {
                    let entry = UnsafeRawBufferPointer(rebasing: buffer[picked[4 * k]..<picked[4 * k + 1]])
                    UnsafeMutableRawBufferPointer(rebasing: out[t..<t + entry.count]).copyMemory(from: entry)
                    t += entry.count
                    let size = picked[4 * k + 3]
                    let payload = UnsafeRawBufferPointer(rebasing: buffer[picked[4 * k + 2]..<picked[4 * k + 2] + size])
                    UnsafeMutableRawBufferPointer(rebasing: out[p..<p + size]).copyMemory(from: payload)
                    p += size
                }
            }
            return EncodedFields(
                table: table, chunk: chunk, offset: chunkOffset, length: total, count: selected, tableStart: countSize,
                payloadStart: countSize + tableSize, hasAssets: assets)
        }
    }

    private static func putVarint(_ value: UInt64, into out: UnsafeMutableRawBufferPointer, at i: inout Int) {
        var v = value
        while v >= 0x80 {
            out[i] = UInt8(v & 0x7F) | 0x80
            v >>= 7
            i += 1
        }
        out[i] = UInt8(v)
        i += 1
    }

    @inline(__always)
    private func forEachField(_ body: (Int64, FieldType, UnsafeRawBufferPointer) -> Bool) {
        let selection = table.selection
        chunk.withUnsafeMutablePointerToElements { elements in
            let buffer = UnsafeRawBufferPointer(start: elements + Int(start), count: Int(length))
            RecordView.forEachField(buffer, count: Int(count), tableStart: Int(tableStart), payloadStart: Int(payloadStart)) {
                id, type, payload in
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
    ///
    /// Walks the field table comparing name ids only: the type of the one field found is
    /// the only one looked at.
    func value(forKey key: String) -> FieldValue? {
        guard let id = table.id(of: key) else { return nil }
        if let ids = table.selection.ids, !ids.contains(id) { return nil }
        // `base` points into `chunk`, which this value (borrowed for the call) keeps alive.
        do {
            let buffer = UnsafeRawBufferPointer(start: base, count: Int(length))
            var i = Int(tableStart)
            var offset = Int(payloadStart)
            for _ in 0..<Int(count) {
                // The table was checked when copied: plain reads, stopping rather than failing.
                let fieldID = Int64(bitPattern: RecordView.readVarint(buffer, &i))
                guard i < buffer.count else { return nil }
                let code = buffer[i]
                i += 1
                let size = Int(truncatingIfNeeded: RecordView.readVarint(buffer, &i))
                guard size >= 0, size <= buffer.count - offset else { return nil }
                if fieldID == id {
                    guard let type = FieldType.decoded(code) else { return nil }
                    return decode(type, UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + size]))
                }
                offset += size
            }
            return nil
        }
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
        var values = [String: FieldValue](room: Int(count))
        forEachField { id, type, payload in
            if let name = table.name(of: id), let value = decode(type, payload) { values[name] = value }
            return true
        }
        return values
    }
}
