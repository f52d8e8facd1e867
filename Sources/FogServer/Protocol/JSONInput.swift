import FogKit

/// A request body's JSON as read by ``JSONInput/init(parsing:)``: the quick path for the
/// endpoints that run most often (`records/lookup`), before Foundation's `JSONDecoder`.
///
/// The reader is strict RFC 8259 and answers `nil` for anything else, including what
/// `JSONDecoder` would accept and this reader does not handle (a byte-order mark, a key that
/// appears twice in one object): the caller then decodes the body with `JSONDecoder`, which
/// accepts or refuses it and names what is wrong. So a body this reader takes is one
/// `JSONDecoder` takes too, with the same meaning (`JSONInputTests` checks both on generated
/// and mutated bodies), and errors keep `JSONDecoder`'s wording.
indirect enum JSONInput: Equatable, Sendable {
    /// Members in the order sent; keys are distinct.
    case object([(String, JSONInput)])
    case array([JSONInput])
    case string(String)
    /// A number as its text, checked against JSON's grammar.
    case number(String)
    case bool(Bool)
    case null

    static func == (a: JSONInput, b: JSONInput) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.array(let x), .array(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.bool(let x), .bool(let y)): x == y
        case (.null, .null): true
        default: false
        }
    }

    /// The member `key` of an object; `nil` for a missing member or a value that is not an
    /// object.
    subscript(key: String) -> JSONInput? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    /// The parsed body, or `nil` when it is not JSON this reader takes. An empty body (or one
    /// of only white space) is `{}`, as the endpoints read it.
    init?(parsing bytes: [UInt8]) {
        var reader = JSONInputReader(bytes)
        reader.skipWhitespace()
        if reader.atEnd {
            self = .object([])
            return
        }
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipWhitespace()
        guard reader.atEnd else { return nil }
        self = value
    }
}

/// The reader behind ``JSONInput/init(parsing:)``: one pass over the bytes.
struct JSONInputReader {
    private let bytes: [UInt8]
    private var index = 0
    /// Nesting deeper than this is left to `JSONDecoder` (and its own limit).
    static let maximumDepth = 64

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) -> JSONInput? {
        guard depth < Self.maximumDepth, index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string().map(JSONInput.string)
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return literal("null") ? .null : nil
        default: return number()
        }
    }

    private mutating func object(depth: Int) -> JSONInput? {
        index += 1
        var members: [(String, JSONInput)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = string() else { return nil }
            guard !members.contains(where: { $0.0 == key }) else { return nil }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipWhitespace()
            guard let value = value(depth: depth + 1) else { return nil }
            members.append((key, value))
            skipWhitespace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: return nil
            }
        }
    }

    private mutating func array(depth: Int) -> JSONInput? {
        index += 1
        var items: [JSONInput] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            guard let item = value(depth: depth + 1) else { return nil }
            items.append(item)
            skipWhitespace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(items)
            default: return nil
            }
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        for i in 0..<count where bytes[index + i] != word.utf8Start[i] { return false }
        index += count
        return true
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    private mutating func number() -> JSONInput? {
        let start = index
        func digits(_ reader: inout JSONInputReader) -> Int {
            let first = reader.index
            while reader.index < reader.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(reader.bytes[reader.index]) {
                reader.index += 1
            }
            return reader.index - first
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits(&self) == 0 {
            return nil
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { return nil }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { return nil }
        }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    /// A string at `"`: its escapes decoded; `nil` for a control character, a bad escape, a
    /// lone surrogate or bytes that are not UTF-8.
    private mutating func string() -> String? {
        index += 1
        let start = index
        // The common case: no escapes, validated in place.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = bytes.withUnsafeBufferPointer { String(validating: $0[start..<index], as: UTF8.self) }
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { return nil }
            index += 1
        }
        var unescaped = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(validating: unescaped, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): unescaped.append(escape)
                case UInt8(ascii: "b"): unescaped.append(0x08)
                case UInt8(ascii: "f"): unescaped.append(0x0C)
                case UInt8(ascii: "n"): unescaped.append(0x0A)
                case UInt8(ascii: "r"): unescaped.append(0x0D)
                case UInt8(ascii: "t"): unescaped.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = unicodeEscape() else { return nil }
                    unescaped.append(contentsOf: String(Character(scalar)).utf8)
                default: return nil
                }
            default:
                guard byte >= 0x20 else { return nil }
                unescaped.append(byte)
                index += 1
            }
        }
        return nil
    }

    /// The scalar of `\uXXXX` (after the `u`), with its low surrogate's `\uXXXX` when it is a
    /// high one.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let first = hex4() else { return nil }
        switch first {
        case 0xD800...0xDBFF:
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
            index += 2
            guard let second = hex4(), (0xDC00...0xDFFF).contains(second) else { return nil }
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
        case 0xDC00...0xDFFF: return nil
        default: return Unicode.Scalar(first)
        }
    }

    private mutating func hex4() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}

/// A request dictionary that can be read from ``JSONInput`` as well as decoded: the reading
/// answers `nil` wherever `Decodable` would throw (or might), and
/// `EndpointCall.decode(_:)` then decodes with `JSONDecoder`, for
/// its error message.
protocol QuickDecodable: Decodable {
    /// The value of `input`, or `nil` when it is not a valid one.
    init?(_ input: JSONInput)
}

extension JSONInput {
    /// An optional member: `.some(nil)` when it is missing or `null`, `.some(value)` when
    /// `read` takes it, `nil` when it is there and `read` does not take it.
    static func optional<T>(_ member: JSONInput?, _ read: (JSONInput) -> T?) -> T?? {
        guard let member, member != .null else { return .some(nil) }
        guard let value = read(member) else { return nil }
        return .some(value)
    }

    /// The string of a `.string`.
    var string: String? {
        guard case .string(let s) = self else { return nil }
        return s
    }

    /// The flag of a `.bool`.
    var bool: Bool? {
        guard case .bool(let b) = self else { return nil }
        return b
    }

    /// The strings of an array of strings.
    var strings: [String]? {
        guard case .array(let items) = self else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(items.count)
        for item in items {
            guard case .string(let s) = item else { return nil }
            strings.append(s)
        }
        return strings
    }
}

extension WebServices.ZoneID {
    /// A zone ID dictionary read as `init(from:)` decodes it: `zoneName` defaults to the
    /// default zone and may not be empty, `ownerName` stands in for `ownerRecordName`, and
    /// `zoneType` must be a known one.
    init?(_ input: JSONInput) {
        guard case .object = input,
            let zoneName = JSONInput.optional(input["zoneName"], \.string),
            let ownerRecordName = JSONInput.optional(input["ownerRecordName"], \.string),
            let ownerName = JSONInput.optional(input["ownerName"], \.string),
            let zoneType = JSONInput.optional(input["zoneType"], { $0.string.flatMap(ZoneType.init(rawValue:)) })
        else { return nil }
        guard zoneName != "" else { return nil }
        self.init(zoneName: zoneName ?? RecordZone.ID.defaultZoneName, ownerRecordName: ownerRecordName ?? ownerName, zoneType: zoneType)
    }
}
