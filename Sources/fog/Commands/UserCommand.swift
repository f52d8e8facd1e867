import ArgumentParser
import FogKit
import Foundation

/// `fog user`: the container's user directory.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Add users and tie an email address and a name to them, or list them.",
        discussion: """
            Examples:
              fog user add bob --email bob@example.com --name "Bob Smith"
              fog user list
            Other users find a user by email address (Container.userIdentity(forEmailAddress:)).
            """,
        subcommands: [AddUserCommand.self, ListUsersCommand.self, UserTokenCommand.self, UserPasswordCommand.self]
    )
}

/// `fog user add`: adds a user or changes its directory entry.
struct AddUserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a user, or change its email address and name.",
        discussion: """
            NAME is the user name containers are opened with (`fog query --user NAME`). The \
            email address and name replace those the user had; leave one out to remove it. \
            --name takes "Given Family": the last word is the family name, the words before \
            it the given name; one word is a given name.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: "The user name containers are opened with.")
    var name: String

    @Option(name: .long, help: "The email address others find the user by.")
    var email: String?

    @Option(name: [.customLong("name")], help: "The user's name, \"Given Family\".")
    var displayName: String?

    func run() async throws {
        let admin = try store.openAdministrator()
        defer { admin.close() }
        let identity = try await admin.addUser(name, emailAddress: email, nameComponents: displayName.map(Self.nameComponents))
        print(ListUsersCommand.render(user: name, identity))
    }

    /// "Given Family" as name components: the last word is the family name, the words
    /// before it the given name; one word is a given name. Blank text gives an empty given
    /// name, which the directory refuses with a message naming it.
    static func nameComponents(_ text: String) -> PersonNameComponents {
        var name = PersonNameComponents()
        let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        switch words.count {
        case 0: name.givenName = ""
        case 1: name.givenName = words[0]
        default:
            name.givenName = words.dropLast().joined(separator: " ")
            name.familyName = words.last
        }
        return name
    }
}

/// `fog user list`: every user of the store.
struct ListUsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the users: name, user record name, email address and name.")

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let admin = try store.openAdministrator()
        defer { admin.close() }
        let users = try admin.users()
        if users.isEmpty { print("no users") }
        for (user, identity) in users.sorted(by: { $0.key < $1.key }) { print(Self.render(user: user, identity)) }
    }

    /// One line: user name, user record name, email address (or `-`) and name (or `-`),
    /// separated by tabs.
    static func render(user: String, _ identity: UserIdentity) -> String {
        let name = identity.nameComponents.map { name in
            [name.namePrefix, name.givenName, name.middleName, name.familyName, name.nameSuffix].compactMap { $0 }.joined(separator: " ")
        }
        return [user, identity.userRecordID?.recordName ?? "-", identity.lookupInfo?.emailAddress ?? "-", name ?? "-"]
            .joined(separator: "\t")
    }
}
