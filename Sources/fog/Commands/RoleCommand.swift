import ArgumentParser
import FogKit
import Foundation

/// `fog role`: the members of a custom security role, as CloudKit's console manages them.
struct RoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "role",
        abstract: "Add users to, remove them from, or list the members of a custom security role.",
        discussion: """
            Roles are created by the schema (CREATE ROLE Admin;) and given permissions on record \
            types by its grants (GRANT READ, CREATE, WRITE TO Admin); they apply to the public \
            database. USER is the user identity a container is opened with (--user). Each \
            environment has its own members. Examples:
              fog role add Admin alice
              fog role remove Admin alice
              fog role list Admin          # one user record name per line
            """)

    /// What the command does with the role.
    enum Action: String, ExpressibleByArgument, CaseIterable {
        case add, remove, list
    }

    @OptionGroup var store: StoreOptions

    @OptionGroup var environment: EnvironmentOptions

    @Argument(help: "add, remove or list.")
    var action: Action

    @Argument(help: "The custom role (a CREATE ROLE of the schema).")
    var role: String

    @Argument(help: "The user identity (add and remove).")
    var user: String?

    func validate() throws {
        switch action {
        case .add, .remove:
            if user == nil { throw ValidationError("give the user: fog role \(action.rawValue) \(role) USER") }
        case .list:
            if user != nil { throw ValidationError("fog role list takes no user") }
        }
    }

    func run() async throws {
        let admin = try store.openAdministrator(configuration: environment.applied())
        defer { admin.close() }
        let role = Schema.Role(role)
        switch action {
        case .add:
            try await admin.addUser(try admin.userRecordID(forUser: user!), toRole: role)
        case .remove:
            try await admin.removeUser(try admin.userRecordID(forUser: user!), fromRole: role)
        case .list:
            for member in try admin.users(inRole: role) { print(member.recordName) }
        }
    }
}
