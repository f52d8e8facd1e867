import FogStorage
import FogStoragePostgres
import Foundation
import Testing

/// The URL forms of a PostgreSQL store (no server needed).
@Suite struct PostgresAddressTests {
    @Test func tcp() throws {
        let address = try PostgresAddress(URL(string: "postgres://fog:secret@db.example.com:6543/fogdb")!)
        #expect(address.host == "db.example.com")
        #expect(address.port == 6543)
        #expect(address.socketPath == nil)
        #expect(address.user == "fog")
        #expect(address.password == "secret")
        #expect(address.database == "fogdb")
        #expect(address.schema == "public")
        #expect(address.poolSize == 4)
        let defaults = try PostgresAddress(URL(string: "postgresql://fog@localhost/fogdb")!)
        #expect(defaults.port == 5432)
        #expect(defaults.password == nil)
    }

    @Test func unixSocketSchemaAndPool() throws {
        let address = try PostgresAddress(URL(string: "postgres://fog@/fogdb?host=/tmp/pg&schema=tenant_1&pool=9")!)
        #expect(address.host == nil)
        #expect(address.socketDirectory == "/tmp/pg")
        #expect(address.socketPath == "/tmp/pg/.s.PGSQL.5432")
        #expect(address.schema == "tenant_1")
        #expect(address.poolSize == 9)
        let port = try PostgresAddress(URL(string: "postgres://fog@:5433/fogdb?host=/run/pg")!)
        #expect(port.socketPath == "/run/pg/.s.PGSQL.5433")
    }

    @Test func aDescriptionHidesThePassword() throws {
        let location = try StoreLocation.postgres("postgres://fog:secret@db.example.com/fogdb?schema=s")
        #expect(location.isBackend(PostgresStore.self))
        #expect(!location.description.contains("secret"))
        #expect(location.description.contains("db.example.com"))
        #expect(!PostgresStore.displayName(of: location.url).contains("secret"))
    }

    @Test func appendingANameGivesASchema() throws {
        let location = try StoreLocation.postgres("postgres://fog@db/fogdb")
        let production = location.appending("production")
        #expect(try PostgresAddress(production.url).schema == "public_production")
        #expect(production.isBackend(PostgresStore.self))
        let tenant = try StoreLocation.postgres("postgres://fog@/fogdb?host=/tmp/pg&schema=t1").appending("production")
        let address = try PostgresAddress(tenant.url)
        #expect(address.schema == "t1_production")
        #expect(address.socketDirectory == "/tmp/pg")
    }

    @Test func malformedURLsAreRefused() {
        #expect(throws: PostgresURLError.unsupportedScheme("mysql")) { try StoreLocation.postgres("mysql://fog@db/fogdb") }
        #expect(throws: PostgresURLError.unsupportedScheme("file")) { try StoreLocation.postgres("file:///tmp/store") }
        for bad in [
            "postgres://db/fogdb",  // no user
            "postgres://fog@db",  // no database
            "postgres://fog@db/",  // no database
            "postgres://fog@/fogdb",  // no host, no socket
            "postgres://fog@/fogdb?host=relative/dir",
            "postgres://fog@db/fogdb?pool=0",
            "postgres://fog@db/fogdb?pool=many",
            "postgres://fog@db/fogdb?schema=",
            "postgres://fog@db/fogdb?colour=blue",
            "postgres://fog:secret@db/fogdb?pool=-1",
        ] {
            #expect(throws: PostgresURLError.self, "\(bad)") { try StoreLocation.postgres(bad) }
        }
        do {
            _ = try StoreLocation.postgres("postgres://fog:secret@db/fogdb?pool=-1")
        } catch {
            #expect(!"\(error)".contains("secret"), "\(error)")
        }
    }

    @Test func openingAMalformedURLThrowsAStorageError() {
        #expect(throws: StorageError.self) {
            _ = try PostgresStore.open(at: URL(string: "postgres://fog@db")!, configuration: StoreConfiguration(tables: ["a"]))
        }
        #expect(!PostgresStore.storeExists(at: URL(string: "postgres://fog@db")!))
    }

    @Test func anUnreachableServerIsTemporarilyUnavailable() throws {
        let url = URL(string: "postgres://fog@/fogdb?host=/nonexistent-\(UUID().uuidString)")!
        #expect(!PostgresStore.storeExists(at: url))
        do {
            _ = try PostgresStore.open(at: url, configuration: StoreConfiguration(tables: ["a"]))
            Issue.record("opened a store on no server")
        } catch let error as StorageError {
            guard case .temporarilyUnavailable(let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(reason.contains("PostgreSQL at"), "\(reason)")
        }
    }
}
