import FogKit
import FogKitTesting
import Foundation
import Testing

@testable import FogServer

/// The quick reader of request bodies (`JSONInput`) against Foundation's `JSONDecoder`: on
/// generated JSON and on mutations of it, whatever the reader takes, `JSONDecoder` takes too
/// and reads the same.
@Suite struct JSONInputTests {
    /// Any JSON value, decoded by `JSONDecoder`, to compare with what `JSONInput` read.
    enum Mirror: Decodable, Equatable {
        case object([String: Mirror])
        case array([Mirror])
        case string(String)
        case number(Double)
        case bool(Bool)
        case null

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            if let keyed = try? decoder.container(keyedBy: Key.self) {
                var members: [String: Mirror] = [:]
                for key in keyed.allKeys { members[key.stringValue] = try keyed.decode(Mirror.self, forKey: key) }
                self = .object(members)
            } else if var unkeyed = try? decoder.unkeyedContainer() {
                var items: [Mirror] = []
                while !unkeyed.isAtEnd { items.append(try unkeyed.decode(Mirror.self)) }
                self = .array(items)
            } else {
                let single = try decoder.singleValueContainer()
                if single.decodeNil() {
                    self = .null
                } else if let b = try? single.decode(Bool.self) {
                    self = .bool(b)
                } else if let s = try? single.decode(String.self) {
                    self = .string(s)
                } else {
                    self = .number(try single.decode(Double.self))
                }
            }
        }

