import FogKit
import Testing

/// CloudKit's schema language (reference §13.4): parsing into `Schema`, the canonical text, and
/// what the value holds.
@Suite struct SchemaLanguageTests {
    @Test("The reference's full example parses and prints its canonical text")
    func referenceExample() throws {
        let schema = try Schema(parsing: SchemaLanguageFixtures.referenceExample)
        #expect(schema.description == SchemaLanguageFixtures.referenceExampleCanonical)
        let again = try Schema(parsing: schema.description)
        #expect(again == schema)
        #expect(again.description == schema.description)
    }

    @Test("The reference's example holds every construct")
    func referenceExampleContents() throws {
        let schema = try Schema(parsing: SchemaLanguageFixtures.referenceExample)
        #expect(schema.roles == ["Moderator", "Editor"])
        #expect(Set(schema.recordTypes.keys) == ["Notebook", "Entry", "Users"])
        let entry = try #require(schema.recordTypes["Entry"])
        #expect(entry.fields["legacyScore"] == Schema.Field(.primitive(.number(preferredAs: .double))))
        #expect(entry.fields["privateRemark"] == Schema.Field(.primitive(.encrypted(.string))))
        #expect(entry.fields["related"] == Schema.Field(.list(.reference), indexes: .queryable))
        #expect(entry.fields["photos"]?.type == .list(.asset))
        #expect(entry.fields["grant"]?.type == .string)
        #expect(entry.fields["body"]?.indexes == .searchable)
        #expect(entry.fields["___recordID"] == nil)
        #expect(entry.systemFieldIndexes == [.createTime: [.queryable, .sortable], .recordID: .queryable, .createdBy: .queryable])
        #expect(entry.grants == [.creator: .write, .authenticated: .create, .world: .read, "Editor": [.read, .create, .write]])
        let notebook = try #require(schema.recordTypes["Notebook"])
        #expect(notebook.fields["title"]?.indexes == [.queryable, .sortable, .searchable])
        #expect(notebook.fields["tags"] == Schema.Field(.list(.string), indexes: .queryable))
    }

    @Test("The seed apps' schema is canonical: it prints back byte for byte")
    func seedApps() throws {
        let schema = try Schema(parsing: SchemaLanguageFixtures.seedApps)
        #expect(schema.description == SchemaLanguageFixtures.seedApps)
        #expect(schema.roles == ["Admin"])
        let chibi = try #require(schema.recordTypes["PublishedChibi"])
        #expect(chibi.fields["publishedAt"] == Schema.Field(.timestamp, indexes: [.queryable, .sortable]))
        #expect(chibi.grants[.world] == .read)
        #expect(chibi.grants["Admin"] == [.read, .create, .write])
        #expect(chibi.grants[.authenticated] == nil)
        #expect(schema.recordTypes["Communication"]?.fields["image"]?.type == .asset)
        #expect(schema.recordTypes["Communication"]?.fields["type"]?.type == .string)
        #expect(schema.recordTypes["Note"]?.grants.isEmpty == true)
    }

