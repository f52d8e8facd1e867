import FogStorage
import Foundation

/// Where a ``PostgresStore`` lives, read from its URL: the server, the database, the schema that
/// holds the store's tables, and the size of the store's connection pool.
///
/// The forms:
///
/// - `postgres://user[:password]@host[:port]/database` — over TCP (port 5432 by default);
/// - `postgres://user@/database?host=/path/to/socket-dir` — over the Unix socket
///   `/path/to/socket-dir/.s.PGSQL.<port>`;
///
/// with the query parameters `schema=NAME` (the PostgreSQL schema of the store's tables,
/// `public` by default, created when missing) and `pool=N` (at most N connections, 4 by
/// default). The scheme may also be `postgresql`.
public struct PostgresAddress: Sendable, Hashable {
    /// The server's host name for TCP, or `nil` for a Unix socket.
    public var host: String?
    /// The server's port (also the number in the Unix socket's name).
    public var port: Int
    /// The directory holding the server's Unix socket, or `nil` for TCP.
    public var socketDirectory: String?
    /// The user to connect as.
    public var user: String
    /// The user's password, if the URL has one.
    public var password: String?
    /// The database to connect to.
    public var database: String
    /// The PostgreSQL schema that holds the store's tables.
    public var schema: String
    /// The most connections the store opens at once.
    public var poolSize: Int

    /// The default schema: `public`.
    public static let defaultSchema = "public"
    /// The default pool size: 4 connections.
    public static let defaultPoolSize = 4

    /// Reads the address of `url`.
    ///
    /// - Throws: ``PostgresURLError`` when the URL is not a `postgres://` URL of one of the forms
    ///   above.
    public init(_ url: URL) throws(PostgresURLError) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw .malformed(url.absoluteString, "not a URL")
        }
        let shown = PostgresStore.displayName(of: url)
        guard let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw .unsupportedScheme(components.scheme ?? "")
        }
        var socketDirectory: String?
        var schema = Self.defaultSchema
        var poolSize = Self.defaultPoolSize
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "host":
                guard value.hasPrefix("/") else { throw .malformed(shown, "host= must be the path of a socket directory") }
                socketDirectory = value
            case "schema":
                guard !value.isEmpty, value.utf8.count <= 63 else { throw .malformed(shown, "schema= must have 1 to 63 bytes") }
                schema = value
            case "pool":
                guard let n = Int(value), n >= 1, n <= 1000 else { throw .malformed(shown, "pool= must be a number from 1 to 1000") }
                poolSize = n
            default:
                throw .malformed(shown, "unknown parameter \(item.name)")
            }
        }
        let host = components.host.flatMap { $0.isEmpty ? nil : $0 }
        if host == nil && socketDirectory == nil { throw .malformed(shown, "no host and no ?host=/socket/directory") }
        guard let user = components.user, !user.isEmpty else { throw .malformed(shown, "no user") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else { throw .malformed(shown, "no database (postgres://user@host/database)") }
        self.host = socketDirectory == nil ? host : nil
        self.port = components.port ?? 5432
        self.socketDirectory = socketDirectory
        self.user = user
        self.password = components.password
        self.database = database
        self.schema = schema
        self.poolSize = poolSize
    }

    /// The path of the server's Unix socket, or `nil` for TCP.
    public var socketPath: String? { socketDirectory.map { "\($0)/.s.PGSQL.\(port)" } }
}

/// Why a URL is not the address of a PostgreSQL store.
public enum PostgresURLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The scheme is not `postgres` or `postgresql`.
    case unsupportedScheme(String)
    /// The URL (shown without its password) is not of a supported form; the reason says why.
    case malformed(String, String)

    /// A description of the error.
    public var description: String {
        switch self {
        case .unsupportedScheme(let scheme): "“\(scheme)” is not a PostgreSQL URL scheme (postgres:// or postgresql://)"
        case .malformed(let url, let reason): "\(url) is not a PostgreSQL store address: \(reason)"
        }
    }
}
