import FogKit
import Testing

/// Schema text that is malformed, or well formed but impossible, is refused with the line and
/// column of the first problem and a message saying what was expected there.
@Suite struct SchemaLanguageRejectionTests {
    /// Schema text, the 1-based line and column of the error, and text the message must contain.
    struct Case: CustomTestStringConvertible, Sendable {
        let text: String
        let line: Int
        let column: Int
        let fragment: String

        init(_ text: String, _ line: Int, _ column: Int, _ fragment: String) {
            self.text = text
            self.line = line
            self.column = column
            self.fragment = fragment
        }

        /// A case whose text is `DEFINE SCHEMA` and, on line 2, `body`.
        static func body(_ body: String, _ line: Int, _ column: Int, _ fragment: String) -> Case {
            Case("DEFINE SCHEMA\n" + body, line, column, fragment)
        }

        var testDescription: String { fragment }
    }

    static let cases: [Case] = [
        // Grammar.
        Case("RECORD TYPE Post (title STRING);", 1, 1, "expected `DEFINE SCHEMA` at the start of the schema, found `RECORD`"),
        Case("DEFINE TABLE", 1, 8, "expected `SCHEMA` after `DEFINE`, found `TABLE`"),
        .body("DROP TYPE Post;", 2, 1, "expected `CREATE ROLE`, `RECORD TYPE` or the end of the schema, found `DROP`"),
        .body("RECORD TYPE Post title STRING);", 2, 18, "expected `(` after `RECORD TYPE Post`, found `title`"),
        .body("RECORD TYPE Post (title, body STRING);", 2, 24, "expected a field type after `title`, found `,`"),
        .body("\tRECORD TYPE Post (title, body STRING);", 2, 25, "expected a field type after `title`, found `,`"),
        .body("RECORD TYPE Post (title BADTYPE);", 2, 25, "expected a field type after `title`, found `BADTYPE`"),
        .body("RECORD TYPE Post (title STRING)", 2, 32, "expected `;` after the record type `Post`, found the end of the schema"),
        .body("RECORD TYPE Post (title STRING) -- no semicolon\nRECORD TYPE Comment (text STRING);", 3, 1, "found `RECORD`"),
        .body("RECORD TYPE Post (title STRING,);", 2, 32, "a comma cannot end the list"),
        .body(
            "RECORD TYPE Post (title STRING SORTABLE extra);", 2, 41,
            "expected QUERYABLE, SEARCHABLE, SORTABLE, `,` or `)` after `title STRING`"),
        .body("RECORD TYPE Post (tags LIST<LIST<STRING>>);", 2, 29, "a LIST cannot hold lists"),
        .body("RECORD TYPE Post (tags LIST<STRING);", 2, 35, "expected `>` after `LIST<STRING`, found `)`"),
        .body("RECORD TYPE Post (tags LIST STRING);", 2, 29, "expected `<` after `LIST`, found `STRING`"),
        .body("RECORD TYPE Post (photo ENCRYPTED ASSET);", 2, 35, "ASSET cannot be ENCRYPTED"),
        .body("RECORD TYPE Post (ref ENCRYPTED REFERENCE);", 2, 33, "REFERENCE cannot be ENCRYPTED"),
        .body("RECORD TYPE Post (n NUMBER PREFERRED AS STRING);", 2, 41, "expected INT64 or DOUBLE after `PREFERRED AS`, found `STRING`"),
        .body("RECORD TYPE Post (GRANT READ WRITE TO \"_world\");", 2, 30, "expected `,` or `TO` after `READ`, found `WRITE`"),
        .body("RECORD TYPE Post (GRANT EVERYTHING TO \"_world\");", 2, 25, "expected READ, CREATE or WRITE after `GRANT`"),
        .body("CREATE ROLE;", 2, 12, "expected a role name after `CREATE ROLE`, found `;`"),
        // Names and lexical rules.
        .body("RECORD TYPE Post (queryable STRING);", 2, 19, "`queryable` is a reserved word; write `\"queryable\"`"),
        .body("RECORD TYPE Post (grant STRING);", 2, 25, "to name a field grant, quote it"),
        .body("RECORD TYPE Post (___etag STRING);", 2, 19, "a name starting with `_` must be quoted"),
        .body("RECORD TYPE Post (\"my title\" STRING);", 2, 19, "is not a name"),
        .body("RECORD TYPE Post (\"title STRING);\nRECORD TYPE B (x STRING);", 2, 19, "a quoted name is not closed on its line"),
        .body("RECORD TYPE Post (\"\" STRING);", 2, 19, "a quoted name cannot be empty"),
        .body("RECORD TYPE Post (\"title", 2, 19, "a quoted name is not closed before the end of the schema"),
        .body("RECORD TYPE Post (title STRING @);", 2, 32, "unexpected character `@`"),
        .body("/* never closed\nRECORD TYPE Post (title STRING);", 2, 1, "a `/*` comment is not closed"),
        .body("RECORD TYPE " + String(repeating: "a", count: 256) + " (b STRING);", 2, 13, "a name is at most 255 characters"),
        .body("RECORD TYPE Post (recordName STRING);", 2, 19, "the field name `recordName` is reserved"),
        .body("RECORD TYPE \"_Hidden\" (a STRING);", 2, 13, "a record type name cannot start with `_`"),
        // Definitions.
        .body("RECORD TYPE Post (title STRING, title STRING);", 2, 33, "the field `title` is already defined in `Post` on line 2"),
        .body(
            "RECORD TYPE Post (\"___etag\" STRING,\n  \"___etag\" STRING QUERYABLE);", 3, 3,
            "the field `___etag` is already defined in `Post` on line 2"),
        .body("RECORD TYPE Post (a STRING);\nRECORD TYPE Post (b STRING);", 3, 13, "the record type `Post` is already defined on line 2"),
        .body("CREATE ROLE Editor;\nCREATE ROLE Editor;", 3, 13, "the role `Editor` is already created on line 2"),
        .body("CREATE ROLE \"_world\";", 2, 13, "`_world` is a built-in role"),
        .body("CREATE ROLE \"_admin\";", 2, 13, "a role name cannot start with `_`"),
        .body("RECORD TYPE Post (GRANT READ TO Editor);", 2, 33, "`Editor` is not a role: create it with `CREATE ROLE`"),
        .body("RECORD TYPE Post (GRANT READ TO \"_everyone\");", 2, 33, "`_everyone` is not a role"),
        .body("RECORD TYPE Post (GRANT READ, READ TO \"_world\");", 2, 31, "READ is already granted to `_world` in `Post`"),
        .body("RECORD TYPE Post (GRANT READ TO \"_world\",\n  GRANT WRITE, READ TO \"_world\");", 3, 16, "READ is already granted"),
        // System fields.
        .body("RECORD TYPE Post (\"___parent\" REFERENCE);", 2, 19, "`___parent` is not a system field"),
        .body("RECORD TYPE Post (\"___etag\" INT64);", 2, 29, "the system field `___etag` has type STRING, not INT64"),
        .body("RECORD TYPE Post (\"___recordID\" REFERENCE SORTABLE);", 2, 43, "the system field `___recordID` can be QUERYABLE only"),
        .body("RECORD TYPE Post (\"___etag\" STRING QUERYABLE);", 2, 36, "the system field `___etag` takes no index options"),
        // Index options a type cannot have.
        .body("RECORD TYPE Post (score INT64 SEARCHABLE);", 2, 31, "`score` is INT64, which cannot be SEARCHABLE"),
        .body("RECORD TYPE Post (data BYTES QUERYABLE SEARCHABLE);", 2, 40, "only STRING and LIST<STRING> are searchable"),
        .body("RECORD TYPE Post (note ENCRYPTED STRING QUERYABLE);", 2, 41, "encrypted values are not indexed"),
        .body(
            "RECORD TYPE Post (photos LIST<ASSET> SORTABLE);", 2, 38,
            "`photos` is LIST<ASSET>, which cannot be SORTABLE: assets are not indexed"),
        .body("RECORD TYPE Post (title STRING QUERYABLE QUERYABLE);", 2, 42, "`QUERYABLE` is repeated on the field `title`"),
    ]

    @Test("Refused with line, column and message", arguments: cases)
    func refused(_ c: Case) {
        do {
            let schema = try Schema(parsing: c.text)
            Issue.record("parsed: \(schema)")
        } catch {
            #expect(error.message.contains(c.fragment), "\(error)")
            #expect(error.line == c.line && error.column == c.column, "\(error)")
        }
    }
}
