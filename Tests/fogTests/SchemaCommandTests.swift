import FogKit
import FogKitTesting
import Foundation
import Testing

/// `fog schema export | import | deploy | diff | reset`, run as the built tool.
@Suite struct SchemaCommandTests {
    static let identifier = "iCloud.test.schema-cli"

    /// Writes `text` to `name` in `directory`; returns its path.
    static func write(_ text: String, _ name: String, in directory: TemporaryDirectory) throws -> String {
        let url = directory.url.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// Runs `fog` and expects it to succeed; returns its standard output.
    @discardableResult
    static func fogSucceeds(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let run = try FogTool.run(arguments)
        #expect(run.status == 0, "fog \(arguments.joined(separator: " ")): \(run.err)", sourceLocation: sourceLocation)
        return run.out
    }

    /// A store whose development schema is ``SeedSchema/text``, imported with `fog`.
    static func seededStore(in work: TemporaryDirectory, named name: String = "store") throws -> String {
        let store = work.appending(name).path
        let file = try write(SeedSchema.text, "seeds.ckdb", in: work)
        try fogSucceeds(["schema", "import", file, "--store", store, "--container", identifier])
        return store
    }

    @Test func dataCommandsWorkOnTheEnvironmentTheyAreGiven() throws {
        let work = try TemporaryDirectory("schema-environments")
        let store = try Self.seededStore(in: work)
        try Self.fogSucceeds(["schema", "deploy", "--store", store])
        // Post: `_icloud` creates, `_world` reads (Note grants no one CREATE in the public database).
        let line = #"{"recordName":"n1","recordType":"Post","fields":{"caption":{"type":"STRING","value":"in production"}}}"#
        let file = try Self.write(line + "\n", "note.jsonl", in: work)
        try Self.fogSucceeds(["import", file, "--store", store, "--environment", "production", "--database", "public", "--user", "alice"])
        let production = try Self.fogSucceeds(
            [
                "query", "Post", "--where", "caption == 'in production'", "--database", "public", "--environment", "production", "--store",
                store,
            ])
        #expect(production.contains("n1"), "\(production)")
        let development = try Self.fogSucceeds(
            ["query", "Post", "--where", "caption == 'in production'", "--database", "public", "--store", store])
        #expect(!development.contains("n1"), "\(development)")
        // Production refuses a field its schema lacks.
        let unknown = #"{"recordName":"n2","recordType":"Post","fields":{"mood":{"type":"STRING","value":"x"}}}"#
        let bad = try Self.write(unknown + "\n", "bad.jsonl", in: work)
        let run = try FogTool.run([
            "import", bad, "--store", store, "--environment", "production", "--database", "public", "--user", "alice",
        ])
        #expect(run.status != 0 && run.err.contains("mood"), "\(run.err)")
    }

    @Test func importThenExportGivesTheCanonicalTextAndRoundTripsByteForByte() throws {
        let work = try TemporaryDirectory("schema-roundtrip")
        let store = try Self.seededStore(in: work)
        let exported = try Self.fogSucceeds(["schema", "export", "--store", store])
        #expect(exported == SeedSchema.canonical)
        // The exported text, imported into another store and exported to a file, is the same bytes.
        let file = try Self.write(exported, "exported.ckdb", in: work)
        let other = work.appending("other").path
        try Self.fogSucceeds(["schema", "import", file, "--store", other, "--container", Self.identifier])
        let output = work.appending("again.ckdb")
        let quiet = try Self.fogSucceeds(["schema", "export", "--store", other, "--output", output.path])
        #expect(quiet.isEmpty, "--output writes nothing to standard output")
        #expect(try Data(contentsOf: output) == Data(exported.utf8))
        // Importing it again into the first store changes nothing.
        try Self.fogSucceeds(["schema", "import", file, "--store", store])
        #expect(try Self.fogSucceeds(["schema", "export", "--store", store]) == exported)
    }

    @Test func aParseErrorIsReportedWithFileLineAndColumnAndChangesNothing() throws {
        let work = try TemporaryDirectory("schema-parse-error")
        let store = try Self.seededStore(in: work)
        let bad = try Self.write(
            """
            DEFINE SCHEMA
                -- a comment line counts
                RECORD TYPE Post (
                    caption STRING QUERYABLE,
                    title, body STRING
                );
            """, "bad.ckdb", in: work)
        let run = try FogTool.run(["schema", "import", bad, "--store", store])
        #expect(run.status != 0)
        #expect(run.err.hasPrefix("\(bad):5:14: expected a field type after `title`, found `,`"), "\(run.err)")
        // From standard input, the file is named <stdin>.
        let piped = try FogTool.run(["schema", "import", "-", "--store", store], stdin: URL(fileURLWithPath: bad))
        #expect(piped.status != 0)
        #expect(piped.err.hasPrefix("<stdin>:5:14: "), "\(piped.err)")
        #expect(try Self.fogSucceeds(["schema", "export", "--store", store]) == SeedSchema.canonical)
    }

    @Test func importRefusesChangingAFieldsTypeNamingIt() throws {
        let work = try TemporaryDirectory("schema-type-change")
        let store = try Self.seededStore(in: work)
        let changed = SeedSchema.text.replacingOccurrences(of: "tipJar INT64", with: "tipJar STRING")
        let run = try FogTool.run(["schema", "import", try Self.write(changed, "changed.ckdb", in: work), "--store", store])
        #expect(run.status != 0)
        #expect(run.err.contains("AppFeatures.tipJar changes from INT64 to STRING"), "\(run.err)")
        #expect(try Self.fogSucceeds(["schema", "export", "--store", store]) == SeedSchema.canonical)
    }

    @Test func deployMakesProductionsSchemaDevelopments() throws {
        let work = try TemporaryDirectory("schema-deploy")
        let store = try Self.seededStore(in: work)
        let before = try Self.fogSucceeds(["schema", "export", "--store", store, "--environment", "production"])
        #expect(before == "DEFINE SCHEMA\n", "nothing is deployed yet")
        try Self.fogSucceeds(["schema", "deploy", "--store", store])
        let production = try Self.fogSucceeds(["schema", "export", "--store", store, "--environment", "production"])
        #expect(production == SeedSchema.canonical)
        #expect(try Self.fogSucceeds(["schema", "export", "--store", store, "--environment", "development"]) == production)
        #expect(FileManager.default.fileExists(atPath: work.appending("store/production").path))
        let diff = try FogTool.run(["schema", "diff", "--store", store])
        #expect(diff.status == 0)
        #expect(diff.out == "no differences\n")
    }

    @Test func deployRefusesRemovingDeployedFieldsNamingEach() throws {
        let work = try TemporaryDirectory("schema-deploy-refused")
        let store = try Self.seededStore(in: work)
        try Self.fogSucceeds(["schema", "deploy", "--store", store])
        let lacking = SeedSchema.text
            .replacingOccurrences(of: "        photo ASSET,\n", with: "")
            .replacingOccurrences(of: "        tipJar INT64,\n", with: "")
        #expect(lacking != SeedSchema.text)
        try Self.fogSucceeds(["schema", "import", try Self.write(lacking, "lacking.ckdb", in: work), "--store", store])
        let run = try FogTool.run(["schema", "deploy", "--store", store])
        #expect(run.status != 0)
        #expect(run.err.contains("field AppFeatures.tipJar (INT64) is removed"), "\(run.err)")
        #expect(run.err.contains("field Post.photo (ASSET) is removed"), "\(run.err)")
        #expect(try Self.fogSucceeds(["schema", "export", "--store", store, "--environment", "production"]) == SeedSchema.canonical)
    }

    @Test func diffShowsWhatDevelopmentAddsAndRemovesUnderItsRecordType() throws {
        let work = try TemporaryDirectory("schema-diff")
        let store = try Self.seededStore(in: work)
        try Self.fogSucceeds(["schema", "deploy", "--store", store])
        let edited = SeedSchema.text
            .replacingOccurrences(of: "        tipJar INT64,\n", with: "        tipJar INT64,\n        wishlistEnabled INT64 QUERYABLE,\n")
            .replacingOccurrences(of: "        content ENCRYPTED STRING,\n", with: "")
            .replacingOccurrences(of: "CREATE ROLE Editor;", with: "CREATE ROLE Editor; CREATE ROLE Tester;")
        try Self.fogSucceeds(["schema", "import", try Self.write(edited, "edited.ckdb", in: work), "--store", store])
        let diff = try FogTool.run(["schema", "diff", "--store", store])
        #expect(diff.status == 1, "schemas that differ exit 1, as diff(1) does")
        #expect(
            diff.out == """
                +     CREATE ROLE Tester;
                      RECORD TYPE AppFeatures (
                +         wishlistEnabled INT64 QUERYABLE
                      RECORD TYPE Note (
                -         content ENCRYPTED STRING

                """)
    }

