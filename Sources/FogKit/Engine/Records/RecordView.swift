import Foundation

/// An encoded record read in place: the header parsed, the field table and payloads
/// checked, nothing allocated.
///
/// Queries test candidates on views (a candidate that does not match costs no
/// allocation), and records handed to clients copy only the field bytes
/// (``EncodedFields``), decoding a field when it is read. The layout is
/// ``RecordCodec``'s (version 1, `Docs/OnDiskFormat.md`).
struct RecordView {
    let buffer: UnsafeRawBufferPointer
    let type: Int64
    let zone: Int64
    let nameRange: Range<Int>
    let creationDate: Double
    let modificationDate: Double
    let creator: Int64
    let modifier: Int64
    let changeSequence: Int64
    let parentRange: Range<Int>?
    let shareRange: Range<Int>?
    /// Where the field count starts: the field table and payloads follow it.
    let fieldsStart: Int
    /// The number of fields, the offsets of the field table and of the first payload.
    let count: Int
    let tableStart: Int
    let payloadStart: Int
    /// The fields whose payloads were checked.
    let checked: FieldSelection

    /// Parses and checks `buffer`: the header, the field table, and the payloads of the fields
    /// `checking` selects (the ones the caller will read; reading another may find it damaged
    /// and see it as missing). A corrupt record throws ``FormatError``.
    init(_ buffer: UnsafeRawBufferPointer, checking: FieldSelection) throws {
        // A sound record takes the fast parse; anything it doubts is parsed again by the
        // checking one below, which names the damage.
        if let view = Self.parsed(buffer, checking: checking) {
            self = view
            return
        }
        try self.init(checkedParseOf: buffer, checking: checking)
    }

