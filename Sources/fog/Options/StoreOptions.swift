import ArgumentParser
import FogKit
import Foundation

/// Options shared by the commands that open a store.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The folder that holds the store.")
    var store: String = "fog-demo-store"

    @Option(name: .long, help: "The user to act for (empty for nobody).")
    var user: String = Container.defaultUser

    var directory: URL { URL(fileURLWithPath: store, isDirectory: true) }
    var userIdentity: String? { user.isEmpty ? nil : user }

    /// Opens the container stored in the folder, whatever its identifier.
    func openExisting() throws -> Container {
        guard let identifier = try Container.storedIdentifier(at: directory) else {
            throw ValidationError("\(store) holds no FogKit store; create one with `fog demo --store \(store)`")
        }
        return try Container(identifier: identifier, directory: directory, user: userIdentity)
    }
}
