import Foundation

/// CloudKit Web Services' JSON dictionaries, and their conversion to and from FogKit's
/// ``Record`` and ``RecordZone/ID``.
///
/// These are the shapes that CloudKit's REST API and CloudKit JS exchange: the record
/// dictionary (``RecordDictionary``), the field-value dictionary with its type name
/// (``FieldValueDictionary``, ``FieldType``), the zone ID (``ZoneID``), and the location,
/// reference and asset dictionaries they contain. `fog export` and `fog import` write and
/// read them, one record per line; a server that speaks CloudKit's protocol reuses them.
///
/// ```swift
/// let dictionary = try WebServices.RecordDictionary(record)
/// let line = try WebServices.encode(dictionary)            // one line of JSON
/// let back = try Record(try WebServices.decodeRecord(from: line))
/// ```
///
/// Decoding checks every value against its type name and throws ``FormatError``, which
/// names the field, for anything CloudKit would refuse: an unknown type name, a value of
/// another type, a number out of range or not finite, a missing `recordName`.
public enum WebServices {
    /// The JSON encoder the dictionaries are written with: sorted keys (so that the same
    /// record always prints the same bytes), slashes unescaped, doubles that are not finite
    /// refused.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Encodes a record dictionary as one line of compact JSON (no newline at the end), with
    /// ``JSONWriter``.
    /// - Throws: ``FormatError`` for a double that is not finite.
    public static func encode(_ record: RecordDictionary) throws(FormatError) -> Data {
        var writer = JSONWriter()
        try writer.write(record)
        return Data(writer.bytes)
    }

    /// Encodes a dictionary as one line of compact JSON (no newline at the end).
    /// - Throws: ``FormatError`` when a value cannot be written (a double that is not finite).
    public static func encode(_ value: some Encodable) throws(FormatError) -> Data {
        do {
            return try makeEncoder().encode(value)
        } catch let error as FormatError {
            throw error
        } catch {
            throw FormatError(error)
        }
    }

    /// Decodes a record dictionary from JSON.
    /// - Throws: ``FormatError`` naming the field that is wrong.
    public static func decodeRecord(from json: Data) throws(FormatError) -> RecordDictionary {
        try decode(RecordDictionary.self, from: json)
    }

    /// Decodes any of the dictionaries from JSON, turning decoding errors into ``FormatError``.
    public static func decode<T: Decodable>(_ type: T.Type, from json: Data) throws(FormatError) -> T {
        do {
            return try JSONDecoder().decode(type, from: json)
        } catch let error as FormatError {
            throw error
        } catch {
            throw FormatError(error)
        }
    }
}

extension WebServices {
    /// A dictionary that does not follow CloudKit Web Services' format, or a value FogKit
    /// cannot store; ``field`` says where.
    public struct FormatError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The path of the offending key, such as `fields.title.value` or `recordName`;
        /// empty when the JSON itself is malformed.
        public var field: String
        /// What is wrong there.
        public var reason: String

        /// Creates an error about `field`.
        public init(field: String, reason: String) {
            self.field = field
            self.reason = reason
        }

        /// An error at the coding path of a decoder or encoder.
        init(_ path: [any CodingKey], _ reason: String) {
            self.init(field: Self.path(path), reason: reason)
        }

        /// The format error that a JSON decoder's or encoder's error describes, with the path
        /// it names (a `FormatError` stays as it is).
        public init(_ error: any Error) {
            if let error = error as? FormatError {
                self = error
                return
            }
            switch error {
            case DecodingError.keyNotFound(let key, let context):
                self.init(context.codingPath + [key], "is missing")
            case DecodingError.typeMismatch(let type, let context):
                self.init(context.codingPath, "is not \(Self.describe(type))")
            case DecodingError.valueNotFound(let type, let context):
                self.init(context.codingPath, "is null, expected \(Self.describe(type))")
            case DecodingError.dataCorrupted(let context):
                self.init(context.codingPath, context.codingPath.isEmpty ? "malformed JSON" : "is not valid: \(context.debugDescription)")
            case EncodingError.invalidValue(_, let context):
                self.init(context.codingPath, context.debugDescription)
            default:
                self.init(field: "", reason: "\(error)")
            }
        }

        static func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
        }

        private static func describe(_ type: Any.Type) -> String {
            switch type {
            case is String.Type: "a string"
            case is Int64.Type, is Int.Type: "an integer"
            case is Double.Type: "a number"
            case is Bool.Type: "a boolean"
            default: "a \(type)"
            }
        }

        /// `field: reason`.
        public var description: String { field.isEmpty ? reason : "\(field): \(reason)" }
    }
}

/// A coding key made from any string, for dictionaries of field names.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ string: String) {
        stringValue = string
        intValue = nil
    }
    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }
}
