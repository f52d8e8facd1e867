import FogStorage
import Foundation

extension StoreLocation {
    /// A PostgreSQL store at `url` (`postgres://user@host/database?schema=NAME`; see
    /// ``PostgresAddress``). The URL is checked when the store is opened.
    public static func postgres(_ url: URL) -> StoreLocation {
        StoreLocation(PostgresStore.self, url: url)
    }

    /// A PostgreSQL store at the URL `string`, checked now.
    ///
    /// - Throws: ``PostgresURLError`` when `string` is not a `postgres://` or `postgresql://`
    ///   URL of a form ``PostgresAddress`` reads.
    public static func postgres(_ string: String) throws(PostgresURLError) -> StoreLocation {
        guard let url = URL(string: string) else { throw .malformed(string.contains("@") ? "a URL" : string, "not a URL") }
        _ = try PostgresAddress(url)
        return .postgres(url)
    }
}
