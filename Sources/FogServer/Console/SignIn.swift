import FogKit
import Foundation
import Hummingbird

/// `POST /signin`, what the sign-in page sends: `{"user": …, "password": …}`, answered with
/// `{"ckWebAuthToken": …}` (a web auth token for the user, for the server's usual lifetime)
/// when the password is the one `fog user password` set, and 401 `AUTHENTICATION_FAILED`
/// otherwise, with nothing issued. The user must also be in the store's directory.
enum SignIn {
    struct Form: Decodable {
        var user: String
        var password: String
    }

    static func respond(to request: inout Request, state: ServerState) async throws -> Response {
        let body = try await ServerResponder.body(of: &request, limit: 64 << 10)
        guard let form = try? JSONDecoder().decode(Form.self, from: Data(body)) else {
            throw ServerError(.badRequest, "the sign-in form is {\"user\": …, \"password\": …}")
        }
        // One answer for an unknown user and a wrong password, so the page tells nobody which.
        let known = (try? state.store.userExists(form.user, in: .development)) == true
        guard known, state.credentials.checkPassword(form.password, user: form.user) else {
            throw ServerError(.authenticationFailed, "wrong user name or password")
        }
        let lifetime = state.configuration.webAuthTokenLifetime
        let token = WebAuthToken(user: form.user, expires: Date().addingTimeInterval(lifetime), lifetime: lifetime)
        return ServerResponder.json(.object([("ckWebAuthToken", .string(token.encoded(secret: state.credentials.secret)))]))
    }
}