    @Test("`indexes` gives what setIndexes(_:ofRecordType:) takes, system fields under their keys")
    func indexesForSetIndexes() throws {
        let schema = try Schema(parsing: SchemaLanguageFixtures.seedApps)
        let post = try #require(schema.recordTypes["Post"])
        #expect(
            post.indexes == [
                "caption": [.queryable, .searchable], "commentCount": [], "photo": [], "timestamp": [.queryable, .sortable],
                "creationDate": [.queryable, .sortable], "creatorUserRecordID": .queryable, "modificationDate": [],
                "lastModifiedUserRecordID": [], "recordID": .queryable,
            ])
    }

    @Test("Schemas that say the same thing are equal and print the same")
    func equalityIgnoresOrder() throws {
        let a = try Schema(
            parsing: """
                DEFINE SCHEMA
                RECORD TYPE B (y INT64, x STRING QUERYABLE SORTABLE, GRANT READ TO "_world", GRANT WRITE TO R, GRANT CREATE TO R);
                CREATE ROLE R;
                RECORD TYPE A ("___etag" STRING, z DOUBLE);
                """)
        let b = try Schema(
            parsing: """
                -- keywords in any case, names quoted or not, comments anywhere
                define schema create role "R"; /* roles first */
                record type "A" (z double);
                Record Type B (
                    "x" String Sortable Queryable, // options in any order
                    Grant Create, Write To R,
                    grant read to "_world",
                    y Int64
                );
                """)
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a.description == b.description)
    }

    @Test("A schema built in code prints text that parses back to it")
    func builtInCode() throws {
        var post = Schema.RecordType(fields: ["title": Schema.Field(.string, indexes: .searchable)])
        post.grants[.world] = .read
        post.grants["Admin"] = [.create, .write]
        post.systemFieldIndexes[.modTime] = .sortable
        post.systemFieldIndexes[.etag] = []
        post.fields["queryable"] = Schema.Field(.list(.number(preferredAs: nil)))
        let schema = Schema(roles: ["Admin"], recordTypes: ["Post": post])
        #expect(post.systemFieldIndexes == [.modTime: .sortable])
        let text = schema.description
        #expect(text.contains(#"    "queryable"     LIST<NUMBER>,"#))
        #expect(text.contains("        GRANT CREATE, WRITE TO Admin\n    );\n"))
        #expect(try Schema(parsing: text) == schema)
    }

    @Test("The canonical example of the documentation is canonical")
    func documentedExample() throws {
        let text = """
            DEFINE SCHEMA

                CREATE ROLE Admin;

                RECORD TYPE AppFeatures (
                    "___createTime" TIMESTAMP,
                    "___createdBy"  REFERENCE,
                    "___etag"       STRING,
                    "___modTime"    TIMESTAMP SORTABLE,
                    "___modifiedBy" REFERENCE,
                    "___recordID"   REFERENCE QUERYABLE,
                    tipJar          INT64,
                    GRANT READ TO "_world",
                    GRANT READ, CREATE, WRITE TO Admin
                );

            """
        let schema = try Schema(parsing: text)
        #expect(schema.description == text)
        #expect(schema.recordTypes["AppFeatures"]?.fields["tipJar"]?.type == .int64)
    }

    @Test("Line ends, tabs and comments at the end of the text")
    func lexicalEdges() throws {
        let crlf = try Schema(parsing: "DEFINE SCHEMA\r\n\tRECORD TYPE A (\r\n\tx STRING\r\n);\r\n-- done")
        #expect(crlf.recordTypes["A"]?.fields["x"]?.type == .string)
        #expect(try Schema(parsing: "\u{FEFF}DEFINE SCHEMA RECORD TYPE A (x STRING);") == crlf)
        #expect(throws: SchemaParseError(line: 3, column: 5, message: "expected a field type after `x`, found `)`")) {
            try Schema(parsing: "DEFINE SCHEMA\r\nRECORD TYPE A (\r\n  x );")
        }
    }

    @Test("The empty schema and a record type without items")
    func emptyForms() throws {
        #expect(try Schema(parsing: "DEFINE SCHEMA") == Schema())
        #expect(Schema().description == "DEFINE SCHEMA\n")
        let schema = try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Empty ( );")
        #expect(schema.recordTypes["Empty"] == Schema.RecordType())
        #expect(try Schema(parsing: schema.description) == schema)
    }

    @Test("Types print as the language writes them and map to FogKit's field types")
    func dataTypes() {
        #expect(Schema.DataType.list(.encrypted(.timestamp)).description == "LIST<ENCRYPTED TIMESTAMP>")
        #expect(Schema.DataType.primitive(.number(preferredAs: .int64)).description == "NUMBER PREFERRED AS INT64")
        #expect(Schema.DataType.list(.reference).fieldType == .referenceList)
        #expect(Schema.DataType.primitive(.number(preferredAs: .double)).fieldType == .double)
        #expect(Schema.DataType.primitive(.number(preferredAs: nil)).fieldType == nil)
        #expect(Schema.DataType.primitive(.encrypted(.string)).fieldType == nil)
        #expect(Schema.DataType.list(.string).allowedIndexes == [.queryable, .sortable, .searchable])
        #expect(Schema.DataType.list(.asset).allowedIndexes == [])
        #expect(Schema.DataType.bytes.allowedIndexes == [.queryable, .sortable])
    }

    @Test("Errors print as line:column: message")
    func errorDescription() {
        #expect(throws: SchemaParseError(line: 2, column: 24, message: "expected a field type after `title`, found `,`")) {
            try Schema(parsing: "DEFINE SCHEMA\nRECORD TYPE Post (title, body STRING);")
        }
        let error = SchemaParseError(line: 3, column: 7, message: "m")
        #expect(error.description == "3:7: m")
    }
}