        init(_ input: JSONInput) {
            switch input {
            case .object(let members): self = .object(Dictionary(uniqueKeysWithValues: members.map { ($0.0, Mirror($0.1)) }))
            case .array(let items): self = .array(items.map(Mirror.init))
            case .string(let s): self = .string(s)
            case .number(let text): self = .number(Double(text)!)
            case .bool(let b): self = .bool(b)
            case .null: self = .null
            }
        }
    }

    /// Writes random JSON with random spacing and escapes.
    struct Writer {
        var random: SplitMix64

        mutating func space() -> String {
            ["", "", "", " ", "\n", "\t ", "\r\n  "].randomElement(using: &random)!
        }

        mutating func string(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += Bool.random(using: &random) ? "\\n" : "\\u000a"
                case "\t": out += "\\t"
                case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
                case "/": out += Bool.random(using: &random) ? "\\/" : "/"
                case _ where scalar.value > 0xFFFF && Bool.random(using: &random):
                    let v = scalar.value - 0x10000
                    out += String(format: "\\ud%03x\\u%04X", 0x800 + (v >> 10), 0xDC00 + (v & 0x3FF))
                case _ where scalar.value > 0x7F && scalar.value <= 0xFFFF && Bool.random(using: &random):
                    out += String(format: "\\u%04x", scalar.value)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }

        mutating func text() -> String {
            let pieces = ["a", "N-1", "é", "日本", "🦊", "\"", "\\", "/", "\n", "\t", "\u{01}", " ", "Z", "\u{2028}", "\0"]
            return (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }

        mutating func number() -> String {
            ["0", "-0", "1", "42", "-17", "3.25", "1e3", "-2.5E-3", "1E+2", "123456789", "0.5"].randomElement(using: &random)!
        }

        mutating func value(depth: Int) -> String {
            switch Int.random(in: 0..<(depth > 2 ? 4 : 6), using: &random) {
            case 0: return string(text())
            case 1: return number()
            case 2: return ["true", "false", "null"].randomElement(using: &random)!
            case 3: return string(text())
            case 4:
                return "["
                    + (0..<Int.random(in: 0...3, using: &random)).map { _ in space() + value(depth: depth + 1) + space() }.joined(
                        separator: ",") + "]"
            default:
                var keys: Set<String> = []
                for _ in 0..<Int.random(in: 0...3, using: &random) { keys.insert(text()) }
                return object(keys.sorted().map { ($0, value(depth: depth + 1)) })
            }
        }

        mutating func object(_ members: [(String, String)]) -> String {
            "{" + space()
                + members.shuffled(using: &random).map { string($0.0) + space() + ":" + space() + $0.1 }
                .joined(separator: space() + "," + space()) + space() + "}"
        }

        /// A `records/lookup` body, with optional members and unknown ones.
        mutating func lookup() -> String {
            var members: [(String, String)] = []
            let records = (0..<Int.random(in: 0...4, using: &random)).map { _ -> String in
                var item: [(String, String)] = [("recordName", string(text().isEmpty ? "r" : text()))]
                if Bool.random(using: &random) { item.append(("desiredKeys", keys())) }
                if Int.random(in: 0..<4, using: &random) == 0 { item.append(("unknown", value(depth: 1))) }
                return object(item)
            }
            members.append(("records", "[" + records.joined(separator: ",") + "]"))
            if Bool.random(using: &random) {
                var zone: [(String, String)] = []
                if Bool.random(using: &random) {
                    zone.append(("zoneName", string(["Notes", "_defaultZone", "z é"].randomElement(using: &random)!)))
                }
                if Bool.random(using: &random) { zone.append(("ownerRecordName", Bool.random(using: &random) ? string("_abc") : "null")) }
                if Bool.random(using: &random) { zone.append(("zoneType", string("REGULAR_CUSTOM_ZONE"))) }
                members.append(("zoneID", Bool.random(using: &random) ? object(zone) : "null"))
            }
            if Bool.random(using: &random) { members.append(("desiredKeys", Bool.random(using: &random) ? keys() : "null")) }
            if Bool.random(using: &random) {
                members.append(("numbersAsStrings", ["true", "false", "null"].randomElement(using: &random)!))
            }
            if Bool.random(using: &random) { members.append(("zoneWide", value(depth: 1))) }
            return space() + object(members) + space()
        }

        mutating func keys() -> String {
            "[" + (0..<Int.random(in: 0...3, using: &random)).map { _ in string(text()) }.joined(separator: ",") + "]"
        }

        /// `body` with one random change: a byte removed, replaced or inserted, or the end cut.
        mutating func mutated(_ body: [UInt8]) -> [UInt8] {
            var bytes = body
            guard !bytes.isEmpty else { return [UInt8.random(in: 0...255, using: &random)] }
            let i = Int.random(in: 0..<bytes.count, using: &random)
            let interesting: [UInt8] = Array("{}[]\",:\\u0123456789eE+-.tfn ".utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xED, 0xFF]
            switch Int.random(in: 0..<4, using: &random) {
            case 0: bytes.remove(at: i)
            case 1: bytes[i] = interesting.randomElement(using: &random)!
            case 2: bytes.insert(interesting.randomElement(using: &random)!, at: i)
            default: bytes.removeSubrange(i...)
            }
            return bytes
        }
    }

    typealias LookupRequest = RecordEndpoints.LookupRequest

    static func decoded<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) -> T? {
        let data = bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) ? Data("{}".utf8) : Data(bytes)
        return try? JSONDecoder().decode(type, from: data)
    }

    @Test func generatedValuesReadAsJSONDecoderReadsThem() {
        var writer = Writer(random: SplitMix64(seed: 20))
        for _ in 0..<400 {
            let body = Array(writer.value(depth: 0).utf8)
            let input = JSONInput(parsing: body)
            #expect(input != nil, "the reader refused valid JSON: \(String(decoding: body, as: UTF8.self))")
            guard let input else { continue }
            #expect(Self.decoded(Mirror.self, body) == Mirror(input), "\(String(decoding: body, as: UTF8.self))")
        }
    }

    @Test func generatedLookupsReadAsJSONDecoderDecodesThem() {
        var writer = Writer(random: SplitMix64(seed: 21))
        var quick = 0
        for _ in 0..<400 {
            let body = Array(writer.lookup().utf8)
            let slow = Self.decoded(LookupRequest.self, body)
            let fast = JSONInput(parsing: body).flatMap(LookupRequest.init)
            #expect(slow != nil, "\(String(decoding: body, as: UTF8.self))")
            #expect(fast == slow, "\(String(decoding: body, as: UTF8.self))")
            if fast != nil { quick += 1 }
        }
        #expect(quick == 400)
    }

    @Test func mutatedBodiesAreReadOnlyAsJSONDecoderReadsThem() {
        var writer = Writer(random: SplitMix64(seed: 22))
        var refused = 0
        var read = 0
        for round in 0..<3000 {
            let original = Array((round % 2 == 0 ? writer.lookup() : writer.value(depth: 0)).utf8)
            var body = writer.mutated(original)
            if round % 3 == 0 { body = writer.mutated(body) }
            guard let input = JSONInput(parsing: body) else {
                refused += 1
                continue
            }
            read += 1
            #expect(Self.decoded(Mirror.self, body) == Mirror(input), "\(body)")
            if let fast = LookupRequest(input) {
                #expect(Self.decoded(LookupRequest.self, body) == fast, "\(body)")
            }
        }
        // Both kinds are common: the check is not empty.
        #expect(refused > 300 && read > 300, "refused \(refused), read \(read)")
    }

    @Test(arguments: [
        "", "  ", "{}", "[]", "0", "-0.5e-3", "\"\\u0000\"", "\"\\ud83e\\udd8a\"", "{\"a\":[1,{\"b\":null}]}",
    ])
    func takesValidJSON(_ text: String) {
        #expect(JSONInput(parsing: Array(text.utf8)) != nil)
    }

    @Test(arguments: [
        "{", "}", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "1e", "+1", "\"\\x\"", "\"\\ud83e\"", "\"\\udd8a\"", "\"a\u{01}\"",
        "tru", "nul", "{\"a\" 1}", "{a:1}", "[1 2]", "{} {}", "{\"a\":1,\"a\":2}", "\u{FEFF}{}", "'a'",
    ])
    func leavesEverythingElseToJSONDecoder(_ text: String) {
        #expect(JSONInput(parsing: Array(text.utf8)) == nil)
    }

    @Test func refusesBytesThatAreNotUTF8AndDeepNesting() {
        #expect(JSONInput(parsing: [0x22, 0xC3, 0x28, 0x22]) == nil)
        #expect(JSONInput(parsing: [0x22, 0xED, 0xA0, 0x80, 0x22]) == nil)
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(JSONInput(parsing: Array(deep.utf8)) == nil)
    }

    @Test func aLookupWithAWrongTypeIsLeftToJSONDecoder() throws {
        for text in [
            #"{"records":[{"recordName":1}]}"#, #"{"records":{}}"#, #"{"records":[],"numbersAsStrings":1}"#,
            #"{"records":[],"zoneID":{"zoneName":""}}"#, #"{"records":[],"zoneID":{"zoneType":"OTHER"}}"#,
            #"{"records":[{"recordName":"a","desiredKeys":["x",null]}]}"#, #"{"records":null}"#, #"{}"#,
        ] {
            let input = try #require(JSONInput(parsing: Array(text.utf8)))
            #expect(LookupRequest(input) == nil, "\(text)")
            #expect(Self.decoded(LookupRequest.self, Array(text.utf8)) == nil, "\(text)")
        }
    }
}
