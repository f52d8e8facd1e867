/// A recursive-descent parser for CloudKit's schema language (reference §13.4), with the
/// semantic checks of §13.6 and FogKit's own (`Docs/Schema.md`).
///
/// Everything that depends on the whole text (grants to roles created further down) is
/// checked after the last statement; everything else where it is read.
struct SchemaParser {
    /// Words that must be quoted to be used as names (reference §13.4).
    static let reservedWords: Set<String> = ["GRANT", "PREFERRED", "QUERYABLE", "SORTABLE", "SEARCHABLE"]
    /// Field names FogKit reserves for `Record`'s properties: the ones records cannot use.
    static var reservedFieldNames: Set<String> { Validation.reservedFieldKeys }

    /// Words that start a field type.
    static let typeKeywords: Set<String> = [
        "ASSET", "BYTES", "DOUBLE", "INT64", "LOCATION", "REFERENCE", "STRING", "TIMESTAMP", "ENCRYPTED", "NUMBER", "LIST",
    ]

    private let tokens: [SchemaToken]
    private var position = 0

    init(_ text: String) { tokens = SchemaLexer.tokens(of: text) }

    /// A grant read in a record type, checked once every role is known.
    private struct GrantedRole {
        let role: Schema.Role
        let token: SchemaToken
    }

    // MARK: - Tokens

    /// The current token; throws the lexer's message for text it could not read.
    private func current() throws(SchemaParseError) -> SchemaToken {
        let token = tokens[position]
        if case .invalid(let message) = token.kind { throw Self.error(at: token, message) }
        return token
    }

    private mutating func advance() { if position < tokens.count - 1 { position += 1 } }

    private static func error(at token: SchemaToken, _ message: String) -> SchemaParseError {
        SchemaParseError(line: token.line, column: token.column, message: message)
    }

    /// Throws "expected `what`, found …" at the current token.
    private func expected(_ what: String) throws(SchemaParseError) -> Never {
        let token = try current()
        throw Self.error(at: token, "expected \(what), found \(token.quoted)")
    }

    /// Consumes the keyword `keyword`, or throws "expected `what`".
    private mutating func expectKeyword(_ keyword: String, _ what: String) throws(SchemaParseError) {
        guard try current().isKeyword(keyword) else { try expected(what) }
        advance()
    }

    /// Consumes a token of `kind`, or throws "expected `what`".
    private mutating func expect(_ kind: SchemaToken.Kind, _ what: String) throws(SchemaParseError) {
        guard try current().kind == kind else { try expected(what) }
        advance()
    }

    /// Reads a name: a word that is not reserved and does not start with `_`, or a quoted name.
    private mutating func name(_ what: String) throws(SchemaParseError) -> (String, SchemaToken) {
        let token = try current()
        let name: String
        switch token.kind {
        case .quoted(let quoted):
            name = quoted
        case .word(let word):
            if Self.reservedWords.contains(token.keyword ?? "") {
                throw Self.error(at: token, "`\(word)` is a reserved word; write `\"\(word)\"` to use it as a name")
            }
            if word.hasPrefix("_") {
                throw Self.error(at: token, "a name starting with `_` must be quoted: write `\"\(word)\"`")
            }
            name = word
        default:
            try expected(what)
        }
        if name.utf8.count > Validation.maximumNameLength {
            throw Self.error(at: token, "a name is at most \(Validation.maximumNameLength) characters; this one has \(name.utf8.count)")
        }
        advance()
        return (name, token)
    }

    // MARK: - Statements

    /// `DEFINE SCHEMA { create-role | record-type } ";" …`, then the end of the text.
    mutating func parseSchema() throws(SchemaParseError) -> Schema {
        try expectKeyword("DEFINE", "`DEFINE SCHEMA` at the start of the schema")
        try expectKeyword("SCHEMA", "`SCHEMA` after `DEFINE`")
        var schema = Schema()
        var roleLines: [Schema.Role: Int] = [:]
        var typeLines: [String: Int] = [:]
        var grants: [GrantedRole] = []
        while true {
            let token = try current()
            if token.kind == .end { break }
            if token.isKeyword("CREATE") {
                advance()
                try expectKeyword("ROLE", "`ROLE` after `CREATE`")
                let (name, nameToken) = try name("a role name after `CREATE ROLE`")
                let role = Schema.Role(name)
                if role.isBuiltIn {
                    throw Self.error(at: nameToken, "`\(name)` is a built-in role; only custom roles are created")
                }
                if name.hasPrefix("_") {
                    throw Self.error(at: nameToken, "a role name cannot start with `_`: those are the built-in roles")
                }
                if let line = roleLines[role] {
                    throw Self.error(at: nameToken, "the role `\(name)` is already created on line \(line)")
                }
                roleLines[role] = nameToken.line
                schema.roles.insert(role)
                try expect(.semicolon, "`;` after `CREATE ROLE \(name)`")
            } else if token.isKeyword("RECORD") {
                advance()
                try expectKeyword("TYPE", "`TYPE` after `RECORD`")
                let (name, nameToken) = try name("a record type name after `RECORD TYPE`")
                if name.hasPrefix("_") {
                    throw Self.error(at: nameToken, "a record type name cannot start with `_`: those are reserved for the system")
                }
                if let line = typeLines[name] {
                    throw Self.error(at: nameToken, "the record type `\(name)` is already defined on line \(line)")
                }
                typeLines[name] = nameToken.line
                schema.recordTypes[name] = try recordTypeBody(name, grants: &grants)
                try expect(.semicolon, "`;` after the record type `\(name)`")
            } else {
                try expected("`CREATE ROLE`, `RECORD TYPE` or the end of the schema")
            }
        }
        for grant in grants where !grant.role.isBuiltIn && !schema.roles.contains(grant.role) {
            throw Self.error(
                at: grant.token,
                "`\(grant.role.name)` is not a role: create it with `CREATE ROLE`, or grant to `\"_creator\"`, `\"_icloud\"` or `\"_world\"`"
            )
        }
        return schema
    }