    /// The checking parse alone: what ``init(_:checking:)`` falls back to, and what tests
    /// hold the fast parse (``parsed(_:checking:)``) to.
    init(checkedParseOf buffer: UnsafeRawBufferPointer, checking: FieldSelection) throws {
        self.buffer = buffer
        var r = ByteReader(buffer)
        let v = try r.u8()
        guard v == RecordCodec.version else { throw FormatError(message: "record format version \(v)") }
        type = try r.int64()
        zone = try r.int64()
        nameRange = try Self.stringRange(&r)
        let flags = try r.u8()
        creationDate = try r.f64()
        modificationDate = try r.f64()
        creator = try r.int64()
        modifier = try r.int64()
        changeSequence = try r.int64()
        parentRange = flags & RecordCodec.hasParent != 0 ? try Self.stringRange(&r) : nil
        shareRange = flags & RecordCodec.hasShare != 0 ? try Self.stringRange(&r) : nil
        fieldsStart = r.offset
        count = try r.int()
        guard count <= buffer.count else { throw FormatError(message: "field count \(count)") }
        tableStart = r.offset
        // The table's entries end where the payloads begin: find that first, then check each
        // payload's structure, so that reading a field later cannot fail.
        for _ in 0..<count {
            _ = try r.varint()
            _ = try r.u8()
            _ = try r.varint()
        }
        payloadStart = r.offset
        var table = ByteReader(buffer, offset: tableStart)
        var offset = payloadStart
        for _ in 0..<count {
            let id = try table.int64()
            let code = try table.u8()
            guard let type = FieldType.decoded(code) else { throw FormatError(message: "field type code \(code)") }
            let length = try table.int()
            guard length <= buffer.count - offset else { throw FormatError(message: "field table overruns the record") }
            if checking.contains(id) {
                try RecordCodec.checkPayload(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length]), type: type)
            }
            offset += length
        }
        self.checked = checking
    }

    private init(
        buffer: UnsafeRawBufferPointer, type: Int64, zone: Int64, nameRange: Range<Int>, creationDate: Double, modificationDate: Double,
        creator: Int64, modifier: Int64, changeSequence: Int64, parentRange: Range<Int>?, shareRange: Range<Int>?, fieldsStart: Int,
        count: Int, tableStart: Int, payloadStart: Int, checked: FieldSelection
    ) {
        self.buffer = buffer
        self.type = type
        self.zone = zone
        self.nameRange = nameRange
        self.creationDate = creationDate
        self.modificationDate = modificationDate
        self.creator = creator
        self.modifier = modifier
        self.changeSequence = changeSequence
        self.parentRange = parentRange
        self.shareRange = shareRange
        self.fieldsStart = fieldsStart
        self.count = count
        self.tableStart = tableStart
        self.payloadStart = payloadStart
        self.checked = checked
    }

    /// The parse of ``init(_:checking:)`` without errors: `nil` wherever that one would throw
    /// (and, for payloads of rare types, wherever ``RecordCodec/checkPayload(_:type:)``
    /// would), so that a view it returns is one the checking parse returns too. Every varint,
    /// length and payload is checked the same way; only the reporting differs.
    @inline(__always)
    static func parsed(_ buffer: UnsafeRawBufferPointer, checking: FieldSelection) -> RecordView? {
        let end = buffer.count
        guard end > 0, buffer[0] == RecordCodec.version else { return nil }
        var i = 1
        // The varints are read by static helpers that take the offset `inout`: nested
        // functions capturing it were called out of line (about 25 instructions a call, ten
        // calls a record), and inlined they made the offset a boxed variable with run-time
        // exclusivity checks.
        guard let type = Self.checkedVarint(buffer, &i), let zone = Self.checkedVarint(buffer, &i),
            let nameRange = Self.checkedRange(buffer, &i), i < end
        else { return nil }
        let flags = buffer[i]
        i += 1
        guard end - i >= 16 else { return nil }
        let creationDate = Double(bitPattern: UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
        let modificationDate = Double(bitPattern: UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)))
        i += 16
        guard let creator = Self.checkedVarint(buffer, &i), let modifier = Self.checkedVarint(buffer, &i),
            let changeSequence = Self.checkedVarint(buffer, &i)
        else { return nil }
        var parentRange: Range<Int>?
        var shareRange: Range<Int>?
        if flags & RecordCodec.hasParent != 0 {
            guard let r = Self.checkedRange(buffer, &i) else { return nil }
            parentRange = r
        }
        if flags & RecordCodec.hasShare != 0 {
            guard let r = Self.checkedRange(buffer, &i) else { return nil }
            shareRange = r
        }
        let fieldsStart = i
        guard let count = Self.length(buffer, &i), count <= end else { return nil }
        let tableStart = i
        // One walk of the table checks every entry and sums the payloads' sizes. A selected
        // field of a fixed size is checked from its entry; only a selected field whose payload
        // has a structure (a list, a location, a reference, an asset) needs its bytes, which
        // start where the table ends: the walk notes the first such entry, and a second walk
        // from there checks those payloads. The sizes are bounded as the walk goes (the
        // payloads so far never pass what follows the entry just read, so nothing overflows);
        // the exact bound, the checking parse's, is that the payloads end inside the record.
        var total = 0
        var firstStructured: (entry: Int, offset: Int)?
        for _ in 0..<count {
            let entry = i
            guard let id = Self.checkedVarint(buffer, &i), i < end, let type = FieldType.decoded(buffer[i]) else { return nil }
            i += 1
            guard let size = Self.length(buffer, &i), size <= end - i - total else { return nil }
            if checking.contains(Int64(bitPattern: id)) {
                switch type {
                case .string, .bytes: break
                case .int64, .double, .timestamp: guard size == 8 else { return nil }
                default: if firstStructured == nil { firstStructured = (entry, total) }
                }
            }
            total += size
        }
        let payloadStart = i
        guard total <= end - payloadStart else { return nil }
        if let (entry, firstOffset) = firstStructured {
            i = entry
            var offset = payloadStart + firstOffset
            while i < payloadStart {
                guard let id = Self.checkedVarint(buffer, &i), i < end, let type = FieldType.decoded(buffer[i]) else { return nil }
                i += 1
                guard let size = Self.length(buffer, &i) else { return nil }
                if checking.contains(Int64(bitPattern: id)) {
                    guard payloadIsSound(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + size]), type: type) else { return nil }
                }
                offset += size
            }
        }
        return RecordView(
            buffer: buffer, type: Int64(bitPattern: type), zone: Int64(bitPattern: zone), nameRange: nameRange, creationDate: creationDate,
            modificationDate: modificationDate, creator: Int64(bitPattern: creator), modifier: Int64(bitPattern: modifier),
            changeSequence: Int64(bitPattern: changeSequence), parentRange: parentRange, shareRange: shareRange, fieldsStart: fieldsStart,
            count: count, tableStart: tableStart, payloadStart: payloadStart, checked: checking)
    }

    /// Whether ``RecordCodec/checkPayload(_:type:)`` passes `payload`: the common types
    /// inline, the others through it.
    @inline(__always)
    private static func payloadIsSound(_ payload: UnsafeRawBufferPointer, type: FieldType) -> Bool {
        switch type {
        case .string, .bytes: return true
        case .int64, .double, .timestamp: return payload.count == 8
        case .stringList, .bytesList:
            var i = 0
            let end = payload.count
            guard let n = length(payload, &i), n <= end else { return false }
            for _ in 0..<n {
                guard let size = length(payload, &i), size <= end - i else { return false }
                i += size
            }
            return i >= end
        default: return (try? RecordCodec.checkPayload(payload, type: type)) != nil
        }
    }

    /// A varint at `i`, read as ``ByteReader/varint()`` reads it; `nil` where that one throws
    /// (truncated, too long). One-byte varints, most of a record's, are taken at once.
    @inline(__always)
    static func checkedVarint(_ buffer: UnsafeRawBufferPointer, _ i: inout Int) -> UInt64? {
        if i < buffer.count, buffer[i] < 0x80 {
            defer { i += 1 }
            return UInt64(buffer[i])
        }
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while i < buffer.count {
            let b = buffer[i]
            i += 1
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }

    /// A length at `i` and the range of that many bytes after it, which the buffer holds;
    /// `nil` otherwise. `i` moves past them.
    @inline(__always)
    static func checkedRange(_ buffer: UnsafeRawBufferPointer, _ i: inout Int) -> Range<Int>? {
        guard let n = length(buffer, &i), n <= buffer.count - i else { return nil }
        defer { i += n }
        return i..<i + n
    }

    /// A varint length at `i`, read as ``ByteReader/int()`` reads it; `nil` where that one
    /// throws (truncated, too long, past `Int.max`).
    @inline(__always)
    static func length(_ buffer: UnsafeRawBufferPointer, _ i: inout Int) -> Int? {
        guard let v = checkedVarint(buffer, &i), v <= UInt64(Int.max) else { return nil }
        return Int(v)
    }

    private static func stringRange(_ r: inout ByteReader) throws -> Range<Int> {
        let n = try r.int()
        try r.need(n)
        defer { r.offset += n }
        return r.offset..<r.offset + n
    }

    func string(_ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: buffer[range]), as: UTF8.self)
    }

    var recordName: String { string(nameRange) }

    /// Whether the record's name is `name`, byte for byte (no string made).
    func holdsName(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { utf8 in
            guard utf8.count == nameRange.count else { return false }
            guard let given = utf8.baseAddress, let stored = buffer.baseAddress else { return utf8.isEmpty }
            return memcmp(given, stored + nameRange.lowerBound, utf8.count) == 0
        }
    }

    /// Visits the field table in order: name id, type and payload, until `body` returns false.
    /// The table must have been checked (as ``init(_:)`` does).
    @inline(__always)
    static func forEachField(
        _ buffer: UnsafeRawBufferPointer, count: Int, tableStart: Int, payloadStart: Int,
        _ body: (Int64, FieldType, UnsafeRawBufferPointer) throws -> Bool
    ) rethrows {
        var i = tableStart
        var offset = payloadStart
        for _ in 0..<count {
            // The table was checked: plain reads, no error paths.
            let id = Int64(bitPattern: readVarint(buffer, &i))
            guard i < buffer.count, let type = FieldType.decoded(buffer[i]) else { return }
            i += 1
            let length = Int(truncatingIfNeeded: readVarint(buffer, &i))
            guard length >= 0, length <= buffer.count - offset else { return }
            if try !body(id, type, UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length])) { return }
            offset += length
        }
    }

    /// A varint at `i` of a checked buffer (stops at the end rather than failing).
    @inline(__always)
    static func readVarint(_ buffer: UnsafeRawBufferPointer, _ i: inout Int) -> UInt64 {
        // Most varints of a record (name ids, types' lengths, short payload sizes) are one byte.
        if i < buffer.count, buffer[i] < 0x80 {
            defer { i += 1 }
            return UInt64(buffer[i])
        }
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while i < buffer.count {
            let b = buffer[i]
            i += 1
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 || shift >= 63 { return result }
            shift += 7
        }
        return result
    }

    /// The type and payload of the field with name id `id`, if the record has it.
    @inline(__always)
    func payload(of id: Int64) -> (type: FieldType, bytes: UnsafeRawBufferPointer)? {
        var found: (FieldType, UnsafeRawBufferPointer)?
        Self.forEachField(buffer, count: count, tableStart: tableStart, payloadStart: payloadStart) { fieldID, type, payload in
            if fieldID == id {
                found = (type, payload)
                return false
            }
            return true
        }
        return found
    }

    /// The value of the field with name id `id` (unresolved: references in no zone, assets
    /// in no folder), if the record has it.
    func value(of id: Int64) -> FieldValue? {
        guard let (type, bytes) = payload(of: id) else { return nil }
        return RecordCodec.decodeChecked(bytes, type: type)
    }
}

