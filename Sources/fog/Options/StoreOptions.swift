import ArgumentParser
import FogKit
import Foundation

/// Options shared by the commands that open a store.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The folder that holds the store.")
    var store: String = "fog-demo-store"

    var directory: URL { URL(fileURLWithPath: store, isDirectory: true) }

    /// Opens the container stored in the folder, whatever its identifier, on
    /// behalf of nobody, so that looking at a store never registers a user.
    func openExisting() throws -> Container {
        guard let identifier = try Container.storedIdentifier(at: directory) else {
            throw ValidationError("\(store) holds no FogKit store; create one with `fog demo --store \(store)`")
        }
        return try Container(identifier: identifier, directory: directory, user: nil)
    }
}
