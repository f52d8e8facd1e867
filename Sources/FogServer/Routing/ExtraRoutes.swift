import Foundation
import Hummingbird

/// Routes outside the Web Services paths: the console and sign-in page, asset uploads and
/// downloads, and the notification long poll. Each answers `nil` for a path not its own.
enum ExtraRoutes {
    /// `client` is the client's address, when the connection has one.
    static func respond(to request: inout Request, path: String, client: String?, state: ServerState) async throws -> Response? {
        if let response = try await ConsoleRoutes.respond(to: &request, path: path, client: client, state: state) { return response }
        if let response = try await AssetRoutes.respond(to: &request, path: path, state: state) { return response }
        if let response = try await NotificationRoutes.respond(to: &request, path: path, state: state) { return response }
        return nil
    }
}

extension Endpoints {
    /// The endpoints of the other folders: subscriptions, assets, tokens.
    static var moreEndpoints: [String: Endpoint] {
        SubscriptionEndpoints.table.merging(AssetEndpoints.table) { $1 }.merging(TokenEndpoints.table) { $1 }
    }
}
