import ArgumentParser
import FogKit
import Foundation

/// `--database` and `--user`: which database of a store a command works on, and for whom.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: "The database: private, public or shared.")
    var database: String = "private"

    @Option(name: .long, help: "The user to act for (needed for the private and shared databases).")
    var user: String?

    @Option(name: .long, help: "A JSON fault plan (FogKit's FaultPlan) the command's requests are subject to.")
    var faults: String?

    /// Opens the store as its administrator, and a container of it for the user with
    /// `configuration`; returns both with the chosen database. The caller closes both.
    func open(_ store: StoreOptions, configuration: Container.Configuration) throws -> (Container.Administrator, Container, Database) {
        guard let scope = Database.Scope.allCases.first(where: { "\($0)" == database }) else {
            throw ValidationError("--database must be private, public or shared")
        }
        if scope != .public, user == nil { throw ValidationError("the \(database) database needs --user") }
        let admin = try store.openAdministrator(configuration: configuration)
        do {
            let container = try admin.container(user: user)
            if let faults {
                let data = try Data(contentsOf: URL(fileURLWithPath: faults))
                do {
                    container.faultPlan = try JSONDecoder().decode(FaultPlan.self, from: data)
                } catch {
                    throw ValidationError("--faults \(faults) is not a fault plan: \(error)")
                }
            }
            return (admin, container, container.database(with: scope))
        } catch {
            admin.close()
            throw error
        }
    }
}
