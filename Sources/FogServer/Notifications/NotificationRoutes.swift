import Foundation
import Hummingbird

/// The long-poll URL (`webcourierURL`) web clients wait for notifications on.
enum NotificationRoutes {
    static func respond(to request: inout Request, path: String, state: ServerState) async throws -> Response? { nil }
}
