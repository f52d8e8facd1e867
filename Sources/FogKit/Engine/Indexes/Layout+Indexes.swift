import FogStorage
import Foundation

/// Keys of the `indexes` table and of index definitions in `schema`.
///
/// Every index key is a tuple that starts with (zone id, record type id, field id); a record
/// type's records themselves are found by scanning `records` (see `Engine.scanRecords`):
///
/// | entry | key |
/// |---|---|
/// | a value (queryable / sortable; one per list element; null when absent and sortable) | (zone, type, field, 0, value) |
/// | a location cell | (zone, type, field, 1, latitude cell, longitude cell) |
/// | a text token of a searchable field | (zone, type, -1, token) |
///
/// The table is multi-value with fixed-size values (``Layout/indexTableLayout``): the values of a
/// key are the row ids of its records, 8 bytes big-endian each (`bigEndianKey(row)`), so an
/// entry is a (key, row) pair, a key shared by many records is stored once, and a key's rows
/// read in row order. `Docs/OnDiskFormat.md` describes the table; change both together.
extension Layout {
    static let metaSchemaVersion: [UInt8] = Array("schemaVersion".utf8)

    /// `schema`: ("x", record type id, field id) → one byte of ``IndexOptions``.
    static func indexDefinitionKey(type: Int64, field: Int64) -> [UInt8] {
        schemaKey("x", type: type, field: field)
    }

    static let indexDefinitionPrefix: [UInt8] = {
        var w = KeyWriter(capacity: 4)
        w.append("x")
        return w.bytes
    }()

    /// `schema`: ("b", record type id, field id) → BE64 last row done, while the field's index
    /// is being built for the records stored before it was declared (absent once ready).
    static func indexBuildKey(type: Int64, field: Int64) -> [UInt8] {
        schemaKey("b", type: type, field: field)
    }

    static let indexBuildPrefix: [UInt8] = {
        var w = KeyWriter(capacity: 4)
        w.append("b")
        return w.bytes
    }()

    /// `schema`: ("d", record type id, field id) → ∅, while the stale entries of a removed or
    /// changed index are being deleted: every key of the `indexes` table that starts with
    /// (zone, type, field) for any zone (field -1: the type's text tokens). Absent once they are gone.
    static func indexDropKey(type: Int64, field: Int64) -> [UInt8] {
        schemaKey("d", type: type, field: field)
    }

    /// ("d", record type id): the drop markers of one record type (all of them with `type` nil).
    static func indexDropPrefix(type: Int64?) -> [UInt8] {
        var w = KeyWriter(capacity: 12)
        w.append("d")
        if let type { w.append(type) }
        return w.bytes
    }

    /// (zone, type, field): every entry of one field (field -1: the tokens) in one zone.
    static func indexFieldPrefix(zone: Int64, type: Int64, field: Int64) -> [UInt8] {
        var w = KeyWriter(capacity: 32)
        w.append(zone)
        w.append(type)
        w.append(field)
        return w.bytes
    }

    /// The field id of the text-token entries.
    static let tokensField: Int64 = -1
    static let valueKind: Int64 = 0
    static let cellKind: Int64 = 1

    /// (zone, type, field, 0): the value entries of a field.
    static func valuePrefix(zone: Int64, type: Int64, field: Int64) -> [UInt8] {
        fieldPrefix(zone: zone, type: type, field: field, kind: valueKind)
    }

    /// (zone, type, field, 1): the location cells of a field.
    static func cellPrefix(zone: Int64, type: Int64, field: Int64) -> [UInt8] {
        fieldPrefix(zone: zone, type: type, field: field, kind: cellKind)
    }

    private static func fieldPrefix(zone: Int64, type: Int64, field: Int64, kind: Int64) -> [UInt8] {
        var w = KeyWriter(capacity: 40)
        w.append(zone)
        w.append(type)
        w.append(field)
        w.append(kind)
        return w.bytes
    }

    /// (zone, type, -1): the token entries of a record type.
    static func tokenPrefix(zone: Int64, type: Int64) -> [UInt8] {
        var w = KeyWriter(capacity: 40)
        w.append(zone)
        w.append(type)
        w.append(tokensField)
        return w.bytes
    }
}

