import ArgumentParser
import FogKit
import FogServer
import Foundation

/// `fog token`: API tokens for the server.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Mint API tokens for `fog serve`.", subcommands: [CreateTokenCommand.self])
}

/// `fog token create`: prints a new API token, and nothing else.
struct CreateTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Print a new API token (64 hex digits), for ?ckAPIToken=.",
        discussion: "Alone a token reads the public database; with a user's web auth token (fog user token) it acts as the user.")

    @OptionGroup var store: StoreOptions

    func run() async throws {
        try store.requireStore()
        print(try ServerCredentials(store: store.location).createAPIToken())
    }
}

/// `fog user token`: prints a web auth token that signs a user in.
struct UserTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a web auth token that signs NAME in, for ?ckWebAuthToken=.",
        discussion: "The user must be in the directory (fog user add). The token lasts 30 minutes unless --lifetime says otherwise.")

    @OptionGroup var store: StoreOptions

    @Argument(help: "The user name.")
    var name: String

    @Option(name: .long, help: "How long the token lasts, in seconds.")
    var lifetime: Int = Int(ServerCredentials.defaultWebAuthTokenLifetime)

    func run() async throws {
        let admin = try store.openAdministrator()
        let known = try admin.users()[name] != nil
        admin.close()
        guard known else { throw ValidationError("no user \(name) in the directory; add one with `fog user add \(name)`") }
        guard lifetime > 0 else { throw ValidationError("--lifetime must be positive") }
        print(try ServerCredentials(store: store.location).createWebAuthToken(user: name, lifetime: TimeInterval(lifetime)))
    }
}

/// `fog user password`: the password a user signs in with on `fog serve`'s sign-in page.
struct UserPasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "password",
        abstract: "Set the password NAME signs in with on the server's sign-in page (/signin); read from standard input.",
        discussion: """
            The first line of standard input is the password (so it stays out of the shell's \
            history and the process list):
              printf '%s\\n' "$PASSWORD" | fog user password alice
            credentials.json keeps a salted PBKDF2-SHA256 hash of it, never the password. The \
            user must be in the directory (fog user add). Setting it again replaces it.
            """)

    @OptionGroup var store: StoreOptions

    @Argument(help: "The user name.")
    var name: String

    func run() async throws {
        let admin = try store.openAdministrator()
        let known = try admin.users()[name] != nil
        admin.close()
        guard known else { throw ValidationError("no user \(name) in the directory; add one with `fog user add \(name)`") }
        let input = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        let password = String(input.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
        guard !password.isEmpty else { throw ValidationError("give the password on standard input") }
        try ServerCredentials(store: store.location).setPassword(password, user: name)
        FileHandle.standardError.write(Data("password set for \(name)\n".utf8))
    }
}

/// `fog key`: server-to-server keys.
struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key", abstract: "Register server-to-server keys for `fog serve`.", subcommands: [AddKeyCommand.self])
}

/// `fog key add`: registers a P-256 public key and prints its key ID.
struct AddKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Register an ECDSA P-256 public key; print its key ID.",
        discussion: """
            Make a key pair with:
              openssl ecparam -name prime256v1 -genkey -noout -out eckey.pem
              openssl ec -in eckey.pem -pubout -out eckey.pub
              fog key add --store notes-store --public-key eckey.pub
            Requests signed with the private key act as --user (added to the directory when missing) \
            in the public database.
            """)

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "The PEM file of the public key.")
    var publicKey: String

    @Option(name: .long, help: "The developer identity the key acts as.")
    var user: String = "developer"

    func run() async throws {
        let pem: String
        do {
            pem = try String(contentsOfFile: publicKey, encoding: .utf8)
        } catch {
            throw ValidationError("cannot read \(publicKey): \(error.localizedDescription)")
        }
        let admin = try store.openAdministrator()
        defer { admin.close() }
        if try admin.users()[user] == nil { try await admin.addUser(user) }
        do {
            print(try ServerCredentials(store: store.location).addKey(publicKeyPEM: pem, user: user))
        } catch let error as CredentialError {
            throw ValidationError(error.description)
        }
    }
}

/// `fog admin token`: prints the web console's administrator credential.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "Credentials for the web console.", subcommands: [AdminTokenCommand.self])
}

/// `fog admin token`: prints a new administrator token for the console.
struct AdminTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Print a new administrator token for the web console (/console).")

    @OptionGroup var store: StoreOptions

    func run() async throws {
        try store.requireStore()
        print(try ServerCredentials(store: store.location).createAdministratorToken())
    }
}
