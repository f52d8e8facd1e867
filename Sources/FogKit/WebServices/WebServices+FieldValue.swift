import Foundation

extension WebServices {
    /// A field-value dictionary: `{"value": …, "type": "…"}`.
    ///
    /// Decoding checks the value against the type name, element by element for lists. When
    /// `type` is left out (requests may), it is worked out from the JSON: a string is
    /// `STRING`, an integer `INT64`, another number `DOUBLE`, an object with `latitude`
    /// `LOCATION`, one with `recordName` `REFERENCE`, one with `downloadURL`, `size` or
    /// `fileChecksum` `ASSETID`, and an array the list of its first element's type
    /// (`UNKNOWN_LIST` when empty). The empty dictionary `{}` decodes with neither (CloudKit's
    /// "clear this field").
    public struct FieldValueDictionary: Codable, Sendable, Hashable {
        /// The value; `nil` only for `{}`.
        public var value: Value?
        /// The type name; `nil` only for `{}`.
        public var type: FieldType?
        /// `true` for a field of the record's ``Record/encryptedValues`` (CloudKit Web
        /// Services' `"isEncrypted": true`), whose value is given in plain; `nil` otherwise.
        public var isEncrypted: Bool?

        /// Creates a field-value dictionary; `type` defaults to the value's own.
        public init(value: Value, type: FieldType? = nil) {
            self.value = value
            self.type = type ?? value.inferredType
        }

        /// The `{}` dictionary, which clears a field.
        public static let clear = FieldValueDictionary(clearing: ())
        private init(clearing: Void) {}

        enum CodingKeys: String, CodingKey { case value, type, isEncrypted }

        /// Decodes a field-value dictionary (see the type's description).
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            isEncrypted = try c.decodeIfPresent(Bool.self, forKey: .isEncrypted)
            var type: FieldType?
            if let name = try c.decodeIfPresent(String.self, forKey: .type) {
                guard let known = FieldType(name: name) else {
                    throw FormatError(c.codingPath + [CodingKeys.type], "unknown type \"\(name)\"")
                }
                type = known
            }
            guard c.contains(.value) else {
                if type == nil { return }  // {}: clear the field
                throw FormatError(c.codingPath + [CodingKeys.value], "is missing")
            }
            // Fast paths for the common types straight from the container; anything else, and
            // any value that does not fit, goes through the general decoder for its error.
            if let type, let fast = Self.fast(c, type) {
                self.type = type
                self.value = fast
                return
            }
            if try c.decodeNil(forKey: .value) { throw FormatError(c.codingPath + [CodingKeys.value], "is null") }
            let decoded = try Value.decode(from: try c.superDecoder(forKey: .value), type: type)
            self.type = decoded.type
            self.value = decoded.value
        }

        private static func fast(_ c: KeyedDecodingContainer<CodingKeys>, _ type: FieldType) -> Value? {
            switch type {
            case .string: return (try? c.decode(String.self, forKey: .value)).map(Value.string)
            case .int64: return (try? c.decode(Int64.self, forKey: .value)).map(Value.int64)
            case .timestamp: return (try? c.decode(Int64.self, forKey: .value)).map(Value.timestamp)
            case .stringList: return (try? c.decode([String].self, forKey: .value)).map { .list($0.map(Value.string)) }
            case .int64List: return (try? c.decode([Int64].self, forKey: .value)).map { .list($0.map(Value.int64)) }
            case .timestampList: return (try? c.decode([Int64].self, forKey: .value)).map { .list($0.map(Value.timestamp)) }
            default: return nil
            }
        }

