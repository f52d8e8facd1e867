import FogKitTesting
import Testing

@testable import FogKit

/// Seeded random schemas: printed, parsed and compared, and written out in scrambled but
/// equivalent text (any keyword case, quoting, order, spacing, comments, split grants), which
/// must parse to the same schema and print the same canonical text.
@Suite struct SchemaLanguagePropertyTests {
    static let seeds: [UInt64] = Array(1...400)

    @Test("Printing and parsing a random schema gives it back")
    func roundTrip() throws {
        for seed in Self.seeds {
            var random = SplitMix64(seed: seed)
            let schema = Self.randomSchema(&random)
            let text = schema.description
            let parsed: Schema
            do {
                parsed = try Schema(parsing: text)
            } catch {
                Issue.record("seed \(seed): \(error)\n\(text)")
                continue
            }
            #expect(parsed == schema, "seed \(seed)")
            #expect(parsed.description == text, "seed \(seed)")
        }
    }

    @Test("Scrambled text that says the same thing parses to the same schema")
    func scrambled() throws {
        for seed in Self.seeds {
            var random = SplitMix64(seed: seed &+ 0x5C4E_0000)
            let schema = Self.randomSchema(&random)
            let text = Self.scrambledText(of: schema, &random)
            let parsed: Schema
            do {
                parsed = try Schema(parsing: text)
            } catch {
                Issue.record("seed \(seed): \(error)\n\(text)")
                continue
            }
            #expect(parsed == schema, "seed \(seed)\n\(text)")
            #expect(parsed.description == schema.description, "seed \(seed)")
        }
    }

    @Test("Damaged text parses or fails at a position inside the text, never traps")
    func damaged() {
        let pieces = ["(", ")", ",", ";", "<", ">", "\"", "--", "/*", "*/", "\n", " ", "GRANT", "LIST", "_x", "é", "\t", "NUMBER"]
        for seed in Self.seeds {
            var random = SplitMix64(seed: seed &+ 0xDA_0000)
            var scalars = Array(Self.randomSchema(&random).description.unicodeScalars)
            for _ in 0..<random.int(1...4) {
                let at = random.int(0...scalars.count - 1)
                switch random.int(0...2) {
                case 0: scalars.removeSubrange(at..<min(scalars.count, at + random.int(1...12)))
                case 1: scalars.insert(contentsOf: random.pick(pieces).unicodeScalars, at: at)
                default: scalars.replaceSubrange(at..<min(scalars.count, at + 1), with: random.pick(pieces).unicodeScalars)
                }
                if scalars.isEmpty { scalars = Array("DEFINE".unicodeScalars) }
            }
            var text = ""
            text.unicodeScalars.append(contentsOf: scalars)
            let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
            do {
                let schema = try Schema(parsing: text)
                #expect(try Schema(parsing: schema.description) == schema, "seed \(seed)")
            } catch {
                let valid = (1...lines.count).contains(error.line) && (1...lines[error.line - 1].count + 1).contains(error.column)
                #expect(valid, "seed \(seed): \(error)")
            }
        }
    }

    // MARK: - Random schemas

    /// Names that need quoting or look like keywords, mixed with random identifiers.
    static let awkwardNames = [
        "grant", "Grant", "PREFERRED", "queryable", "Sortable", "searchable", "type", "list", "STRING", "record",
        "define", "to", "as", "Number", "encrypted", "read", "roles", "description", "x", "Zebra", "apple",
    ]
    /// The names `Record` reserves, which the parser refuses as field names.
    static var reservedFieldNames: Set<String> { Validation.reservedFieldKeys }

    static func randomName(_ random: inout SplitMix64) -> String {
        if random.chance(0.3) { return random.pick(awkwardNames) }
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        let rest = letters + Array("0123456789_")
        var name = String(random.pick(letters))
        for _ in 0..<random.int(0...9) { name.append(random.pick(rest)) }
        return name
    }

    static func randomPrimitive(_ random: inout SplitMix64) -> Schema.PrimitiveType {
        switch random.int(0...9) {
        case 0: .asset
        case 1: .bytes
        case 2: .double
        case 3: .int64
        case 4: .location
        case 5: .reference
        case 6: .string
        case 7: .timestamp
        case 8: .encrypted(random.pick(Schema.EncryptableType.allCases))
        default: .number(preferredAs: random.pick([nil, .int64, .double]))
        }
    }

    static func randomSubset(of options: IndexOptions, _ random: inout SplitMix64) -> IndexOptions {
        IndexOptions(rawValue: options.rawValue & UInt8(random.int(0...7)))
    }

