import FogStorage
import Foundation
import PostgresNIO

extension PostgresStore {
    /// Removes the store at `location` with everything in it: drops its schema (`CASCADE`), or,
    /// for a store in the `public` schema, its tables and its metadata table. Nothing happens
    /// when there is no store there. Do not call it while the store is open.
    ///
    /// - Throws: ``StorageError/temporarilyUnavailable(_:)`` when the server cannot be reached;
    ///   ``StorageError/other(_:)`` for a URL ``PostgresAddress`` does not read, or what the
    ///   server refused.
    public static func removeStore(at location: URL) throws {
        let address: PostgresAddress
        do { address = try PostgresAddress(location) } catch { throw StorageError.other(error.description) }
        var options = StoreConfiguration(tables: [], createsMissingTables: false)
        options.durability = .none
        let store = PostgresStore(address: address, url: location, configuration: options)
        defer { store.close() }
        let schema = SQLNames.quote(address.schema)
        try store.transaction(.setup) { session in
            try session.run(
                PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(\(creationLock))"), "take the table creation lock")
            if address.schema != PostgresAddress.defaultSchema {
                try session.run(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \(schema) CASCADE"), "drop the schema")
                return
            }
            var statement = SQLStatement()
            statement.append(
                "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = \(statement.bind(text: address.schema)) AND tablename = 'fog_tables')"
            )
            guard try session.run(statement.query, "look for the store").rows.first?.decode(Bool.self) == true else { return }
            for row in try session.run(PostgresQuery(unsafeSQL: "SELECT name FROM \(store.sqlMetadata)"), "read the tables").rows {
                let name = try row.decode(String.self)
                try session.run(
                    PostgresQuery(unsafeSQL: "DROP TABLE IF EXISTS \(schema).\(SQLNames.quote(SQLNames.table(name)))"), "drop \(name)")
            }
            try session.run(PostgresQuery(unsafeSQL: "DROP TABLE \(store.sqlMetadata)"), "drop the metadata table")
        }
    }
}
