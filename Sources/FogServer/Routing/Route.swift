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
}

extension Route {
    /// The route of `path` (without its query), or `nil` when the path is not a Web Services
    /// path.
    init?(path: String) {
        // One pass over the bytes: the segments' places, and strings made only for the ones
        // kept (this runs on every request).
        let utf8 = path.utf8
        var segments: [Range<String.Index>] = []
        segments.reserveCapacity(8)
        var start = utf8.startIndex
        var i = utf8.startIndex
        while i != utf8.endIndex {
            if utf8[i] == UInt8(ascii: "/") {
                if start != i { segments.append(start..<i) }
                start = utf8.index(after: i)
            }
            i = utf8.index(after: i)
        }
        if start != utf8.endIndex { segments.append(start..<utf8.endIndex) }
        func segment(_ n: Int) -> Substring { path[segments[n]] }
        /// The segments from `n` on, joined by `/` (a doubled slash counts as one).
        func rest(from n: Int) -> String {
            let tail = path[segments[n].lowerBound..<segments[segments.count - 1].upperBound]
            let separators = segments.count - n - 1
            let lengths = segments[n...].reduce(0) { $0 + path.utf8.distance(from: $1.lowerBound, to: $1.upperBound) }
            if tail.utf8.count == lengths + separators { return String(tail) }
            return segments[n...].map { String(path[$0]) }.joined(separator: "/")
        }
        guard segments.count >= 5, segment(1) == "1" else { return nil }
        container = ServerResponder.decoded(String(segment(2)))
        guard let environment = Container.Environment(rawValue: String(segment(3))) else { return nil }
        self.environment = environment
        switch segment(0) {
        case "database":
            // The token calls also come with a database segment, or with none.
            if segment(4) == "tokens" {
                scope = nil
                endpoint = rest(from: 4)
            } else {
                guard segments.count >= 7, let scope = Self.scope(segment(4)) else { return nil }
                self.scope = scope
                endpoint = rest(from: 5)
                if segment(5) == "tokens" { self.scope = nil }
            }
        case "device":
            scope = nil
            endpoint = rest(from: 4)
        default: return nil
        }
    }

    static func scope(_ name: some StringProtocol) -> Database.Scope? {
        switch name {
        case "public": .public
        case "private": .private
        case "shared": .shared
        default: nil
        }
    }
}
