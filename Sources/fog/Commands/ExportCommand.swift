import ArgumentParser
import FogKit
import Foundation

/// `fog export`: writes records as JSON Lines of CloudKit Web Services record dictionaries.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a zone, a database or the whole container as JSON Lines of CloudKit record dictionaries.",
        discussion: """
            Examples:
              fog export > all.jsonl                                  # every record of the container
              fog export --database private --user alice > alice.jsonl
              fog export --database public --output public-export     # records.jsonl + assets/
              fog export --user alice --zone Notes --output notes-export
            Each line is one record dictionary with its zoneID, plus "database" and "user" (the \
            owner, or for the public database the creator). \
            To standard output an asset's downloadURL is the stored file's file: URL; with \
            --output DIR the files are copied to DIR/assets/ and downloadURL is "assets/NAME". \
            Users records are left out; each user comes first as a line of its own with its \
            directory entry, and a share's line carries its participants. \
            Docs/ImportExport.md describes the format.
            """)

    @OptionGroup var store: StoreOptions

    @OptionGroup var environment: EnvironmentOptions

    @Option(name: .long, help: "The database: private or public (default: every database).")
    var database: String?

    @Option(name: .long, help: "The user whose private database to export (default: every user).")
    var user: String?

    @Option(name: .long, help: "One zone of the database (needs --user for the private database).")
    var zone: String?

    @Option(name: .long, help: "A new folder to write records.jsonl and assets/ into, instead of standard output.")
    var output: String?

    @Option(name: .long, help: "Records per page read from the store.")
    var pageSize = 400

    func run() async throws {
        if let database, Database.Scope(exportName: database) == nil {
            throw ValidationError("--database must be private or public")
        }
        let scope = database.flatMap(Database.Scope.init(exportName:)) ?? (user != nil ? .private : nil)
        let admin = try store.openAdministrator(configuration: environment.applied(to: .init(changeFeeds: .everyZone)))
        defer { admin.close() }
        let info = try admin.storeInfo()
        // User record names to identities, to name the creator of a public record.
        var identities: [String: String] = [:]
        for z in info.zones where z.scope == .private { identities[z.ownerRecordName] = z.ownerIdentity }
        let zones = info.zones.filter { z in
            guard z.scope != .shared, scope == nil || z.scope == scope else { return false }
            if z.scope == .private, let user, z.ownerIdentity != user { return false }
            if let zone, z.zoneName != zone { return false }
            return true
        }.sorted { ($0.scope.rawValue, $0.ownerIdentity ?? "", $0.zoneName) < ($1.scope.rawValue, $1.ownerIdentity ?? "", $1.zoneName) }
        if let zone, zones.isEmpty { throw ValidationError("no zone \(zone) in the selected database") }

        let sink = try Sink(output: output.map { URL(fileURLWithPath: $0, isDirectory: true) })
        // The user directory first, with every user's private database (not with one user's
        // or one zone's): each user with an email address or a name, as a line of its own.
        let users = try admin.users()
        var userNames: [String: String] = [:]
        for (identity, user) in users { if let id = user.userRecordID { userNames[id.recordName] = identity } }
        if scope != .public, self.user == nil, zone == nil {
            for (identity, user) in users.sorted(by: { $0.key < $1.key })
            where user.lookupInfo?.emailAddress != nil || user.nameComponents != nil {
                try sink.write(DirectoryLine(user: identity, identity: user))
            }
        }
        var containers: [String: Container] = [:]
        defer { for c in containers.values { c.close() } }
        var progress = Progress()
        var count = 0
        for z in zones {
            let identity = z.scope == .public ? nil : z.ownerIdentity
            let key = identity ?? ""
            let container: Container
            if let existing = containers[key] {
                container = existing
            } else {
                container = try admin.container(user: identity, configuration: admin.configuration)
                containers[key] = container
            }
            let db = container.database(with: z.scope)
            let zoneID = WebServices.ZoneID(
                zoneName: z.zoneName, ownerRecordName: z.ownerRecordName.isEmpty ? nil : z.ownerRecordName,
                zoneType: z.zoneName == RecordZone.ID.defaultZoneName ? .defaultZone : .regularCustomZone)
            var token: ServerChangeToken?
            while true {
                let page = try await db.recordZoneChanges(
                    inZoneWith: RecordZone.ID(zoneName: z.zoneName), since: token, resultsLimit: pageSize)
                // In name order, records without a parent first, so that within a page a
                // parent comes before its children (import needs it earlier or in the same batch).
                let records = try page.modificationResultsByID.values.map { try $0.get().record }.sorted {
                    ($0.parent == nil ? 0 : 1, $0.recordID.recordName) < ($1.parent == nil ? 0 : 1, $1.recordID.recordName)
                }
                for record in records {
                    if record.recordType == Record.SystemType.userRecord { continue }
                    let dictionary = try WebServices.RecordDictionary(record, zoneID: zoneID, locate: sink.locate)
                    let owner = z.scope == .public ? record.creatorUserRecordID.flatMap { identities[$0.recordName] } : identity
                    var line = ExportLine(record: dictionary, database: "\(z.scope)", user: owner)
                    if let share = record as? Share, let url = share.url {
                        // The owner reads the root from the share's metadata.
                        let root = try await container.shareMetadata(for: url).hierarchicalRootRecordID?.recordName
                        line.share = try ShareLine(share, root: root) { userNames[$0] }
                    }
                    try sink.write(line)
                    count += 1
                }
                progress.show(count, fraction: nil)
                token = page.changeToken
                if !page.moreComing { break }
            }
        }
        try sink.finish()
        progress.show(count, fraction: nil, force: true)
        progress.finish()
        if let output { FileHandle.standardError.write(Data("exported \(count) records to \(output)\n".utf8)) }
    }
}