/// A value as it appears in index keys and order keys. Its tuple encoding orders values as
/// queries compare them: numbers by value (`-0.0` as `0.0`), strings and references by UTF-8
/// bytes, dates by time, bytes lexicographically; `null` (a missing value) first. Long
/// strings and byte strings are cut to a bounded prefix in index keys (``append(to:)``) and
/// kept whole after it in order keys (``appendOrdered(to:)``).
enum IndexValue: Hashable, Sendable {
    // Equality and hashing follow the encoding (strings by their bytes, `-0.0` as `0.0`), not
    // Swift's `String ==`, which finds "é" and "e\u{301}" equal although their entries differ.
    // Two integers, two hashes, and two strings that are never cut (``isLong(_:)``) are
    // compared without encoding them (an array each): their encodings are equal exactly when
    // their values, or bytes, are.
    static func == (a: IndexValue, b: IndexValue) -> Bool {
        switch (a, b) {
        case (.int(let x), .int(let y)), (.hash(let x), .hash(let y)):
            return x == y
        case (.string(let x), .string(let y)):
            let (m, n) = (x.utf8.count, y.utf8.count)
            guard m <= maximumKeptLength / 2, n <= maximumKeptLength / 2 else { return a.encoded == b.encoded }
            return m == n && x.utf8.elementsEqual(y.utf8)
        default:
            return a.encoded == b.encoded
        }
    }
    func hash(into hasher: inout Hasher) { hasher.combine(encoded) }

    case null
    case string(String)
    case int(Int64)
    case double(Double)
    case date(Double)
    case bytes(Data)
    /// The 64-bit FNV-1a hash of a long string or byte string in a field that is queryable
    /// but not sortable: equality needs no order, and 8 bytes replace the value in the key.
    case hash(Int64)

    /// The value of a scalar field as indexed; `nil` for types without value entries
    /// (locations, assets, lists).
    init?(_ value: FieldValue) {
        switch value {
        case .string(let s): self = .string(s)
        case .int64(let i): self = .int(i)
        case .double(let d): self = .double(d)
        case .date(let d): self = .date(d.timeIntervalSinceReferenceDate)
        case .bytes(let b): self = .bytes(b)
        case .reference(let r): self = .string(r.recordID.recordName)
        default: return nil
        }
    }

    /// The values of a field's index entries: one for a scalar, one per distinct element of
    /// a list.
    static func entries(of value: FieldValue) -> [IndexValue] {
        switch value {
        case .stringList(let l): return unique(l.map { .string($0) })
        case .int64List(let l): return unique(l.map { .int($0) })
        case .doubleList(let l): return unique(l.map { .double($0) })
        case .dateList(let l): return unique(l.map { .date($0.timeIntervalSinceReferenceDate) })
        case .bytesList(let l): return unique(l.map { .bytes($0) })
        case .referenceList(let l): return unique(l.map { .string($0.recordID.recordName) })
        default: return IndexValue(value).map { [$0] } ?? []
        }
    }

    /// The values without repeats, in their order. Lists are usually short: up to 16 values
    /// each is compared with the ones kept (for a list of three strings, a set's storage, its
    /// growth and the encoding each hash makes cost 12,000 instructions); longer lists go
    /// through a set. Both treat two values as the same when `==` does.
    static func unique(_ values: [IndexValue]) -> [IndexValue] {
        if values.count <= 16 {
            var kept: [IndexValue] = []
            kept.reserveCapacity(values.count)
            for value in values where !kept.contains(value) { kept.append(value) }
            return kept
        }
        var seen: Set<IndexValue> = []
        return values.filter { seen.insert($0).inserted }
    }

    /// Appends the value as index keys hold it: a long string or byte string is cut to a
    /// bounded prefix (see ``maximumKeptLength``).
    func append(to w: inout KeyWriter) {
        switch self {
        case .null: w.appendNull()
        case .string(let s):
            if !Self.appendTruncated(tag: Self.stringTag, s.utf8, to: &w) { w.append(s) }
        case .int(let i): w.append(i)
        case .double(let d): w.append(d == 0 ? 0.0 : d)
        case .date(let d): w.append(Date(timeIntervalSinceReferenceDate: d == 0 ? 0.0 : d))
        case .bytes(let b):
            if !Self.appendTruncated(tag: Self.bytesTag, b, to: &w) { w.append(bytes: b) }
        case .hash(let h): w.append(h)
        }
    }