extension RecordView {
    /// The record as a client sees it: IDs in the table's zone, the fields the table's
    /// selection keeps, still encoded (copied into `arena`). `id` is the record's ID when
    /// the caller has it (a fetch by ID), so that the name need not be decoded again.
    func makeRecord<Store>(
        id: Record.ID?, table: FieldNameTable, arena: inout FieldArenaWriter, names: inout NameResolver<Store>
    ) throws -> Record {
        // Only checked payloads may be handed out: decoding them later cannot fail.
        precondition(checked.covers(table.selection), "RecordView.makeRecord: the returned fields were not checked")
        let zoneID = table.zoneID
        // The system fields stay as stored until read (``StoredSystemFields``); the table
        // learns the users' names now, while the transaction is open.
        try table.registerUsers(of: self, names: &names)
        let system = StoredSystemFields(self, names: table)
        let parent = parentRange.map { Record.Reference(recordID: Record.ID(recordName: string($0), zoneID: zoneID), action: .none) }
        let recordType = try names.name(type)
        let recordID = id ?? Record.ID(recordName: recordName, zoneID: zoneID)
        if recordType == Record.SystemType.share {
            // A share's state is in reserved fields, which `Share.restore` reads and removes:
            // they are read whatever the desired keys, from a view that checks every field.
            var values: [String: FieldValue] = [:]
            if count > 0 {
                let everything = FieldNameTable(
                    zoneID: zoneID, assetDirectory: table.assetDirectory, selection: .all, cipher: table.cipher)
                values = try EncodedFields(RecordView(buffer, checking: .all), table: everything, arena: &arena, names: &names).allValues()
                if let wanted = table.selection.ids {
                    var keep = Share.internalKeys
                    for id in wanted { keep.insert(try names.name(id)) }
                    values = values.filter { keep.contains($0.key) }
                }
            }
            return Share.restore(
                from: Record(recordType: recordType, recordID: recordID, values: values, parent: parent, system: system.decoded))
        }
        if count == 0 || table.selection.ids?.isEmpty == true {
            return Record(recordType: recordType, recordID: recordID, encoded: nil, parent: parent, system: consume system)
        }
        let encoded = try EncodedFields(self, table: table, arena: &arena, names: &names)
        if table.holdsEncryptedNames {
            // Encrypted fields are decrypted here, once, so that a wrong key fails the read
            // (a field read later could not throw); the record keeps decoded values.
            var values = encoded.allValues()
            if values.keys.contains(where: Record.isEncryptedKey) {
                try table.cipher.openAll(&values, recordName: recordID.recordName)
                return Record(recordType: recordType, recordID: recordID, values: values, parent: parent, system: system.decoded)
            }
        }
        if encoded.hasAssets {
            // An `Asset` is a class: decoded once, every read returns the same instance.
            return Record(recordType: recordType, recordID: recordID, values: encoded.allValues(), parent: parent, system: system.decoded)
        }
        return Record(
            recordType: recordType, recordID: consume recordID, encoded: consume encoded, parent: consume parent, system: consume system)
    }
}

