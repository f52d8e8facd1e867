import Crypto
import FogKit
import Foundation

/// Mints the credentials a FogServer on the store in `directory` accepts: API tokens,
/// server-to-server keys, web auth tokens for users and administrator tokens for the web
/// console. They are kept in `credentials.json` beside the store (mode 0600); a running
/// server sees new ones on their first use.
///
/// ```swift
/// let credentials = ServerCredentials(store: URL(fileURLWithPath: "notes-store"))
/// let apiToken = try credentials.createAPIToken()                  // 64 lowercase hex digits
/// let session = try credentials.createWebAuthToken(user: "alice")  // signs in as alice
/// ```
public struct ServerCredentials: Sendable {
    /// The store's directory; for a store on a database server, its URL.
    public let directory: URL
    private let vault: CredentialVault

    /// How long a web auth token lasts unless asked otherwise: 30 minutes, as CloudKit's.
    public static let defaultWebAuthTokenLifetime: TimeInterval = 30 * 60

    /// The credentials of the store in `directory`.
    public init(store directory: URL) {
        self.directory = directory
        vault = .folder(directory)
    }

    /// The credentials of the store at `location`: `credentials.json` beside a store in a
    /// folder; a store document inside a store on a database server, so that every server
    /// process sharing it accepts them.
    /// - Throws: ``CredentialError`` when there is no store at `location`; `FogError` when it
    ///   cannot be opened.
    public init(store location: StoreLocation) throws {
        directory = location.url
        vault = try CredentialVault.of(location)
    }

    /// Makes a new API token, tied to this store's container: 64 lowercase hex characters.
    /// With it alone a caller is anonymous (public reads); with a web auth token, a user.
    public func createAPIToken() throws -> String {
        try vault.update { file in
            let token = SecureBytes.hex(32)
            file.apiTokens.append(token)
            return token
        }
    }

    /// Adds a server-to-server key: `publicKeyPEM` is the PEM public key of an ECDSA P-256 key
    /// pair (`openssl ec -in eckey.pem -pubout`). Requests signed with its private key act as
    /// `user` in the public database. Returns the key ID (64 lowercase hex characters: the
    /// SHA-256 of the key), which requests name in `X-Apple-CloudKit-Request-KeyID`.
    /// - Throws: ``CredentialError`` when the text is not a P-256 public key.
    public func addKey(publicKeyPEM: String, user: String) throws -> String {
        let key: P256.Signing.PublicKey
        do {
            key = try P256.Signing.PublicKey(pemRepresentation: publicKeyPEM)
        } catch {
            throw CredentialError("not an ECDSA P-256 public key in PEM form: \(error)")
        }
        let keyID = SHA256.hash(data: key.derRepresentation).map { String(format: "%02x", $0) }.joined()
        return try vault.update { file in
            file.keys.removeAll { $0.keyID == keyID }
            file.keys.append(.init(keyID: keyID, publicKey: key.pemRepresentation, user: user))
            return keyID
        }
    }

    /// Makes a web auth token that signs `user` in for `lifetime` seconds. The caller checks
    /// that the user exists (`fog user token` does).
    public func createWebAuthToken(user: String, lifetime: TimeInterval = defaultWebAuthTokenLifetime) throws -> String {
        guard !user.isEmpty else { throw CredentialError("the user name is empty") }
        let secret = try vault.update { $0.secret }
        return WebAuthToken(user: user, expires: Date().addingTimeInterval(lifetime), lifetime: lifetime)
            .encoded(secret: SymmetricKey(data: Data(base64Encoded: secret) ?? Data()))
    }

    /// Makes a token for the web console's administrator: 64 lowercase hex characters. It is
    /// not an API token, and an API token does not open the console.
    public func createAdministratorToken() throws -> String {
        try vault.update { file in
            let token = SecureBytes.hex(32)
            file.administratorTokens.append(token)
            return token
        }
    }

    /// Sets the password `user` signs in with on the server's sign-in page (`/signin`),
    /// kept as a salted PBKDF2-SHA256 hash. The caller checks that the user exists
    /// (`fog user password` does).
    /// - Throws: ``CredentialError`` for an empty user name or password.
    public func setPassword(_ password: String, user: String) throws {
        guard !user.isEmpty else { throw CredentialError("the user name is empty") }
        guard !password.isEmpty else { throw CredentialError("the password is empty") }
        let hash = try PasswordHash(password: password)
        try vault.update { file in
            var passwords = file.passwords ?? [:]
            passwords[user] = hash
            file.passwords = passwords
        }
    }
}
