extension WebServices {
    /// The type names of CloudKit Web Services' field-value dictionaries.
    ///
    /// `TIMESTAMP` values are integer milliseconds since 1970, `BYTES` values base64 text,
    /// and every `*_LIST` a JSON array of its element's form. `UNKNOWN_LIST` is what CloudKit
    /// answers for an empty list whose element type it does not know; FogKit reads it but
    /// cannot store it (a FogKit list always has an element type).
    public enum FieldType: String, Codable, Sendable, Hashable, CaseIterable {
        /// `STRING`: a JSON string.
        case string = "STRING"
        /// `INT64`: a JSON integer (or a string of digits, as `numbersAsStrings` sends it).
        case int64 = "INT64"
        /// `DOUBLE`: a finite JSON number.
        case double = "DOUBLE"
        /// `TIMESTAMP`: integer milliseconds since 1970-01-01 00:00 UTC.
        case timestamp = "TIMESTAMP"
        /// `BYTES`: base64 text.
        case bytes = "BYTES"
        /// `LOCATION`: a ``LocationDictionary``.
        case location = "LOCATION"
        /// `REFERENCE`: a ``ReferenceDictionary``.
        case reference = "REFERENCE"
        /// `ASSETID`: an ``AssetDictionary`` (decoding also accepts `ASSET`).
        case assetID = "ASSETID"
        /// `STRING_LIST`
        case stringList = "STRING_LIST"
        /// `INT64_LIST`
        case int64List = "INT64_LIST"
        /// `DOUBLE_LIST`
        case doubleList = "DOUBLE_LIST"
        /// `TIMESTAMP_LIST`
        case timestampList = "TIMESTAMP_LIST"
        /// `BYTES_LIST`
        case bytesList = "BYTES_LIST"
        /// `LOCATION_LIST`
        case locationList = "LOCATION_LIST"
        /// `REFERENCE_LIST`
        case referenceList = "REFERENCE_LIST"
        /// `ASSETID_LIST`
        case assetIDList = "ASSETID_LIST"
        /// `UNKNOWN_LIST`: an empty list of unknown element type.
        case unknownList = "UNKNOWN_LIST"

        /// The type of a name, accepting `ASSET` and `ASSET_LIST` for `ASSETID` and `ASSETID_LIST`.
        public init?(name: String) {
            switch name {
            case "ASSET": self = .assetID
            case "ASSET_LIST": self = .assetIDList
            default: self.init(rawValue: name)
            }
        }

        /// Whether the type is a list type.
        public var isList: Bool { element != nil || self == .unknownList }

        /// The element type of a list type; `nil` for the others.
        public var element: FieldType? {
            switch self {
            case .stringList: .string
            case .int64List: .int64
            case .doubleList: .double
            case .timestampList: .timestamp
            case .bytesList: .bytes
            case .locationList: .location
            case .referenceList: .reference
            case .assetIDList: .assetID
            default: nil
            }
        }

        /// The list type of an element type; `nil` for list types.
        public var list: FieldType? { FieldType.allCases.first { $0.element == self } }

        /// The Web Services type of a FogKit field type.
        public init(_ type: FogKit.FieldType) {
            switch type {
            case .string: self = .string
            case .int64: self = .int64
            case .double: self = .double
            case .bytes: self = .bytes
            case .timestamp: self = .timestamp
            case .location: self = .location
            case .reference: self = .reference
            case .asset: self = .assetID
            case .stringList: self = .stringList
            case .int64List: self = .int64List
            case .doubleList: self = .doubleList
            case .bytesList: self = .bytesList
            case .timestampList: self = .timestampList
            case .locationList: self = .locationList
            case .referenceList: self = .referenceList
            case .assetList: self = .assetIDList
            }
        }
    }
}
