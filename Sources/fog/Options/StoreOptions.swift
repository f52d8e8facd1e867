import ArgumentParser
import FogKit
import Foundation

/// Options shared by the commands that open a store.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The folder that holds the store.")
    var store: String = "fog-demo-store"

    var directory: URL { URL(fileURLWithPath: store, isDirectory: true) }

    /// Opens the store in the folder, whatever its container identifier, as its
    /// administrator (the CLI is the embedding program), so that looking at a store
    /// never registers a user.
    func openAdministrator(configuration: Container.Configuration = .init()) throws -> Container.Administrator {
        guard let identifier = try Container.storedIdentifier(at: directory) else {
            throw ValidationError("\(store) holds no FogKit store; create one with `fog demo --store \(store)`")
        }
        return try Container.Administrator(identifier: identifier, directory: directory, configuration: configuration)
    }

    /// Throws when the folder holds no store, saying how to make one.
    func requireStore() throws {
        guard try Container.storedIdentifier(at: directory) != nil else {
            throw ValidationError("\(store) holds no FogKit store; create one with `fog init --store \(store) --container ID`")
        }
    }
}
