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
/// bytes, dates by time, bytes lexicographically; `null` (a missing value) first.
enum IndexValue: Hashable, Sendable {
    // Equality and hashing follow the encoding (strings by their bytes, `-0.0` as `0.0`), not
    // Swift's `String ==`, which finds "é" and "e\u{301}" equal although their entries differ.
    static func == (a: IndexValue, b: IndexValue) -> Bool { a.encoded == b.encoded }
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

    private static func unique(_ values: [IndexValue]) -> [IndexValue] {
        var seen: Set<IndexValue> = []
        return values.filter { seen.insert($0).inserted }
    }

    func append(to w: inout KeyWriter) {
        switch self {
        case .null: w.appendNull()
        case .string(let s): w.append(s)
        case .int(let i): w.append(i)
        case .double(let d): w.append(d == 0 ? 0.0 : d)
        case .date(let d): w.append(Date(timeIntervalSinceReferenceDate: d == 0 ? 0.0 : d))
        case .bytes(let b): w.append(bytes: b)
        case .hash(let h): w.append(h)
        }
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
