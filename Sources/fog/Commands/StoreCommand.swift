import ArgumentParser
import FogKit
import Foundation

/// `fog store`: whole stores, as opposed to what is in them.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Move whole stores between places and backends.",
        subcommands: [StoreCopyCommand.self])
}

/// `fog store copy FROM TO`: a whole container, from an embedded store to a PostgreSQL one
/// or back.
struct StoreCopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy a whole container into a new store: a folder or a postgres:// URL.",
        discussion: """
            Copies both schema environments: every record, index, change log, user, \
            subscription and asset, as of one snapshot, printing progress on standard error. \
            TO must hold no store (a PostgreSQL database must exist; FogKit makes its tables). \
            The copy is a new incarnation: change tokens of FROM fail with changeTokenExpired \
            against it, so clients fetch again. Stop FROM's writers first to move without \
            losing their last commits.

            Examples:
              fog store copy notes-store postgres://fog@db.example.com/notes
              fog store copy 'postgres://fog@/notes?host=/run/postgresql' notes-local
            """)

    @Argument(help: "The store to copy: a folder or a postgres:// URL.")
    var from: String

    @Argument(help: "Where the copy goes: a folder or a postgres:// URL, holding no store.")
    var to: String

    func run() async throws {
        let source = try StoreLocation.parse(from)
        let destination = try StoreLocation.parse(to)
        guard let identifier = try Container.storedIdentifier(in: source) else {
            throw ValidationError("\(source) holds no FogKit store")
        }
        let admin = try Container.Administrator(identifier: identifier, store: source)
        defer { admin.close() }
        var last = Date.distantPast
        try admin.copyStore(to: destination) { progress in
            let now = Date()
            guard progress.copied == progress.total || now.timeIntervalSince(last) > 0.5 else { return }
            last = now
            FileHandle.standardError.write(Data("\(progress)\n".utf8))
        }
        let copy = try Container.Administrator(identifier: identifier, store: destination)
        defer { copy.close() }
        let info = try copy.storeInfo()
        FileHandle.standardError.write(
            Data("copied \(info.recordCount) records of \(identifier) from \(source) to \(destination)\n".utf8))
    }
}