/// Where export lines go: standard output, or DIR/records.jsonl with the assets in DIR/assets/.
final class Sink {
    private let handle: FileHandle
    private let directory: URL?
    private var buffer = Data()
    private var copied: Set<String> = []
    private var writer = WebServices.JSONWriter()
    private let encoder = WebServices.makeEncoder()

    init(output: URL?) throws {
        directory = output
        guard let output else {
            handle = FileHandle.standardOutput
            return
        }
        let files = FileManager.default
        if files.fileExists(atPath: output.path), !(try files.contentsOfDirectory(atPath: output.path)).isEmpty {
            throw ValidationError("\(output.path) exists and is not empty")
        }
        try files.createDirectory(at: output.appendingPathComponent("assets"), withIntermediateDirectories: true)
        let file = output.appendingPathComponent("records.jsonl")
        _ = files.createFile(atPath: file.path, contents: nil)
        handle = try FileHandle(forWritingTo: file)
    }

    /// The asset's downloadURL: its file URL, or (with an output folder) `assets/NAME` after
    /// copying the file there once.
    func locate(_ asset: Asset) throws -> String? {
        guard let url = asset.fileURL else { return nil }
        guard let directory else { return url.absoluteString }
        let name = url.lastPathComponent
        if copied.insert(name).inserted {
            try FileManager.default.copyItem(at: url, to: directory.appendingPathComponent("assets").appendingPathComponent(name))
        }
        return "assets/" + name
    }

    func write(_ line: ExportLine) throws {
        if line.share != nil {
            // Rare: the general encoder, which writes the same bytes for the rest of the line.
            buffer.append(try encoder.encode(line))
        } else {
            writer.removeAll()
            try writer.write(line.record, extra: [("database", line.database), ("user", line.user)])
            buffer.append(contentsOf: writer.bytes)
        }
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { try flush() }
    }

    /// Writes a user's line.
    func write(_ line: DirectoryLine) throws {
        buffer.append(try encoder.encode(line))
        buffer.append(0x0A)
    }

    private func flush() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    func finish() throws {
        try flush()
        if directory != nil {
            try handle.synchronize()
            try handle.close()
        }
    }
}
