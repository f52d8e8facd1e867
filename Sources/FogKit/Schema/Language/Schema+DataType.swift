extension Schema {
    /// The type of a field (the grammar's `data-type`): a primitive type, or a list of one.
    ///
    /// The static members name the plain types, so `.string` and `.list(.reference)` read as
    /// the schema text does.
    public enum DataType: Sendable, Hashable, CustomStringConvertible {
        /// A single value, such as `STRING` or `ENCRYPTED BYTES`.
        case primitive(PrimitiveType)
        /// `LIST<…>`: a list of values of one primitive type. Lists do not nest.
        case list(PrimitiveType)

        /// `ASSET`.
        public static let asset = DataType.primitive(.asset)
        /// `BYTES`.
        public static let bytes = DataType.primitive(.bytes)
        /// `DOUBLE`.
        public static let double = DataType.primitive(.double)
        /// `INT64`.
        public static let int64 = DataType.primitive(.int64)
        /// `LOCATION`.
        public static let location = DataType.primitive(.location)
        /// `REFERENCE`.
        public static let reference = DataType.primitive(.reference)
        /// `STRING`.
        public static let string = DataType.primitive(.string)
        /// `TIMESTAMP`.
        public static let timestamp = DataType.primitive(.timestamp)

        /// The type of the values: the type itself, or a list's element type.
        public var element: PrimitiveType {
            switch self {
            case .primitive(let type), .list(let type): type
            }
        }

        /// Whether the type is a `LIST<…>`.
        public var isList: Bool {
            if case .list = self { return true }
            return false
        }

        /// The index options a field of this type can have.
        ///
        /// | type | options |
        /// |---|---|
        /// | `ENCRYPTED …`, `ASSET`, and lists of them | none |
        /// | `STRING`, `LIST<STRING>` | `QUERYABLE`, `SORTABLE`, `SEARCHABLE` |
        /// | every other type and list | `QUERYABLE`, `SORTABLE` |
        public var allowedIndexes: IndexOptions {
            switch element {
            case .encrypted, .asset: []
            case .string: [.queryable, .sortable, .searchable]
            default: [.queryable, .sortable]
            }
        }

        /// The FogKit ``FieldType`` of the field's values, or `nil` for `NUMBER` without
        /// `PREFERRED AS` and for `ENCRYPTED` types, which FogKit does not store yet.
        public var fieldType: FieldType? {
            let base: FieldType
            switch element {
            case .asset: base = .asset
            case .bytes: base = .bytes
            case .double, .number(preferredAs: .double): base = .double
            case .int64, .number(preferredAs: .int64): base = .int64
            case .location: base = .location
            case .reference: base = .reference
            case .string: base = .string
            case .timestamp: base = .timestamp
            case .number(preferredAs: nil), .encrypted: return nil
            }
            return isList ? FieldType(rawValue: base.rawValue | 0x10) : base
        }

        /// The type as the schema language writes it, such as `LIST<ENCRYPTED STRING>`.
        public var description: String {
            switch self {
            case .primitive(let type): type.description
            case .list(let type): "LIST<\(type)>"
            }
        }
    }

    /// A type a field or a list element can have (the grammar's `primitive-type`).
    public enum PrimitiveType: Sendable, Hashable, CustomStringConvertible {
        /// `ASSET`: a file stored outside the record.
        case asset
        /// `BYTES`: raw data.
        case bytes
        /// `DOUBLE`: a floating-point number.
        case double
        /// `INT64`: an integer (also booleans, as 0 and 1).
        case int64
        /// `LOCATION`: a geographic location.
        case location
        /// `REFERENCE`: a reference to a record in the same zone.
        case reference
        /// `STRING`: text.
        case string
        /// `TIMESTAMP`: a date.
        case timestamp
        /// `ENCRYPTED …`: a value only the user's devices can read; it takes no index options.
        case encrypted(EncryptableType)
        /// `NUMBER`, with `PREFERRED AS INT64` or `PREFERRED AS DOUBLE` when the number's
        /// representation is pinned. CloudKit creates it for fields saved in a sandbox.
        case number(preferredAs: NumberRepresentation?)

        /// The type as the schema language writes it, such as `NUMBER PREFERRED AS DOUBLE`.
        public var description: String {
            switch self {
            case .asset: "ASSET"
            case .bytes: "BYTES"
            case .double: "DOUBLE"
            case .int64: "INT64"
            case .location: "LOCATION"
            case .reference: "REFERENCE"
            case .string: "STRING"
            case .timestamp: "TIMESTAMP"
            case .encrypted(let type): "ENCRYPTED \(type.rawValue)"
            case .number(preferredAs: nil): "NUMBER"
            case .number(preferredAs: let representation?): "NUMBER PREFERRED AS \(representation.rawValue)"
            }
        }
    }

    /// The types that can be `ENCRYPTED`: every primitive type but `ASSET` (always encrypted)
    /// and `REFERENCE` (which the server must read).
    public enum EncryptableType: String, Sendable, Hashable, CaseIterable {
        /// `ENCRYPTED BYTES`.
        case bytes = "BYTES"
        /// `ENCRYPTED DOUBLE`.
        case double = "DOUBLE"
        /// `ENCRYPTED INT64`.
        case int64 = "INT64"
        /// `ENCRYPTED LOCATION`.
        case location = "LOCATION"
        /// `ENCRYPTED STRING`.
        case string = "STRING"
        /// `ENCRYPTED TIMESTAMP`.
        case timestamp = "TIMESTAMP"
    }

    /// How a `NUMBER` field's values are stored once pinned with `PREFERRED AS`.
    public enum NumberRepresentation: String, Sendable, Hashable, CaseIterable {
        /// `PREFERRED AS INT64`.
        case int64 = "INT64"
        /// `PREFERRED AS DOUBLE`.
        case double = "DOUBLE"
    }
}