    /// `( item, … )` after `RECORD TYPE name`, where an item is a field or a `GRANT`.
    private mutating func recordTypeBody(_ typeName: String, grants: inout [GrantedRole]) throws(SchemaParseError) -> Schema.RecordType {
        try expect(.leftParen, "`(` after `RECORD TYPE \(typeName)`")
        var recordType = Schema.RecordType()
        var fieldLines: [String: Int] = [:]
        if try current().kind == .rightParen {
            advance()
            return recordType
        }
        while true {
            if try current().isKeyword("GRANT") {
                try grant(in: typeName, to: &recordType, grants: &grants)
            } else {
                try field(in: typeName, to: &recordType, lines: &fieldLines)
            }
            let token = try current()
            if token.kind == .comma {
                advance()
                let next = try current()
                if next.kind == .rightParen {
                    throw Self.error(at: next, "expected a field or `GRANT` after `,`, found `)`; a comma cannot end the list")
                }
            } else if token.kind == .rightParen {
                advance()
                return recordType
            } else {
                try expected("`,` or `)` in `RECORD TYPE \(typeName)`")
            }
        }
    }

    /// `name data-type [QUERYABLE | SORTABLE | SEARCHABLE] …`.
    private mutating func field(
        in typeName: String, to recordType: inout Schema.RecordType, lines: inout [String: Int]
    ) throws(SchemaParseError) {
        let (name, nameToken) = try name("a field name or `GRANT` in `RECORD TYPE \(typeName)`")
        var system: Schema.SystemField?
        if name.hasPrefix("_") {
            guard let field = Schema.SystemField(rawValue: name) else {
                let names = Schema.SystemField.allCases.map { "`\($0.rawValue)`" }.joined(separator: ", ")
                throw Self.error(
                    at: nameToken,
                    "`\(name)` is not a system field; names starting with `_` are reserved, and the system fields are \(names)")
            }
            system = field
        } else if Self.reservedFieldNames.contains(name) {
            throw Self.error(at: nameToken, "the field name `\(name)` is reserved: it names a property of every record")
        }
        if let line = lines[name] {
            throw Self.error(at: nameToken, "the field `\(name)` is already defined in `\(typeName)` on line \(line)")
        }
        lines[name] = nameToken.line
        let typeToken = try current()
        let type = try dataType(after: name)
        if let system, type != system.type {
            throw Self.error(at: typeToken, "the system field `\(name)` has type \(system.type), not \(type)")
        }
        var options: IndexOptions = []
        while let keyword = try current().keyword, let option = Self.indexOption(keyword) {
            let token = try current()
            if options.contains(option) {
                throw Self.error(at: token, "`\(keyword)` is repeated on the field `\(name)`")
            }
            try Self.check(option, keyword, type: type, system: system, field: name, at: token)
            options.insert(option)
            advance()
        }
        let next = try current()
        if next.kind != .comma && next.kind != .rightParen {
            try expected("QUERYABLE, SEARCHABLE, SORTABLE, `,` or `)` after `\(name) \(type)`")
        }
        if let system {
            recordType.systemFieldIndexes[system] = options
        } else {
            recordType.fields[name] = Schema.Field(type, indexes: options)
        }
    }

    private static func indexOption(_ keyword: String) -> IndexOptions? {
        switch keyword {
        case "QUERYABLE": .queryable
        case "SORTABLE": .sortable
        case "SEARCHABLE": .searchable
        default: nil
        }
    }

