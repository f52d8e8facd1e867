import Foundation

/// Who a request comes from, as its credentials say.
enum Caller: Sendable, Equatable {
    /// An API token alone: public reads only.
    case anonymous
    /// A user signed in with a web auth token (API token and `ckWebAuthToken`).
    case user(String, session: WebAuthToken)
    /// A server-to-server key, acting as the developer it belongs to, in the public
    /// database only.
    case key(id: String, user: String)
    /// The web console's administrator (`X-FogKit-Administrator-Token`) acting as a user of
    /// the directory (`X-FogKit-Act-As`), or as nobody: FogKit's access policy applies to
    /// that user exactly as to the user's own requests, and no web auth token is handed out.
    case administrator(actingAs: String?)

    /// The user the request acts as, `nil` for nobody.
    var user: String? {
        switch self {
        case .anonymous: nil
        case .user(let name, _): name
        case .key(_, let user): user
        case .administrator(let user): user
        }
    }
}
