import ArgumentParser
import FogKit
import Foundation

/// `--database` and `--user`: which database of a store a command works on, and for whom.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: "The database: private, public or shared.")
    var database: String = "private"

    @Option(name: .long, help: "The user to act for (needed for the private and shared databases).")
    var user: String?

    /// Opens the store's container for the user with `configuration` and returns it with the
    /// chosen database; the caller closes the container.
    func open(_ store: StoreOptions, configuration: Container.Configuration) throws -> (Container, Database) {
        guard let scope = Database.Scope.allCases.first(where: { "\($0)" == database }) else {
            throw ValidationError("--database must be private, public or shared")
        }
        if scope != .public, user == nil { throw ValidationError("the \(database) database needs --user") }
        guard let identifier = try Container.storedIdentifier(at: store.directory) else {
            throw ValidationError("\(store.store) holds no FogKit store")
        }
        let container = try Container(identifier: identifier, directory: store.directory, user: user, configuration: configuration)
        return (container, container.database(with: scope))
    }
}
