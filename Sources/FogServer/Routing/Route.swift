import FogKit
import Foundation

/// Where a Web Services request goes, read from its path:
/// `/database/1/{container}/{environment}/{database}/{entity}/{action}`, or
/// `/device/1/{container}/{environment}/tokens/{action}` for web push tokens.
struct Route: Sendable, Equatable {
    var container: String
    var environment: Container.Environment
    /// The database, `nil` for the device paths (`tokens/…`).
    var scope: Database.Scope?
    /// The endpoint: `records/query`, `users/lookup/email`, `tokens/create`, …
    var endpoint: String

    /// The route of `path` (without its query), or `nil` when the path is not a Web Services
    /// path.
    init?(path: String) {
        // Split as bytes: splitting a `String` by `Character` walks grapheme clusters, and this
        // runs on every request.
        let parts = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map { String(Substring($0)) }
        guard parts.count >= 5, parts[1] == "1" else { return nil }
        container = ServerResponder.decoded(parts[2])
        guard let environment = Container.Environment(rawValue: parts[3]) else { return nil }
        self.environment = environment
        switch parts[0] {
        case "database":
            // The token calls also come with a database segment, or with none.
            if parts[4] == "tokens" {
                scope = nil
                endpoint = parts[4...].joined(separator: "/")
            } else {
                guard parts.count >= 7, let scope = Self.scope(parts[4]) else { return nil }
                self.scope = scope
                endpoint = parts[5...].joined(separator: "/")
                if parts[5] == "tokens" { self.scope = nil }
            }
        case "device":
            scope = nil
            endpoint = parts[4...].joined(separator: "/")
        default: return nil
        }
    }

    static func scope(_ name: String) -> Database.Scope? {
        switch name {
        case "public": .public
        case "private": .private
        case "shared": .shared
        default: nil
        }
    }
}
