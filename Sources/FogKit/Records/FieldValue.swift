import Foundation

/// A value stored in a record field, in one of CloudKit's field types.
///
/// CloudKit stores strings, 64-bit integers, doubles, bytes, dates, locations,
/// references, assets, and homogeneous lists of each. Swift values convert to
/// and from `FieldValue` through ``RecordValueProtocol``: `Int`, `Bool` and the
/// other integer types are stored as ``int64(_:)`` and `Float` as
/// ``double(_:)``, as CloudKit stores them.
public enum FieldValue: Sendable, Hashable {
    /// A string (`STRING`).
    case string(String)
    /// A 64-bit signed integer (`INT64`); also holds `Int`, `Bool` and the other integer types.
    case int64(Int64)
    /// A double-precision number (`DOUBLE`); also holds `Float`.
    case double(Double)
    /// Raw bytes (`BYTES`).
    case bytes(Data)
    /// A point in time (`TIMESTAMP`).
    case date(Date)
    /// A geographic location (`LOCATION`).
    ///
    /// Stored out of line (`indirect`), as is ``reference(_:)``: their 64 and 49 bytes would
    /// otherwise size every `FieldValue` (and every field read's return value) at 65 bytes;
    /// the others fit in 17.
    indirect case location(Location)
    /// A reference to another record in the same zone (`REFERENCE`).
    indirect case reference(Record.Reference)
    /// A file stored beside the record (`ASSET`); not counted in the record's size limit.
    case asset(Asset)
    /// A list of strings (`LIST<STRING>`).
    case stringList([String])
    /// A list of integers (`LIST<INT64>`).
    case int64List([Int64])
    /// A list of doubles (`LIST<DOUBLE>`).
    case doubleList([Double])
    /// A list of byte strings (`LIST<BYTES>`).
    case bytesList([Data])
    /// A list of dates (`LIST<TIMESTAMP>`).
    case dateList([Date])
    /// A list of locations (`LIST<LOCATION>`).
    case locationList([Location])
    /// A list of references (`LIST<REFERENCE>`).
    case referenceList([Record.Reference])
    /// A list of assets (`LIST<ASSET>`).
    case assetList([Asset])

    /// The field type of the value, as the schema records it.
    public var fieldType: FieldType {
        switch self {
        case .string: .string
        case .int64: .int64
        case .double: .double
        case .bytes: .bytes
        case .date: .timestamp
        case .location: .location
        case .reference: .reference
        case .asset: .asset
        case .stringList: .stringList
        case .int64List: .int64List
        case .doubleList: .doubleList
        case .bytesList: .bytesList
        case .dateList: .timestampList
        case .locationList: .locationList
        case .referenceList: .referenceList
        case .assetList: .assetList
        }
    }
}

/// The type of a record field, fixed by the first value saved in it.
///
/// The raw values are FogKit's on-disk type codes; the ``name`` is the type's
/// name in CloudKit's schema language.
public enum FieldType: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `STRING`
    case string = 1
    /// `INT64`
    case int64 = 2
    /// `DOUBLE`
    case double = 3
    /// `BYTES`
    case bytes = 4
    /// `TIMESTAMP`
    case timestamp = 5
    /// `LOCATION`
    case location = 6
    /// `REFERENCE`
    case reference = 7
    /// `ASSET`
    case asset = 8
    /// `LIST<STRING>`
    case stringList = 0x11
    /// `LIST<INT64>`
    case int64List = 0x12
    /// `LIST<DOUBLE>`
    case doubleList = 0x13
    /// `LIST<BYTES>`
    case bytesList = 0x14
    /// `LIST<TIMESTAMP>`
    case timestampList = 0x15
    /// `LIST<LOCATION>`
    case locationList = 0x16
    /// `LIST<REFERENCE>`
    case referenceList = 0x17
    /// `LIST<ASSET>`
    case assetList = 0x18

    /// The type's name in CloudKit's schema language, such as `STRING` or `LIST<INT64>`.
    public var name: String {
        switch self {
        case .string: "STRING"
        case .int64: "INT64"
        case .double: "DOUBLE"
        case .bytes: "BYTES"
        case .timestamp: "TIMESTAMP"
        case .location: "LOCATION"
        case .reference: "REFERENCE"
        case .asset: "ASSET"
        case .stringList: "LIST<STRING>"
        case .int64List: "LIST<INT64>"
        case .doubleList: "LIST<DOUBLE>"
        case .bytesList: "LIST<BYTES>"
        case .timestampList: "LIST<TIMESTAMP>"
        case .locationList: "LIST<LOCATION>"
        case .referenceList: "LIST<REFERENCE>"
        case .assetList: "LIST<ASSET>"
        }
    }

    /// Whether the type is a list type.
    public var isList: Bool { rawValue & 0x10 != 0 }

    /// The schema-language name.
    public var description: String { name }
}
