import ArgumentParser
import FogKit
import Foundation

/// `fog schema`: the schema workflow of CloudKit's console and `cktool`, on a local store:
/// export, import into development, deploy to production, compare, reset development.
struct SchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Export, import, deploy, compare and reset the schema (CloudKit's schema language).",
        discussion: """
            Development creates record types, fields and their default indexes just in time, as \
            records are saved; production has only what was deployed to it. The workflow:
              fog schema export > schema.ckdb    # development's schema
              fog schema import schema.ckdb      # edit it, make it development's
              fog schema diff                    # what a deployment would change
              fog schema deploy                  # development to production
              fog schema reset --yes             # empty development
            Docs/Schema.md describes the language and each step's rules.
            """,
        subcommands: [
            SchemaExportCommand.self, SchemaImportCommand.self, SchemaDeployCommand.self, SchemaDiffCommand.self,
            SchemaResetCommand.self,
        ])
}

extension Container.Environment: ExpressibleByArgument {}

/// `fog schema export`: prints an environment's schema.
struct SchemaExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print an environment's schema in CloudKit's schema language (canonical text).",
        discussion: """
            The text is canonical (Docs/Schema.md): exporting, importing it and exporting again \
            gives the same bytes. Exporting production creates its empty store when the \
            container has none yet.
            """)

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "development or production.")
    var environment: Container.Environment = .development

    @Option(name: .long, help: "Write the text to this file instead of standard output.")
    var output: String?

    func run() async throws {
        let admin = try store.openAdministrator()
        defer { admin.close() }
        let text = try admin.schema(for: environment).description
        if let output {
            try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
        } else {
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }
}

/// `fog schema import`: makes a schema file development's schema.
struct SchemaImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Make a schema file (CloudKit's schema language) the development schema.",
        discussion: """
            As `cktool import-schema` does, the file replaces development's schema: record \
            types, fields, roles and grants it does not name are removed from the schema \
            (records keep their values; Users stays), index options become what it says, and \
            indexes it adds are built before the command returns. Changing the type of a field \
            development has is refused (reset development first). A file that does not parse \
            is reported as FILE:line:column: message, and nothing changes. A missing store is \
            created, with --container's identifier.
            """)

    @Argument(help: "The schema file (.ckdb), or - for standard input.")
    var file: String

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "The container identifier, when the store does not exist yet.")
    var container = "iCloud.fog.schema"

    func run() async throws {
        guard let handle = file == "-" ? FileHandle.standardInput : FileHandle(forReadingAtPath: file) else {
            throw ValidationError("cannot read \(file)")
        }
        let data = try handle.readToEnd() ?? Data()
        guard let text = String(data: data, encoding: .utf8) else {
            throw ValidationError("\(file) is not UTF-8 text")
        }
        let schema: Schema
        do {
            schema = try Schema(parsing: text)
        } catch {
            FileHandle.standardError.write(Data("\(file == "-" ? "<stdin>" : file):\(error.line):\(error.column): \(error.message)\n".utf8))
            throw ExitCode.failure
        }
        let location = try store.prepare()
        let identifier = try Container.storedIdentifier(in: location) ?? container
        let admin = try Container.Administrator(identifier: identifier, store: location)
        defer { admin.close() }
        try await admin.importSchema(schema)
        FileHandle.standardError.write(
            Data("imported \(schema.recordTypes.count) record types and \(schema.roles.count) roles into development\n".utf8))
    }
}

/// `fog schema deploy`: copies development's schema to production.
struct SchemaDeployCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deploy",
        abstract: "Deploy the development schema to production (additive changes only).",
        discussion: """
            Record types, fields, index options, roles and grants are copied; records never \
            are. Production's record types, fields and roles must all stay, each field with its \
            type: otherwise the deployment is refused, naming every one, and production is not \
            changed. Indexes production gains are built before the command returns. \
            `fog schema diff` shows what a deployment changes.
            """)

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let admin = try store.openAdministrator()
        defer { admin.close() }
        try await admin.deploySchema()
        let deployed = try admin.schema(for: .production)
        FileHandle.standardError.write(
            Data("deployed \(deployed.recordTypes.count) record types and \(deployed.roles.count) roles to production\n".utf8))
    }
}

