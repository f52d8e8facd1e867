import FogKit
import FogStoragePostgres
import Foundation

/// The backend a ``TestStore`` keeps its store in: an embedded store in a temporary folder
/// (the default), or with `FOG_TEST_STORE=postgres` a fresh schema on the PostgreSQL server
/// that `FOG_TEST_POSTGRES_URL` names (`scripts/test` starts one), so that FogKit's own
/// suites run against both backends.
public enum TestBackend: String, Sendable {
    case lmdb
    case postgres

    /// The backend `FOG_TEST_STORE` asks for.
    public static let current: TestBackend = {
        let environment = ProcessInfo.processInfo.environment
        return environment["FOG_TEST_STORE"] == "postgres" ? .postgres : .lmdb
    }()

    /// The PostgreSQL server of the tests (`FOG_TEST_POSTGRES_URL`), if any.
    public static let postgresServer: URL? = ProcessInfo.processInfo.environment["FOG_TEST_POSTGRES_URL"].flatMap {
        $0.isEmpty ? nil : URL(string: $0)
    }

    /// A place for a new store of this backend, with nothing there yet.
    public func freshLocation() throws -> StoreLocation {
        switch self {
        case .lmdb:
            return .directory(FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-test-\(UUID().uuidString)"))
        case .postgres:
            return try Self.freshPostgresLocation()
        }
    }

    /// A fresh schema on the tests' PostgreSQL server.
    public static func freshPostgresLocation() throws -> StoreLocation {
        guard let server = postgresServer else {
            throw TestBackendError("FOG_TEST_STORE=postgres needs FOG_TEST_POSTGRES_URL (scripts/test starts a server)")
        }
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false)!
        let schema = "fk_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        var items = (components.queryItems ?? []).filter { $0.name != "schema" } + [URLQueryItem(name: "schema", value: schema)]
        // Hundreds of tests run at once in one process, sharing its pool: a larger one than
        // the default 4 keeps them from queueing (the throwaway server allows 100).
        if !items.contains(where: { $0.name == "pool" }) { items.append(URLQueryItem(name: "pool", value: "8")) }
        components.queryItems = items
        return .postgres(components.url!)
    }

    /// Removes what a store (and its production environment) left at `location`.
    public static func remove(_ location: StoreLocation) {
        if location.isDirectory {
            try? FileManager.default.removeItem(at: location.url)
        } else {
            try? PostgresStore.removeStore(at: location.url)
            try? PostgresStore.removeStore(at: location.appending("production").url)
            try? FileManager.default.removeItem(at: location.localFolder)
        }
    }
}

/// A test store that cannot be made.
public struct TestBackendError: Error, CustomStringConvertible {
    /// What is missing.
    public let description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
