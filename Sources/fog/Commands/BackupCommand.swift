import ArgumentParser
import FogKit
import Foundation

/// `fog backup`: a consistent copy of a store, taken while it stays in use.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a store (records, indexes, change logs, assets) into a new folder.",
        discussion: """
            The copy is a new incarnation of the store: change tokens taken from the original \
            fail with changeTokenExpired against it (and against stores restored from it), so \
            clients fetch their changes again instead of missing those the backup lacks. \
            Restore it with `fog restore DIR --store NEW`.
            """)

    @Argument(help: "The folder to write the copy into (missing or empty).")
    var destination: String

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let admin = try store.openAdministrator()
        defer { admin.close() }
        try admin.backup(to: URL(fileURLWithPath: destination, isDirectory: true))
        let info = try admin.storeInfo()
        FileHandle.standardError.write(
            Data("backed up \(info.recordCount) records of \(info.containerIdentifier) to \(destination)\n".utf8))
    }
}

/// `fog restore`: makes a new store from a backup.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Make a new store from a folder `fog backup` wrote.",
        discussion: """
            --store names the new store's folder; it must not exist or be empty (restore never \
            overwrites a store). The backup folder is not changed. The restored store is a new \
            incarnation of its own: change tokens from the original store, from the backup or \
            from another restore of it fail with changeTokenExpired, so clients fetch their \
            changes again.
            """)

    @Argument(help: "The folder fog backup wrote.")
    var backup: String

    @Option(name: .long, help: "The new store's folder (missing or empty).")
    var store: String

    func run() async throws {
        let files = FileManager.default
        let source = URL(fileURLWithPath: backup, isDirectory: true)
        let target = URL(fileURLWithPath: store, isDirectory: true)
        guard let identifier = try Container.storedIdentifier(at: source) else {
            throw ValidationError("\(backup) holds no FogKit store")
        }
        if files.fileExists(atPath: target.path), !(try files.contentsOfDirectory(atPath: target.path)).isEmpty {
            throw ValidationError("\(store) exists and is not empty; restore makes a new store only")
        }
        // Open a scratch copy (opening writes the lock file, and may migrate) and back that
        // up into the target: the target gets an incarnation of its own, the backup stays as it was.
        let scratch = target.deletingLastPathComponent().appendingPathComponent(
            ".\(target.lastPathComponent).restoring-\(UUID().uuidString)")
        try files.copyItem(at: source, to: scratch)
        defer { try? files.removeItem(at: scratch) }
        let admin = try Container.Administrator(identifier: identifier, directory: scratch)
        defer { admin.close() }
        let info = try admin.storeInfo()
        try admin.backup(to: target)
        FileHandle.standardError.write(Data("restored \(info.recordCount) records of \(identifier) into \(store)\n".utf8))
    }
}
