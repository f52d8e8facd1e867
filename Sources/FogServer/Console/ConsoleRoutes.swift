import Foundation
import Hummingbird

/// The web console (`/console`), its administration API, and the sign-in page (`/signin`).
enum ConsoleRoutes {
    static func respond(to request: inout Request, path: String, state: ServerState) async throws -> Response? { nil }
}