    /// Throws when a field of `type` (or the system field `system`) cannot have `option`.
    private static func check(
        _ option: IndexOptions, _ keyword: String, type: Schema.DataType, system: Schema.SystemField?, field: String,
        at token: SchemaToken
    ) throws(SchemaParseError) {
        if let system {
            guard system.allowedIndexes.contains(option) else {
                let allowed = system.allowedIndexes.isEmpty ? "takes no index options" : "can be \(system.allowedIndexes) only"
                throw error(at: token, "the system field `\(field)` \(allowed)")
            }
            return
        }
        guard !type.allowedIndexes.contains(option) else { return }
        switch type.element {
        case .encrypted:
            throw error(at: token, "the field `\(field)` is \(type), which cannot be \(keyword): encrypted values are not indexed")
        case .asset:
            throw error(at: token, "the field `\(field)` is \(type), which cannot be \(keyword): assets are not indexed")
        default:
            throw error(
                at: token, "the field `\(field)` is \(type), which cannot be \(keyword): only STRING and LIST<STRING> are searchable")
        }
    }

    /// `primitive-type` or `LIST < primitive-type >`.
    private mutating func dataType(after fieldName: String) throws(SchemaParseError) -> Schema.DataType {
        guard try current().isKeyword("LIST") else {
            return .primitive(try primitiveType(expecting: "a field type after `\(fieldName)`"))
        }
        advance()
        try expect(.less, "`<` after `LIST`")
        let token = try current()
        if token.isKeyword("LIST") { throw Self.error(at: token, "a LIST cannot hold lists") }
        let element = try primitiveType(expecting: "an element type after `LIST<`")
        try expect(.greater, "`>` after `LIST<\(element)`")
        return .list(element)
    }

    /// `ASSET | BYTES | … | ENCRYPTED type | NUMBER [PREFERRED AS {INT64 | DOUBLE}]`.
    private mutating func primitiveType(expecting what: String) throws(SchemaParseError) -> Schema.PrimitiveType {
        let token = try current()
        let type: Schema.PrimitiveType
        switch token.keyword {
        case "ASSET": type = .asset
        case "BYTES": type = .bytes
        case "DOUBLE": type = .double
        case "INT64": type = .int64
        case "LOCATION": type = .location
        case "REFERENCE": type = .reference
        case "STRING": type = .string
        case "TIMESTAMP": type = .timestamp
        case "ENCRYPTED":
            advance()
            let inner = try current()
            if let keyword = inner.keyword, let encryptable = Schema.EncryptableType(rawValue: keyword) {
                advance()
                return .encrypted(encryptable)
            }
            switch inner.keyword {
            case "ASSET": throw Self.error(at: inner, "ASSET cannot be ENCRYPTED: assets are always encrypted")
            case "REFERENCE": throw Self.error(at: inner, "REFERENCE cannot be ENCRYPTED: the server must read references")
            default: try expected("BYTES, DOUBLE, INT64, LOCATION, STRING or TIMESTAMP after `ENCRYPTED`")
            }
        case "NUMBER":
            advance()
            guard try current().isKeyword("PREFERRED") else { return .number(preferredAs: nil) }
            advance()
            try expectKeyword("AS", "`AS` after `PREFERRED`")
            guard let keyword = try current().keyword, let representation = Schema.NumberRepresentation(rawValue: keyword) else {
                try expected("INT64 or DOUBLE after `PREFERRED AS`")
            }
            advance()
            return .number(preferredAs: representation)
        default:
            try expected(what)
        }
        advance()
        return type
    }

    /// `GRANT { READ | CREATE | WRITE } [, …] TO role`.
    private mutating func grant(
        in typeName: String, to recordType: inout Schema.RecordType, grants: inout [GrantedRole]
    ) throws(SchemaParseError) {
        advance()
        var permissions: [(Schema.Permissions, SchemaToken)] = []
        while true {
            let token = try current()
            let permission: Schema.Permissions
            switch token.keyword {
            case "READ": permission = .read
            case "CREATE": permission = .create
            case "WRITE": permission = .write
            default:
                let after = permissions.isEmpty ? "`GRANT`" : "`,`"
                var message = "expected READ, CREATE or WRITE after \(after), found \(token.quoted)"
                if permissions.isEmpty, Self.typeKeywords.contains(token.keyword ?? "") {
                    message += "; to name a field grant, quote it: `\"grant\"`"
                }
                throw Self.error(at: token, message)
            }
            permissions.append((permission, token))
            advance()
            let next = try current()
            if next.kind == .comma {
                advance()
            } else if next.isKeyword("TO") {
                advance()
                break
            } else {
                try expected("`,` or `TO` after `\(token.keyword!)`")
            }
        }
        let (name, roleToken) = try name("a role name after `TO`")
        let role = Schema.Role(name)
        var granted = recordType.grants[role] ?? []
        for (permission, token) in permissions {
            if granted.contains(permission) {
                throw Self.error(at: token, "\(permission) is already granted to `\(name)` in `\(typeName)`")
            }
            granted.insert(permission)
        }
        recordType.grants[role] = granted
        grants.append(GrantedRole(role: role, token: roleToken))
    }
}
