import FogKit
import Foundation
import HTTPTypes
import Hummingbird

/// Reads a request's credentials into a ``Caller``, as CloudKit Web Services does:
///
/// - Server-to-server: the three `X-Apple-CloudKit-Request-*` headers, checked against a key
///   `fog key add` registered; the public database only (and the token calls).
/// - `ckAPIToken` (missing or unknown: 401 `AUTHENTICATION_FAILED`), alone an anonymous
///   caller, with `ckWebAuthToken` a user: a token that is not one of this store's is 401
///   `AUTHENTICATION_FAILED`; an expired one is 421 `AUTHENTICATION_REQUIRED` with the
///   sign-in page, as is a user the store's directory no longer has.
/// - The web console: `X-FogKit-Administrator-Token` (an administrator token `fog admin
///   token` minted; any other is 401 `AUTHENTICATION_FAILED`), acting as the directory's user
///   `X-FogKit-Act-As` names, or as nobody without it. The request then reaches exactly what
///   that user's own requests would.
struct Authenticator {
    let state: ServerState

    func caller(of request: Request, route: Route, body: [UInt8], query: [String: String]) throws(ServerError) -> Caller {
        let headers = request.headers
        if let token = headers[Self.administratorTokenHeader] {
            return try administrator(token: token, actingAs: headers[Self.actAsHeader], environment: route.environment)
        }
        if let keyID = headers[field(RequestSignatureChecker.keyIDHeader)] {
            guard let key = state.credentials.key(keyID) else {
                throw ServerError(.authenticationFailed, "unknown server-to-server key \(keyID)")
            }
            guard let date = headers[field(RequestSignatureChecker.dateHeader)],
                let signature = headers[field(RequestSignatureChecker.signatureHeader)]
            else {
                throw ServerError(
                    .authenticationFailed,
                    "a signed request needs \(RequestSignatureChecker.dateHeader) and \(RequestSignatureChecker.signatureHeader)")
            }
            try state.signatures.check(
                key: key, date: date, signature: signature, target: request.head.path ?? request.uri.description, body: body)
            if let scope = route.scope, scope != .public {
                throw ServerError(.accessDenied, "server-to-server keys reach the public database only, not the \(scope) database")
            }
            return .key(id: keyID, user: key.user)
        }
        guard let apiToken = query["ckAPIToken"].map(ServerResponder.decoded), !apiToken.isEmpty else {
            throw ServerError(.authenticationFailed, "the request has no ckAPIToken (and no server-to-server signature)")
        }
        guard state.credentials.isAPIToken(apiToken) else {
            throw ServerError(.authenticationFailed, "unknown API token")
        }
        guard let text = query["ckWebAuthToken"] ?? query["ckSession"], !text.isEmpty else { return .anonymous }
        guard let session = state.sessions.session(text) else {
            throw ServerError(.authenticationFailed, "the web auth token is not one this server issued")
        }
        guard session.expires > Date() else {
            throw ServerError(.authenticationRequired, "the web auth token expired; sign in again", redirectURL: state.signInURL)
        }
        guard (try? state.store.userExists(session.user, in: route.environment)) == true else {
            throw ServerError(
                .authenticationRequired, "user \(session.user) is not in the store's directory", redirectURL: state.signInURL)
        }
        return .user(session.user, session: session)
    }

    static let administratorTokenHeader = HTTPField.Name("X-FogKit-Administrator-Token")!
    static let actAsHeader = HTTPField.Name("X-FogKit-Act-As")!

    /// Checks an administrator token (401 `AUTHENTICATION_FAILED` when it is not one).
    func checkAdministrator(_ request: Request) throws(ServerError) {
        guard let token = request.headers[Self.administratorTokenHeader], !token.isEmpty else {
            throw ServerError(.authenticationFailed, "the administration API needs the header \(Self.administratorTokenHeader)")
        }
        guard state.credentials.isAdministratorToken(token) else {
            throw ServerError(.authenticationFailed, "unknown administrator token")
        }
    }

    /// The console's caller: the administrator acting as `user` (`nil` or empty: nobody),
    /// who must be in `environment`'s directory.
    private func administrator(
        token: String, actingAs user: String?, environment: Container.Environment
    ) throws(ServerError)
        -> Caller
    {
        guard state.credentials.isAdministratorToken(token) else {
            throw ServerError(.authenticationFailed, "unknown administrator token")
        }
        guard let user, !user.isEmpty else { return .administrator(actingAs: nil) }
        guard (try? state.store.userExists(user, in: environment)) == true else {
            throw ServerError(.badRequest, "no user \(user) in the \(environment) directory to act as")
        }
        return .administrator(actingAs: user)
    }

    private func field(_ name: String) -> HTTPField.Name { HTTPField.Name(name)! }
}