/// A view's fields as predicates and order keys read them.
struct ViewFields: PredicateFields {
    let view: RecordView
    /// The name ids of the fields the query reads (a name the store never saw is absent).
    let ids: FieldIDs
    /// The creator's and last modifier's names, when the query reads them.
    let creator: String?
    let modifier: String?

    func value(forKey key: String) -> FieldValue? {
        func reference(_ name: String) -> FieldValue { .reference(Record.Reference(recordID: Record.ID(recordName: name), action: .none)) }
        switch key {
        case Record.SystemFieldKey.recordID: return reference(view.recordName)
        case Record.SystemFieldKey.creationDate: return .date(Date(timeIntervalSinceReferenceDate: view.creationDate))
        case Record.SystemFieldKey.modificationDate: return .date(Date(timeIntervalSinceReferenceDate: view.modificationDate))
        case Record.SystemFieldKey.creatorUserRecordID: return creator.map(reference)
        case Record.SystemFieldKey.lastModifiedUserRecordID: return modifier.map(reference)
        case Record.SystemFieldKey.parent: return view.parentRange.map { reference(view.string($0)) }
        case Record.SystemFieldKey.share: return view.shareRange.map { reference(view.string($0)) }
        default: return ids.id(of: key).flatMap { view.value(of: $0) }
        }
    }

