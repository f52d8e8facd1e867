/// A CloudKit schema: the security roles and record types that CloudKit's schema language (the
/// `.ckdb` text of `cktool export-schema` and `import-schema`) describes.
///
/// Parse the text with ``init(parsing:)``; ``description`` prints the schema's canonical text.
///
/// ```swift
/// let schema = try Schema(parsing: """
///     DEFINE SCHEMA
///         CREATE ROLE Admin;
///         RECORD TYPE AppFeatures (
///             tipJar INT64,
///             GRANT READ TO "_world",
///             GRANT READ, CREATE, WRITE TO Admin
///         );
///     """)
/// schema.recordTypes["AppFeatures"]?.fields["tipJar"]?.type  // .int64
/// ```
///
/// A schema is a value. Equality ignores what the language leaves unordered: the order of
/// roles, record types, fields and grants, how names are quoted, keyword case, comments, whether
/// a system field without index options is declared, and whether permissions for one role come
/// in one `GRANT` or several. Two schemas that say the same thing are equal and print the same
/// text.
///
/// Names follow CloudKit's identifier rules (a letter, then letters, digits and `_`, at most 255
/// characters). A schema built in code with other names still prints, but its text does not
/// parse; parse the text back to check a schema built in code.
public struct Schema: Sendable, Hashable, CustomStringConvertible {
    /// The custom security roles (`CREATE ROLE`). The built-in roles ``Role/world``,
    /// ``Role/authenticated`` and ``Role/creator`` exist without being listed here.
    public var roles: Set<Role>
    /// The record types (`RECORD TYPE`), by name.
    public var recordTypes: [Record.RecordType: RecordType]

    /// Creates a schema from its roles and record types.
    public init(roles: Set<Role> = [], recordTypes: [Record.RecordType: RecordType] = [:]) {
        self.roles = roles
        self.recordTypes = recordTypes
    }

    /// Parses schema text in CloudKit's schema language.
    ///
    /// Accepts `DEFINE SCHEMA`, then `CREATE ROLE` and `RECORD TYPE` statements, each ending
    /// in `;`; keywords in any case; quoted names; and `--`, `//` and `/* */` comments.
    /// Rejects text that does not follow the grammar, and text that follows it but
    /// describes an impossible schema: a field, record type or role defined twice, a grant to
    /// a role that does not exist, a system field with another type, or an index option the
    /// field's type cannot have. `Docs/Schema.md` lists the rules.
    ///
    /// - Throws: ``SchemaParseError``, with the line and column of the first problem in reading
    ///   order; a grant to a role the text never creates is reported once the whole text is
    ///   read, since a `CREATE ROLE` may follow the grant.
    public init(parsing text: String) throws(SchemaParseError) {
        var parser = SchemaParser(text)
        self = try parser.parseSchema()
    }
}
