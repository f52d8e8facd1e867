import FogKit
import Foundation

/// `tokens/create` and `tokens/register`, under `/device/1/…` and `/database/1/…`.
enum TokenEndpoints {
    static var table: [String: Endpoint] {
        [
            "tokens/create": .post(create),
            "tokens/register": .post(register),
        ]
    }

    struct Request: Decodable {
        var apnsEnvironment: String?
        var apnsToken: String?
        var clientId: String?
    }

    static func answer(_ bytes: [UInt8], environment: String, call: EndpointCall) -> JSON {
        .object([
            ("apnsEnvironment", .string(environment)), ("apnsToken", .string(Data(bytes).base64EncodedString())),
            ("webcourierURL", .string(PushTokens.courierURL(bytes, state: call.state))),
        ])
    }

    /// `tokens/create`: a new token and the URL its notifications are long-polled from. A
    /// signed-in caller's token is registered for that user at once.
    @Sendable static func create(_ call: EndpointCall) async throws -> JSON {
        let request = try call.decode(Request.self)
        let secret = call.state.credentials.secret
        let bytes = PushTokens.make(secret: secret)
        if call.caller.user != nil, let id = PushTokens.id(of: bytes, secret: secret) {
            try await bind(id: id, call: call)
        }
        return answer(bytes, environment: request.apnsEnvironment ?? call.route.environment.rawValue, call: call)
    }

    /// `tokens/register`: ties a token of this server to the signed-in caller; its long
    /// poll delivers that user's notifications from now on.
    @Sendable static func register(_ call: EndpointCall) async throws -> JSON {
        let request = try call.decode(Request.self)
        guard let text = request.apnsToken, let data = Data(base64Encoded: text),
            let id = PushTokens.id(of: Array(data), secret: call.state.credentials.secret)
        else { throw ServerError(.badRequest, "apnsToken is not a token tokens/create made") }
        guard call.caller.user != nil else {
            throw ServerError(.authenticationRequired, "a token is registered for a signed-in user", redirectURL: call.state.signInURL)
        }
        try await bind(id: id, call: call)
        return answer(Array(data), environment: request.apnsEnvironment ?? call.route.environment.rawValue, call: call)
    }

    /// Registers the token for the caller and starts its listener after every stored
    /// notification.
    static func bind(id: String, call: EndpointCall) async throws {
        guard let user = call.caller.user else { return }
        try await call.container.resetNotificationListener(PushTokens.listener(id))
        try PushTokens.register(.init(user: user, environment: call.route.environment.rawValue), id: id, state: call.state)
    }
}
