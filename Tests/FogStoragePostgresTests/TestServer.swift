import FogStorage
import FogStoragePostgres
import Foundation
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL server the tests use (`FOG_TEST_POSTGRES_URL`, as `scripts/postgres start`
/// prints it), fresh stores on it, and SQL run beside the store under test.
enum TestServer {
    /// The server's URL, or `nil` when the tests of this target are to be skipped.
    static let url: URL? = ProcessInfo.processInfo.environment["FOG_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : URL(string: $0) }

    /// Whether the tests run in CI, where PostgreSQL is required.
    static let inCI = ProcessInfo.processInfo.environment["CI"] != nil

    /// Whether the tests that need a server run: there is one, or this is CI (where they fail
    /// without one).
    static let enabled = url != nil || inCI

    /// The server's URL; records an issue (and throws) when there is none.
    static func server() throws -> URL {
        guard let url else {
            Issue.record("PostgreSQL is required: set FOG_TEST_POSTGRES_URL (scripts/test starts a throwaway server)")
            throw StorageError.notFound
        }
        return url
    }

    /// `url` with the schema `schema`.
    static func url(_ url: URL, schema: String) -> URL {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.queryItems = (components.queryItems ?? []).filter { $0.name != "schema" } + [URLQueryItem(name: "schema", value: schema)]
        return components.url!
    }

    /// A location in a fresh schema of `server`.
    static func freshLocation(on server: URL? = nil) throws -> URL {
        url(try server ?? self.server(), schema: "pgt_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())
    }

    /// Runs `body` with a fresh location, removing the store afterwards.
    static func withLocation<R>(on server: URL? = nil, _ body: (URL) throws -> R) throws -> R {
        let location = try freshLocation(on: server)
        defer { try? PostgresStore.removeStore(at: location) }
        return try body(location)
    }

    /// The async form of ``withLocation(on:_:)``.
    static func withLocation<R>(on server: URL? = nil, _ body: (URL) async throws -> R) async throws -> R {
        let location = try freshLocation(on: server)
        defer { try? PostgresStore.removeStore(at: location) }
        return try await body(location)
    }

    /// Opens a connection of its own to the server at `location` (not through a store).
    static func connect(_ location: URL) throws -> PostgresConnection {
        let address = try PostgresAddress(location)
        let configuration =
            if let socket = address.socketPath {
                PostgresConnection.Configuration(
                    unixSocketPath: socket, username: address.user, password: address.password, database: address.database)
            } else {
                PostgresConnection.Configuration(
                    host: address.host!, port: address.port, username: address.user, password: address.password,
                    database: address.database, tls: .disable)
            }
        return try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 0,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        ).wait()
    }

    /// Runs `sql` on a connection of its own and returns the first column of each row as text.
    @discardableResult
    static func execute(_ sql: String, at location: URL) throws -> [String] {
        let connection = try connect(location)
        defer { try? connection.close().wait() }
        let result = try connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "test")).wait()
        return result.rows.map { row in (try? row.decode(String.self)) ?? "" }
    }
}
