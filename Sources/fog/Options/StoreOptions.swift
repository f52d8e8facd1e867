import ArgumentParser
import FogKit
import Foundation

/// Options shared by the commands that open a store.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The store: a folder, or a postgres:// URL for a store on PostgreSQL.")
    var store: String = "fog-demo-store"

    /// The folder `--store` names (commands that work on a folder only).
    var directory: URL { URL(fileURLWithPath: store, isDirectory: true) }

    /// The store `--store` names: a folder or a PostgreSQL database.
    var location: StoreLocation {
        get throws { try StoreLocation.parse(store) }
    }

    /// Creates the folder of a local store (a server's database must exist already).
    func prepare() throws -> StoreLocation {
        let location = try location
        if location.isDirectory { try FileManager.default.createDirectory(at: location.url, withIntermediateDirectories: true) }
        return location
    }

    /// Opens the store in the folder, whatever its container identifier, as its
    /// administrator (the CLI is the embedding program), so that looking at a store
    /// never registers a user.
    func openAdministrator(configuration: Container.Configuration = .init()) throws -> Container.Administrator {
        let location = try location
        guard let identifier = try Container.storedIdentifier(in: location) else {
            throw ValidationError("\(location) holds no FogKit store; create one with `fog demo --store \(store)`")
        }
        return try Container.Administrator(identifier: identifier, store: location, configuration: configuration)
    }

    /// Throws when the folder holds no store, saying how to make one.
    func requireStore() throws {
        guard try Container.storedIdentifier(in: location) != nil else {
            throw ValidationError("\(store) holds no FogKit store; create one with `fog init --store \(store) --container ID`")
        }
    }
}
