extension Schema {
    /// The schema's canonical text: parsing it gives back an equal schema, and printing that
    /// schema gives the same bytes. Schemas that are equal print the same text.
    ///
    /// The canonical form follows what `cktool export-schema` writes:
    ///
    /// - `DEFINE SCHEMA` on the first line; every statement indented 4 spaces, every item of a
    ///   record type 8; keywords in upper case; no comments; a newline at the end.
    /// - The `CREATE ROLE` statements first, by role name, after a blank line.
    /// - The record types by name, each after a blank line, as `RECORD TYPE Name (`, its
    ///   items one to a line separated by commas, and `);`.
    /// - In a record type: the six system fields first, always, in the order `___createTime`,
    ///   `___createdBy`, `___etag`, `___modTime`, `___modifiedBy`, `___recordID`; then the fields
    ///   by name; then one `GRANT` per role, the built-in roles first (`_creator`, `_icloud`,
    ///   `_world`) and then custom roles by name.
    /// - Field names padded with spaces to one column: the longest name of the record type plus
    ///   one space. Then the type, and the index options in the order
    ///   `QUERYABLE SEARCHABLE SORTABLE`, each after one space.
    /// - Permissions in the order `READ, CREATE, WRITE`.
    /// - A name is quoted only when it must be: when it starts with `_` (system fields and
    ///   built-in roles), or is a reserved word (`grant`, `preferred`, `queryable`,
    ///   `searchable`, `sortable`, in any case).
    ///
    /// Names are compared by their UTF-8 bytes, so `Zebra` sorts before `apple`.
    ///
    /// ```
    /// DEFINE SCHEMA
    ///
    ///     CREATE ROLE Admin;
    ///
    ///     RECORD TYPE AppFeatures (
    ///         "___createTime" TIMESTAMP,
    ///         "___createdBy"  REFERENCE,
    ///         "___etag"       STRING,
    ///         "___modTime"    TIMESTAMP SORTABLE,
    ///         "___modifiedBy" REFERENCE,
    ///         "___recordID"   REFERENCE QUERYABLE,
    ///         tipJar          INT64,
    ///         GRANT READ TO "_world",
    ///         GRANT READ, CREATE, WRITE TO Admin
    ///     );
    /// ```
    public var description: String {
        var text = "DEFINE SCHEMA\n"
        if !roles.isEmpty {
            text += "\n"
            for role in roles.sorted() { text += "    CREATE ROLE \(Self.printedName(role.name));\n" }
        }
        for name in recordTypes.keys.sorted(by: Self.precedes) {
            text += "\n"
            recordTypes[name]!.write(named: name, to: &text)
        }
        return text
    }

    /// Whether `a` sorts before `b` in the canonical text: by UTF-8 bytes.
    static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// `name`, quoted when it starts with `_`, is a reserved word or is not an identifier.
    static func printedName(_ name: String) -> String {
        let scalars = name.unicodeScalars
        let isIdentifier =
            scalars.first.map { ("a"..."z").contains($0) || ("A"..."Z").contains($0) } == true
            && scalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
        return isIdentifier && !SchemaParser.reservedWords.contains(name.uppercased()) ? name : "\"\(name)\""
    }

    /// The index options in canonical order: `QUERYABLE SEARCHABLE SORTABLE`, as CloudKit
    /// exports them.
    static func printedOptions(_ options: IndexOptions) -> String {
        var text = ""
        if options.contains(.queryable) { text += " QUERYABLE" }
        if options.contains(.searchable) { text += " SEARCHABLE" }
        if options.contains(.sortable) { text += " SORTABLE" }
        return text
    }
}

extension Schema.RecordType {
    /// Appends `RECORD TYPE name ( … );` in canonical form.
    fileprivate func write(named name: String, to text: inout String) {
        var fieldLines: [(name: String, rest: String)] = []
        for system in Schema.SystemField.allCases {
            let options = systemFieldIndexes[system] ?? []
            fieldLines.append((Schema.printedName(system.rawValue), "\(system.type)\(Schema.printedOptions(options))"))
        }
        for fieldName in fields.keys.sorted(by: Schema.precedes) {
            let field = fields[fieldName]!
            fieldLines.append((Schema.printedName(fieldName), "\(field.type)\(Schema.printedOptions(field.indexes))"))
        }
        let width = fieldLines.map(\.name.unicodeScalars.count).max() ?? 0
        var lines = fieldLines.map { line in
            line.name + String(repeating: " ", count: width - line.name.unicodeScalars.count + 1) + line.rest
        }
        for role in grants.keys.sorted() {
            lines.append("GRANT \(grants[role]!) TO \(Schema.printedName(role.name))")
        }
        text += "    RECORD TYPE \(Schema.printedName(name)) (\n"
        text += lines.map { "        " + $0 }.joined(separator: ",\n")
        text += "\n    );\n"
    }
}
