import ArgumentParser
import FogKit
import FogStoragePostgres
import Foundation

extension StoreLocation {
    /// The store a `--store` value names: a `postgres://` URL for a store on a PostgreSQL
    /// server, anything else a local folder.
    static func parse(_ argument: String) throws -> StoreLocation {
        let lowered = argument.lowercased()
        if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") {
            do { return try .postgres(argument) } catch { throw ValidationError(error.description) }
        }
        if argument.contains("://") {
            throw ValidationError("\(argument): a store is a folder or a postgres:// URL")
        }
        return .directory(URL(fileURLWithPath: argument, isDirectory: true))
    }
}

/// `url` for messages, its password replaced by `…`.
func redactedPassword(_ url: URL) -> String {
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
    if components.password != nil { components.password = "…" }
    return components.string ?? url.absoluteString
}