        /// Encodes `value` and `type`, or `{}`.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            if let value { try value.encode(to: c.superEncoder(forKey: .value)) }
            try c.encodeIfPresent(type, forKey: .type)
            if isEncrypted == true { try c.encode(true, forKey: .isEncrypted) }
        }
    }

    /// A field's value in Web Services' form: the JSON shape of one of the ``FieldType``s.
    public indirect enum Value: Sendable, Hashable, Encodable {
        /// `STRING`
        case string(String)
        /// `INT64`
        case int64(Int64)
        /// `DOUBLE` (finite)
        case double(Double)
        /// `TIMESTAMP`, in milliseconds since 1970.
        case timestamp(Int64)
        /// `BYTES` (base64 in JSON)
        case bytes(Data)
        /// `LOCATION`
        case location(LocationDictionary)
        /// `REFERENCE`
        case reference(ReferenceDictionary)
        /// `ASSETID`
        case asset(AssetDictionary)
        /// A `*_LIST`: elements of one type.
        case list([Value])

        /// The type a value has on its own (lists by their first element, `UNKNOWN_LIST` when empty).
        public var inferredType: FieldType {
            switch self {
            case .string: .string
            case .int64: .int64
            case .double: .double
            case .timestamp: .timestamp
            case .bytes: .bytes
            case .location: .location
            case .reference: .reference
            case .asset: .assetID
            case .list(let items): items.first?.inferredType.list ?? .unknownList
            }
        }

        /// Encodes the value's JSON form.
        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .string(let s): try s.encode(to: encoder)
            case .int64(let v), .timestamp(let v): try v.encode(to: encoder)
            case .double(let d):
                guard d.isFinite else { throw FormatError(encoder.codingPath, "\(d) is not a finite number") }
                try d.encode(to: encoder)
            case .bytes(let data): try data.base64EncodedString().encode(to: encoder)
            case .location(let l): try l.encode(to: encoder)
            case .reference(let r): try r.encode(to: encoder)
            case .asset(let a): try a.encode(to: encoder)
            case .list(let items):
                var c = encoder.unkeyedContainer()
                for item in items { try c.encode(item) }
            }
        }

        /// Decodes a value of `type`, or works the type out when it is `nil`.
        static func decode(from decoder: any Decoder, type: FieldType?) throws -> (value: Value, type: FieldType) {
            guard let type else { return try infer(from: decoder) }
            if let element = type.element {
                var c = try decoder.unkeyedContainer()
                var items: [Value] = []
                if let count = c.count { items.reserveCapacity(count) }
                while !c.isAtEnd { items.append(try scalar(from: try c.superDecoder(), type: element)) }
                return (.list(items), type)
            }
            if type == .unknownList {
                var c = try decoder.unkeyedContainer()
                guard c.isAtEnd else { throw FormatError(decoder.codingPath, "an UNKNOWN_LIST must be empty") }
                _ = try? c.decodeNil()
                return (.list([]), type)
            }
            return (try scalar(from: decoder, type: type), type)
        }

        /// Decodes one value of the scalar `type`.
        static func scalar(from decoder: any Decoder, type: FieldType) throws -> Value {
            switch type {
            case .string:
                let c = try decoder.singleValueContainer()
                guard let s = try? c.decode(String.self) else { throw FormatError(decoder.codingPath, "is not a string (type STRING)") }
                return .string(s)
            case .int64:
                let c = try decoder.singleValueContainer()
                if let v = try? c.decode(Int64.self) { return .int64(v) }
                if let s = try? c.decode(String.self), let v = Int64(s) { return .int64(v) }
                throw FormatError(decoder.codingPath, "is not a 64-bit integer (type INT64)")
            case .double:
                let c = try decoder.singleValueContainer()
                var number = try? c.decode(Double.self)
                if number == nil, let s = try? c.decode(String.self) { number = Double(s) }
                guard let d = number else { throw FormatError(decoder.codingPath, "is not a number (type DOUBLE)") }
                guard d.isFinite else { throw FormatError(decoder.codingPath, "is not a finite number (type DOUBLE)") }
                return .double(d)
            case .timestamp:
                do {
                    return .timestamp(try Milliseconds(from: decoder).value)
                } catch {
                    throw FormatError(decoder.codingPath, "is not an integer number of milliseconds (type TIMESTAMP)")
                }
            case .bytes:
                let c = try decoder.singleValueContainer()
                guard let s = try? c.decode(String.self), let data = Data(base64Encoded: s) else {
                    throw FormatError(decoder.codingPath, "is not base64 text (type BYTES)")
                }
                return .bytes(data)
            case .location: return .location(try keyed(LocationDictionary.self, decoder, "LOCATION"))
            case .reference: return .reference(try keyed(ReferenceDictionary.self, decoder, "REFERENCE"))
            case .assetID: return .asset(try keyed(AssetDictionary.self, decoder, "ASSETID"))
            default: throw FormatError(decoder.codingPath, "a list cannot hold a \(type.rawValue)")
            }
        }

        private static func keyed<T: Decodable>(_ type: T.Type, _ decoder: any Decoder, _ name: String) throws -> T {
            do {
                _ = try decoder.container(keyedBy: AnyCodingKey.self)
            } catch {
                throw FormatError(decoder.codingPath, "is not an object (type \(name))")
            }
            do {
                return try T(from: decoder)
            } catch let error as FormatError {
                throw error
            } catch {
                throw FormatError(error)
            }
        }

        /// Works out the type of a value sent without one.
        private static func infer(from decoder: any Decoder) throws -> (value: Value, type: FieldType) {
            if var list = try? decoder.unkeyedContainer() {
                guard !list.isAtEnd else { return (.list([]), .unknownList) }
                let first = try infer(from: try list.superDecoder()).type
                guard let listType = first.list else { throw FormatError(decoder.codingPath, "a list cannot hold lists") }
                return try decode(from: decoder, type: listType)
            }
            if let keys = try? decoder.container(keyedBy: AnyCodingKey.self) {
                let names = Set(keys.allKeys.map(\.stringValue))
                if names.contains("latitude") { return (try scalar(from: decoder, type: .location), .location) }
                if names.contains("recordName") { return (try scalar(from: decoder, type: .reference), .reference) }
                if !names.isDisjoint(with: ["downloadURL", "size", "fileChecksum", "receipt"]) {
                    return (try scalar(from: decoder, type: .assetID), .assetID)
                }
                throw FormatError(decoder.codingPath, "an object of unknown type; give its \"type\"")
            }
            let c = try decoder.singleValueContainer()
            if let s = try? c.decode(String.self) { return (.string(s), .string) }
            if let v = try? c.decode(Int64.self) { return (.int64(v), .int64) }
            if (try? c.decode(Double.self)) != nil { return (try scalar(from: decoder, type: .double), .double) }
            throw FormatError(decoder.codingPath, "a value of unknown type; give its \"type\"")
        }
    }
}