    static func randomSchema(_ random: inout SplitMix64) -> Schema {
        var schema = Schema()
        for _ in 0..<random.int(0...3) { schema.roles.insert(Schema.Role(randomName(&random))) }
        let roles = Schema.Role.builtIn + Array(schema.roles)
        for _ in 0..<random.int(0...5) {
            var type = Schema.RecordType()
            for _ in 0..<random.int(0...8) {
                let name = randomName(&random)
                guard !reservedFieldNames.contains(name) else { continue }
                let element = randomPrimitive(&random)
                let dataType: Schema.DataType = random.chance(0.3) ? .list(element) : .primitive(element)
                type.fields[name] = Schema.Field(dataType, indexes: randomSubset(of: dataType.allowedIndexes, &random))
            }
            for system in Schema.SystemField.allCases where random.chance(0.4) {
                type.systemFieldIndexes[system] = randomSubset(of: system.allowedIndexes, &random)
            }
            for role in roles where random.chance(0.4) {
                type.grants[role] = Schema.Permissions(rawValue: UInt8(random.int(1...7)))
            }
            schema.recordTypes[randomName(&random)] = type
        }
        return schema
    }

    // MARK: - Scrambled text

    static func randomCase(_ word: String, _ random: inout SplitMix64) -> String {
        switch random.int(0...3) {
        case 0: word.lowercased()
        case 1: String(word.map { random.chance(0.5) ? Character($0.lowercased()) : $0 })
        default: word
        }
    }

    /// White space: at least one space, sometimes newlines, tabs and comments.
    static func space(_ random: inout SplitMix64) -> String {
        switch random.int(0...9) {
        case 0: "\n\t"
        case 1: " -- a comment\n"
        case 2: " // another\n  "
        case 3: " /* block\n comment */ "
        case 4: "\r\n    "
        default: " "
        }
    }

    /// Optional white space around punctuation.
    static func maybeSpace(_ random: inout SplitMix64) -> String { random.chance(0.5) ? "" : space(&random) }

    static func name(_ name: String, _ random: inout SplitMix64) -> String {
        let reserved: Set<String> = ["GRANT", "PREFERRED", "QUERYABLE", "SORTABLE", "SEARCHABLE"]
        let plain = !name.hasPrefix("_") && !reserved.contains(name.uppercased())
        return plain && random.chance(0.7) ? name : "\"\(name)\""
    }

    static func typeText(_ type: Schema.DataType, _ random: inout SplitMix64) -> String {
        func primitive(_ p: Schema.PrimitiveType, _ random: inout SplitMix64) -> String {
            p.description.split(separator: " ").map { randomCase(String($0), &random) }.joined(separator: space(&random))
        }
        switch type {
        case .primitive(let p): return primitive(p, &random)
        case .list(let p):
            return randomCase("LIST", &random) + maybeSpace(&random) + "<" + maybeSpace(&random) + primitive(p, &random)
                + maybeSpace(&random) + ">"
        }
    }

    static func optionsText(_ options: IndexOptions, _ random: inout SplitMix64) -> String {
        var words: [String] = []
        if options.contains(.queryable) { words.append("QUERYABLE") }
        if options.contains(.sortable) { words.append("SORTABLE") }
        if options.contains(.searchable) { words.append("SEARCHABLE") }
        return words.shuffled(using: &random).map { space(&random) + randomCase($0, &random) }.joined()
    }

    static func scrambledText(of schema: Schema, _ random: inout SplitMix64) -> String {
        var statements: [String] = []
        for role in schema.roles {
            statements.append(
                randomCase("CREATE", &random) + space(&random) + randomCase("ROLE", &random) + space(&random) + name(role.name, &random))
        }
        for (typeName, type) in schema.recordTypes {
            var items: [String] = []
            for system in Schema.SystemField.allCases {
                let options = type.systemFieldIndexes[system] ?? []
                guard !options.isEmpty || random.chance(0.3) else { continue }
                items.append(
                    name(system.rawValue, &random) + space(&random) + typeText(system.type, &random) + optionsText(options, &random))
            }
            for (fieldName, field) in type.fields {
                items.append(
                    name(fieldName, &random) + space(&random) + typeText(field.type, &random) + optionsText(field.indexes, &random))
            }
            for (role, permissions) in type.grants {
                // Split the permissions over one to three GRANTs.
                var groups: [[String]] = [[], [], []]
                for (permission, word) in [(Schema.Permissions.read, "READ"), (.create, "CREATE"), (.write, "WRITE")]
                where permissions.contains(permission) {
                    groups[random.int(0...2)].append(randomCase(word, &random))
                }
                for group in groups where !group.isEmpty {
                    let list = group.shuffled(using: &random).joined(separator: maybeSpace(&random) + "," + space(&random))
                    items.append(
                        randomCase("GRANT", &random) + space(&random) + list + space(&random) + randomCase("TO", &random) + space(&random)
                            + name(role.name, &random))
                }
            }
            items.shuffle(using: &random)
            let body = items.map { maybeSpace(&random) + $0 + maybeSpace(&random) }.joined(separator: ",")
            statements.append(
                randomCase("RECORD", &random) + space(&random) + randomCase("TYPE", &random) + space(&random) + name(typeName, &random)
                    + maybeSpace(&random) + "(" + body + ")")
        }
        statements.shuffle(using: &random)
        let head = maybeSpace(&random) + randomCase("DEFINE", &random) + space(&random) + randomCase("SCHEMA", &random)
        return head + statements.map { space(&random) + $0 + maybeSpace(&random) + ";" }.joined() + maybeSpace(&random)
    }
}
