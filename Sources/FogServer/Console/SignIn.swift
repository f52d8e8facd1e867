import FogKit
import Foundation
import Hummingbird

/// `POST /signin`, what the sign-in page sends: `{"user": …, "password": …}`, answered with
/// `{"ckWebAuthToken": …}` (a web auth token for the user, for the server's usual lifetime)
/// when the password is the one `fog user password` set, and 401 `AUTHENTICATION_FAILED`
/// otherwise, with nothing issued. The user must also be in the store's directory.
///
/// Failed attempts are limited (``SignInThrottle``, ``FogServer/Configuration/signInAttemptsPerAccount``):
/// past the limit an attempt is refused with 429 `THROTTLED` and `retryAfter` (seconds)
/// before the password is checked.
enum SignIn {
    struct Form: Decodable {
        var user: String
        var password: String
    }

    /// Answers a sign-in from `client` (its address, when known).
    static func respond(to request: inout Request, client: String?, state: ServerState) async throws -> Response {
        let body = try await ServerResponder.body(of: &request, limit: 64 << 10)
        guard let form = try? JSONDecoder().decode(Form.self, from: Data(body)) else {
            throw ServerError(.badRequest, "the sign-in form is {\"user\": …, \"password\": …}")
        }
        let throttle = state.signInThrottle
        if let wait = throttle.retryAfter(account: form.user, client: client) {
            throw ServerError(
                .throttled, "too many failed sign-ins; try again in \(Int(wait.rounded(.up))) s", retryAfter: wait.rounded(.up))
        }
        // One answer for an unknown user and a wrong password, so the page tells nobody which.
        let known = (try? state.store.userExists(form.user, in: .development)) == true
        guard known, state.credentials.checkPassword(form.password, user: form.user) else {
            throttle.recordFailure(account: form.user, client: client)
            throw ServerError(.authenticationFailed, "wrong user name or password")
        }
        throttle.recordSuccess(account: form.user)
        let lifetime = state.configuration.webAuthTokenLifetime
        let token = WebAuthToken(user: form.user, expires: Date().addingTimeInterval(lifetime), lifetime: lifetime)
        return ServerResponder.json(.object([("ckWebAuthToken", .string(token.encoded(secret: state.credentials.secret)))]))
    }
}