    @Test func diffNamesARecordTypeOnlyOneSideHas() throws {
        let work = try TemporaryDirectory("schema-diff-type")
        let store = try Self.seededStore(in: work)
        try Self.fogSucceeds(["schema", "deploy", "--store", store])
        let edited = SeedSchema.text.replacingOccurrences(
            of: "    RECORD TYPE Users (", with: "    RECORD TYPE Tag (\n        name STRING QUERYABLE\n    );\n\n    RECORD TYPE Users (")
        try Self.fogSucceeds(["schema", "import", try Self.write(edited, "edited.ckdb", in: work), "--store", store])
        let diff = try FogTool.run(["schema", "diff", "--store", store])
        #expect(diff.status == 1)
        #expect(
            diff.out == """
                +     RECORD TYPE Tag (
                +         "___createTime" TIMESTAMP
                +         "___createdBy" REFERENCE
                +         "___etag" STRING
                +         "___modTime" TIMESTAMP
                +         "___modifiedBy" REFERENCE
                +         "___recordID" REFERENCE
                +         name STRING QUERYABLE
                +     );

                """)
    }

    @Test func resetEmptiesDevelopmentAndGivesItProductionsSchema() async throws {
        let work = try TemporaryDirectory("schema-reset")
        let store = try Self.seededStore(in: work)
        try Self.fogSucceeds(["schema", "deploy", "--store", store])
        do {
            let admin = try Container.Administrator(
                identifier: Self.identifier, directory: URL(fileURLWithPath: store), configuration: .init(durability: .none))
            defer { admin.close() }
            let alice = try admin.container(user: "alice")
            defer { alice.close() }
            let post = Record(recordType: "Post", recordID: Record.ID(recordName: "post-1"))
            post["caption"] = "hello"
            _ = try await alice.privateCloudDatabase.save(post)
            let memo = Record(recordType: "Memo", recordID: Record.ID(recordName: "memo-1"))
            memo["text"] = "a type development made just in time"
            _ = try await alice.privateCloudDatabase.save(memo)
            let count = try admin.storeInfo().recordCount
            #expect(count == 4, "two records and alice's Users records (private and public)")
        }
        let grown = try Self.fogSucceeds(["schema", "export", "--store", store])
        #expect(grown.contains("RECORD TYPE Memo ("))
        let run = try FogTool.run(["schema", "reset", "--store", store])
        #expect(run.status == 0, "no confirmation when standard input is not a terminal: \(run.err)")
        let development = try Self.fogSucceeds(["schema", "export", "--store", store])
        #expect(development == SeedSchema.canonical, "development's schema is production's again")
        let admin = try Container.Administrator(
            identifier: Self.identifier, directory: URL(fileURLWithPath: store), configuration: .init(durability: .none))
        defer { admin.close() }
        let count = try admin.storeInfo().recordCount
        #expect(count == 2, "only alice's new Users records")
        let alice = try admin.container(user: "alice")
        defer { alice.close() }
        await #expect(throws: FogError.self) {
            _ = try await alice.privateCloudDatabase.record(for: Record.ID(recordName: "post-1"))
        }
    }

    /// `script` (util-linux) runs the command on a pseudo-terminal; `-e` gives its status.
    static let script = "/usr/bin/script"

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: script)))
    func resetFromATerminalNeedsYes() async throws {
        let work = try TemporaryDirectory("schema-reset-tty")
        let store = try Self.seededStore(in: work)
        let command = [FogTool.url.path, "schema", "reset", "--store", store].map { "'\($0)'" }.joined(separator: " ")
        let refused = try FogTool.run(["-qec", command, "/dev/null"], executable: URL(fileURLWithPath: Self.script))
        #expect(refused.status != 0)
        #expect(refused.out.contains("run again with --yes"), "script copies the terminal's output: \(refused.out)")
        #expect(try Self.fogSucceeds(["schema", "export", "--store", store]) == SeedSchema.canonical, "nothing was reset")
        let confirmed = try FogTool.run(["-qec", command + " --yes", "/dev/null"], executable: URL(fileURLWithPath: Self.script))
        #expect(confirmed.status == 0, "\(confirmed.out)")
        #expect(try Self.fogSucceeds(["schema", "export", "--store", store]) == "DEFINE SCHEMA\n", "production's empty schema")
    }

    @Test func justInTimeFieldsExportWithCloudKitsDefaultIndexesAndGrants() async throws {
        let work = try TemporaryDirectory("schema-jit")
        let directory = work.appending("store")
        do {
            let admin = try Container.Administrator(
                identifier: Self.identifier, directory: directory, configuration: .init(durability: .none))
            defer { admin.close() }
            let alice = try admin.container(user: "alice")
            defer { alice.close() }
            let memo = Record(recordType: "Memo", recordID: Record.ID(recordName: "memo-1"))
            memo["title"] = "groceries"
            memo["count"] = Int64(3)
            memo["weight"] = Double(1.5)
            memo["due"] = Date(timeIntervalSince1970: 0)
            memo["blob"] = Data([1, 2, 3])
            memo["tags"] = ["a", "b"]
            memo["place"] = Location(latitude: 1, longitude: 2)
            _ = try await alice.privateCloudDatabase.save(memo)
        }
        let exported = try Self.fogSucceeds(["schema", "export", "--store", directory.path])
        #expect(
            exported.contains(
                """
                    RECORD TYPE Memo (
                        "___createTime" TIMESTAMP,
                        "___createdBy"  REFERENCE,
                        "___etag"       STRING,
                        "___modTime"    TIMESTAMP,
                        "___modifiedBy" REFERENCE,
                        "___recordID"   REFERENCE,
                        blob            BYTES,
                        count           INT64 QUERYABLE SORTABLE,
                        due             TIMESTAMP QUERYABLE SORTABLE,
                        place           LOCATION QUERYABLE,
                        tags            LIST<STRING> QUERYABLE,
                        title           STRING QUERYABLE SEARCHABLE SORTABLE,
                        weight          DOUBLE QUERYABLE SORTABLE,
                        GRANT WRITE TO "_creator",
                        GRANT CREATE TO "_icloud",
                        GRANT READ TO "_world"
                    );
                """), "\(exported)")
        // alice's Users record made the Users type, with its own grants.
        #expect(
            exported.contains(
                """
                        "___recordID"   REFERENCE,
                        GRANT WRITE TO "_creator",
                        GRANT READ TO "_world"
                    );
                """), "\(exported)")
    }

    @Test func aFolderWithoutAStoreIsNamed() throws {
        let work = try TemporaryDirectory("schema-no-store")
        let missing = work.appending("missing").path
        for arguments in [["export"], ["deploy"], ["diff"], ["reset"]] {
            let run = try FogTool.run(["schema"] + arguments + ["--store", missing])
            #expect(run.status != 0)
            #expect(run.err.contains("\(missing) holds no FogKit store"), "\(arguments): \(run.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: missing), "nothing is created")
    }
}