/// `fog schema diff`: development's schema against production's.
struct SchemaDiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare the development schema with production's.",
        discussion: """
            Compares the two canonical texts line by line, ignoring the padding that aligns \
            a record type's items and the commas between them. A line only production has is \
            printed after `- `, one only development has after `+ `, and each record type with \
            changes is named first (after two spaces) when its own line did not change. Exits \
            0 and prints "no differences" when the schemas are the same, 1 when they differ.
            """)

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let admin = try store.openAdministrator()
        defer { admin.close() }
        let production = try admin.schema(for: .production).description
        let development = try admin.schema(for: .development).description
        let lines = SchemaDiff.lines(from: production, to: development)
        if lines.isEmpty {
            print("no differences")
            return
        }
        for line in lines { print(line) }
        throw ExitCode(1)
    }
}

/// `fog schema reset`: empties development.
struct SchemaResetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Reset development: delete its records, and make its schema production's.",
        discussion: """
            As the CloudKit console's "Reset Development Environment" does: every development \
            record, zone, change log and asset is deleted, and development's schema becomes \
            production's (empty when nothing was deployed). Users stay. Change tokens taken \
            before fail with changeTokenExpired. Production is not touched. Run from a \
            terminal, it needs --yes.
            """)

    @OptionGroup var store: StoreOptions

    @Flag(name: .long, help: "Reset without asking (needed when standard input is a terminal).")
    var yes = false

    func run() async throws {
        if !yes && isatty(STDIN_FILENO) == 1 {
            FileHandle.standardError.write(
                Data("this deletes every development record, zone and asset of \(store.store); run again with --yes to reset\n".utf8))
            throw ExitCode.failure
        }
        let admin = try store.openAdministrator()
        defer { admin.close() }
        try await admin.resetDevelopmentEnvironment()
        let schema = try admin.schema(for: .development)
        FileHandle.standardError.write(
            Data("reset development: no records; \(schema.recordTypes.count) record types from production\n".utf8))
    }
}

/// The line diff `fog schema diff` prints.
enum SchemaDiff {
    /// The lines of `new` and `old` that differ, `- ` for a line only `old` has, `+ ` for one
    /// only `new` has, in text order, deletions before insertions where both fit. A change
    /// inside a record type whose `RECORD TYPE` line is common is preceded by that line,
    /// after two spaces, once. Lines are compared without their trailing comma and with runs
    /// of spaces after the indentation made one; empty when the texts say the same. Small
    /// texts only: time and memory grow with the product of the line counts.
    static func lines(from old: String, to new: String) -> [String] {
        let a = normalizedLines(old), b = normalizedLines(new)
        // lengths[i][j]: the longest common subsequence of a[i...] and b[j...].
        var lengths = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                lengths[i][j] = a[i] == b[j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
            }
        }
        var output: [String] = []
        var section: String?  // the last RECORD TYPE line passed, when common
        var named: String?  // the section last printed
        func emit(_ prefix: String, _ line: String) {
            if let section, section != named {
                output.append("  " + section)
                named = section
            }
            output.append(prefix + line)
        }
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if i < a.count, j < b.count, a[i] == b[j] {
                section = isRecordTypeLine(a[i]) ? a[i] : (a[i].hasPrefix("    );") ? nil : section)
                i += 1
                j += 1
            } else if i < a.count, j == b.count || lengths[i + 1][j] >= lengths[i][j + 1] {
                if isRecordTypeLine(a[i]) || a[i].hasPrefix("    );") { section = nil }
                emit("- ", a[i])
                i += 1
            } else {
                if isRecordTypeLine(b[j]) || b[j].hasPrefix("    );") { section = nil }
                emit("+ ", b[j])
                j += 1
            }
        }
        return output
    }

    private static func isRecordTypeLine(_ line: String) -> Bool { line.hasPrefix("    RECORD TYPE ") }

    /// The lines of `text`, each without a trailing comma and with runs of spaces after its
    /// indentation made one; without empty lines.
    private static func normalizedLines(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let indentation = line.prefix { $0 == " " }
            var words = line.dropFirst(indentation.count).split(separator: " ").joined(separator: " ")
            if words.hasSuffix(",") { words.removeLast() }
            return words.isEmpty ? nil : indentation + words
        }
    }
}
