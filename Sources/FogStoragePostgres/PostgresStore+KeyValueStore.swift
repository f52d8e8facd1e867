import FogStorage
import Foundation
import PostgresNIO

extension PostgresStore: KeyValueStore {
    /// 511 bytes, as LMDB's (also the largest value of a multi-value table), so that FogKit's
    /// key checks hold for both backends.
    public static var maximumKeySize: Int { 511 }

    /// `false`: an empty key throws ``StorageError/emptyKey``, as in LMDB.
    public static var allowsEmptyKeys: Bool { false }

    /// Whether the server at `location` answers and its schema holds the store's metadata
    /// table (`false` when the server cannot be reached or the URL is not a store's).
    public static func storeExists(at location: URL) -> Bool {
        guard let address = try? PostgresAddress(location) else { return false }
        let pool = ConnectionPool(address: address, server: displayName(of: location), synchronousCommit: true)
        defer { pool.close() }
        guard let connection = try? pool.acquire(nested: false) else { return false }
        defer { pool.release(connection, nested: false, healthy: false) }
        var statement = SQLStatement()
        statement.append(
            "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = \(statement.bind(text: address.schema)) AND tablename = 'fog_tables')"
        )
        let result = try? Session.wait(for: statement.query, on: connection)
        return (try? result?.rows.first?.decode(Bool.self)) == true
    }

    /// The same server and database with the schema `<schema>_<name>` (`public_production` for
    /// the production store beside a store in `public`).
    public static func location(_ location: URL, appending name: String) -> URL {
        guard var components = URLComponents(url: location, resolvingAgainstBaseURL: false) else { return location }
        var items = components.queryItems ?? []
        let schema = items.last(where: { $0.name == "schema" })?.value ?? PostgresAddress.defaultSchema
        items.removeAll { $0.name == "schema" }
        items.append(URLQueryItem(name: "schema", value: "\(schema)_\(name)"))
        components.queryItems = items
        return components.url ?? location
    }

    /// The total size of the schema's tables and indexes (`pg_total_relation_size`) as bytes
    /// used and reserved, and the commits of this object.
    public func storeStatistics() throws -> StoreStatistics {
        let bytes = try read { txn in
            var statement = SQLStatement()
            statement.append(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::int8 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = \(statement.bind(text: address.schema)) AND c.relkind = 'r'"
            )
            return try txn.session.run(statement.query, "measure the store").rows.first?.decode(Int.self) ?? 0
        }
        return StoreStatistics(bytesUsed: bytes, bytesReserved: bytes, commits: commits, writeRequests: writeRequests)
    }

    /// Nothing to do: each commit is as durable as ``durability`` asks when it returns, and the
    /// server writes the rest out by itself (a store cannot ask it for more without superuser
    /// rights).
    public func sync() throws {
        if isClosed { throw StorageError.closed }
    }

    /// Not available: a PostgreSQL store is backed up with the server's tools (`pg_dump
    /// --schema=NAME`), or copied into another store with `fog store copy`. Throws
    /// ``StorageError/other(_:)`` saying so.
    public func backup(to directory: URL) throws {
        if isClosed { throw StorageError.closed }
        throw StorageError.other(
            "a PostgreSQL store (\(server)) cannot be backed up into a directory: use pg_dump --schema=\(address.schema), or `fog store copy` into another store"
        )
    }
}