    /// Appends the value as order keys hold it, which order exactly: a long value's index
    /// element (its bounded prefix and the marker), then its whole element. Values whose index
    /// elements differ order by them; values that share a truncated element order by the whole
    /// value after it. Short values are as in ``append(to:)``.
    func appendOrdered(to w: inout KeyWriter) {
        append(to: &w)
        switch self {
        case .string(let s) where Self.isLong(s.utf8): w.append(s)
        case .bytes(let b) where Self.isLong(b): w.append(bytes: b)
        default: break
        }
    }

    // MARK: - Long values

    /// The most escaped payload bytes an index key keeps of a string or byte string.
    ///
    /// A key of the `indexes` table is at most 28 bytes of prefix (zone, type, field, kind)
    /// and the value element; LMDB refuses keys above 511 bytes (`maximumKeySize`). A value
    /// whose escaped payload (each `00` written `00 FF`) is longer is indexed by its first 400
    /// payload bytes (401 when the 400th starts an escape pair) followed by `FF` instead of the
    /// `00` terminator: `tag, prefix, FF`, at most 403 bytes. Its order is kept: the element
    /// sorts after every shorter value it continues and before every value whose payload
    /// differs later, and values that share the prefix share the key, so a lookup of one finds
    /// them all and the evaluator keeps the right ones (`Docs/OnDiskFormat.md`).
    static let maximumKeptLength = 400
    /// The longest key of the `indexes` table: a prefix of three Int64 elements of at most 9
    /// bytes and a kind of at most 2, then a truncated element (tag, 401 bytes, marker).
    static let largestIndexKey = 3 * 9 + 2 + maximumKeptLength + 3
    static let stringTag: UInt8 = 0x02
    static let bytesTag: UInt8 = 0x01
    /// The byte that ends a truncated element in place of the terminator.
    static let truncationMarker: UInt8 = 0xFF

    /// Whether a payload's escaped length is above ``maximumKeptLength``.
    static func isLong(_ payload: some Collection<UInt8>) -> Bool {
        let count = payload.count
        if count <= maximumKeptLength / 2 { return false }
        if count > maximumKeptLength { return true }
        return count + payload.lazy.filter { $0 == 0 }.count > maximumKeptLength
    }

    /// Appends `tag`, the payload's escaped prefix and the marker when the payload is long;
    /// returns whether it did.
    private static func appendTruncated(tag: UInt8, _ payload: some Collection<UInt8>, to w: inout KeyWriter) -> Bool {
        guard isLong(payload) else { return false }
        w.appendRawByte(tag)
        var kept = 0
        for byte in payload {
            w.appendRawByte(byte)
            kept += 1
            if byte == 0 {
                w.appendRawByte(0xFF)
                kept += 1
            }
            if kept >= maximumKeptLength { break }
        }
        w.appendRawByte(truncationMarker)
        return true
    }

    /// Whether an index element (the bytes after a field's value prefix) is a truncated one.
    static func isTruncatedElement(_ element: some BidirectionalCollection<UInt8>) -> Bool {
        guard let first = element.first, first == stringTag || first == bytesTag else { return false }
        return element.count > 2 && element.last == truncationMarker
    }

    /// The index element of an order-key element written by ``appendOrdered(to:)``: the
    /// element itself when short, the truncated element that precedes the whole value when
    /// long; `nil` when the bytes are neither (a damaged or forged cursor).
    static func indexElement(ofOrdered element: [UInt8]) -> [UInt8]? {
        guard let first = element.first, first == stringTag || first == bytesTag, element.count > maximumKeptLength + 3 else {
            return element
        }
        var i = 1
        while i - 1 < maximumKeptLength, i < element.count {
            i += element[i] == 0 ? 2 : 1
        }
        guard i < element.count, element[i] == truncationMarker else { return nil }
        return Array(element[...i])
    }

    /// Values longer than this many bytes are hashed in queryable-only indexes.
    static let hashThreshold = 16

    /// The form the value takes in the entries of a field with `options`: long strings and
    /// bytes are hashed when the field is not sortable (no range or order reads them).
    func keyed(for options: IndexOptions) -> IndexValue {
        guard !options.contains(.sortable) else { return self }
        switch self {
        case .string(let s) where s.utf8.count > Self.hashThreshold: return .hash(Int64(bitPattern: fnv1a(s.utf8)))
        case .bytes(let b) where b.count > Self.hashThreshold: return .hash(Int64(bitPattern: fnv1a(b)))
        default: return self
        }
    }

    var encoded: [UInt8] {
        var w = KeyWriter(capacity: 16)
        append(to: &w)
        return w.bytes
    }
}