    func compareString(forKey key: String, with constant: String) -> Int? {
        guard let id = ids.id(of: key), let (type, bytes) = view.payload(of: id), type == .string else { return nil }
        // Bytes that are not ASCII take the decoding path, which repairs damaged UTF-8 the
        // same way for every condition (a stored string is otherwise its own UTF-8).
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        return PredicateEvaluator.compareUTF8(bytes, b: constant)
    }

    func values(named keys: [String]?) -> [FieldValue] {
        if let keys { return keys.compactMap { key in ids.id(of: key).flatMap { view.value(of: $0) } } }
        var values: [FieldValue] = []
        RecordView.forEachField(view.buffer, count: view.count, tableStart: view.tableStart, payloadStart: view.payloadStart) {
            _, type, payload in
            if let value = RecordCodec.decodeChecked(payload, type: type) { values.append(value) }
            return true
        }
        return values
    }
}

/// The name ids of the few fields a query reads. A scan comparing short strings (their
/// bytes, inline) costs less than hashing the name on every candidate.
struct FieldIDs {
    private let entries: [(name: String, id: Int64)]

    init(_ ids: [String: Int64]) { entries = ids.map { ($0.key, $0.value) } }

    @inline(__always)
    func id(of name: String) -> Int64? {
        for entry in entries where entry.name == name { return entry.id }
        return nil
    }
}
