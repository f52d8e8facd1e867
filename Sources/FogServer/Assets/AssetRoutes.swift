import Foundation
import Hummingbird

/// The upload and download URLs the asset endpoints hand out.
enum AssetRoutes {
    static func respond(to request: inout Request, path: String, state: ServerState) async throws -> Response? { nil }
}
