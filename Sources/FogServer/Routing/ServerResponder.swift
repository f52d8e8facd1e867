import FogKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Answers every request: Web Services paths through authentication and the endpoint table,
/// the sign-in page, the console, and CloudKit's `NOT_FOUND` for anything else.
struct ServerResponder: HTTPResponder {
    typealias Context = ServerRequestContext
    let state: ServerState

    func respond(to request: Request, context: Context) async throws -> Response {
        var request = request
        let path = request.uri.path
        do {
            if let route = Route(path: path) {
                return try await respondWebServices(to: &request, route: route)
            }
            if let response = try await ExtraRoutes.respond(to: &request, path: path, client: context.clientAddress, state: state) {
                return response
            }
            throw ServerError(.notFound, "no endpoint at \(path)")
        } catch {
            return Self.errorResponse(ServerError(error, signIn: state.signInURL))
        }
    }

    /// A Web Services request: container, authentication, endpoint.
    private func respondWebServices(to request: inout Request, route: Route) async throws -> Response {
        guard route.container == state.store.identifier else {
            throw ServerError(.notFound, "this server serves container \(state.store.identifier), not \(route.container)")
        }
        guard let endpoint = Endpoints.table[route.endpoint] else {
            throw ServerError(.notFound, "no endpoint \(route.endpoint)")
        }
        guard endpoint.methods.contains(request.method) else {
            throw ServerError(.notFound, "\(route.endpoint) does not take \(request.method.rawValue)")
        }
        let body = try await Self.body(of: &request, limit: endpoint.bodyLimit ?? state.configuration.maximumBodySize)
        let query = Self.queryParameters(request)
        let caller = try Authenticator(state: state).caller(of: request, route: route, body: body, query: query)
        let container = try state.store.container(route.environment, user: caller.user)
        let call = EndpointCall(
            route: route, caller: caller, container: container, body: body, query: query, state: state,
            request: request)
        var response = try await endpoint.handler(call)
        if case .user(let user, let session) = caller {
            // A fresh token on every response; the one sent stays valid until it expires.
            response.headers[Self.webAuthTokenHeader] = state.sessions.freshToken(user: user, lifetime: session.lifetime)
        }
        return response
    }

    static let webAuthTokenHeader = HTTPField.Name("X-Apple-CloudKit-Web-Auth-Token")!

    /// The request body, at most `limit` bytes.
    static func body(of request: inout Request, limit: Int) async throws -> [UInt8] {
        do {
            let buffer = try await request.collectBody(upTo: limit)
            return Array(buffer.readableBytesView)
        } catch {
            throw ServerError(.badRequest, "the request body is larger than \(limit) bytes")
        }
    }

    /// The query's parameters as sent, still percent-encoded (``decoded(_:)`` decodes one):
    /// a web auth token is looked up by the text the client sends, so a session's later
    /// requests skip its decoding.
    static func queryParameters(_ request: Request) -> [String: String] {
        var result: [String: String] = [:]
        guard let query = request.uri.query, !query.isEmpty else { return result }
        // One pass over the bytes, no arrays in between (this runs on every request).
        let utf8 = query.utf8
        var start = utf8.startIndex
        var equals: String.Index?
        var i = utf8.startIndex
        while true {
            let atEnd = i == utf8.endIndex
            if atEnd || utf8[i] == UInt8(ascii: "&") {
                if start != i {
                    let keyEnd = equals ?? i
                    let value = equals.map { String(query[utf8.index(after: $0)..<i]) } ?? ""
                    result[decoded(String(query[start..<keyEnd]))] = value
                }
                if atEnd { break }
                start = utf8.index(after: i)
                equals = nil
            } else if equals == nil, utf8[i] == UInt8(ascii: "=") {
                equals = i
            }
            i = utf8.index(after: i)
        }
        return result
    }

    /// `text` with its percent escapes decoded (a `+` stays a `+`).
    static func decoded(_ text: String) -> String {
        text.utf8.contains(UInt8(ascii: "%")) ? (text.removingPercentEncoding ?? text) : text
    }

    /// The error's dictionary at the top level, with its HTTP status.
    static func errorResponse(_ error: ServerError) -> Response {
        json(.object(error.members()), status: error.code.status)
    }

    /// A JSON response.
    static func json(_ value: JSON, status: HTTPResponse.Status = .ok) -> Response {
        bytes(value.bytes, status: status, contentType: "application/json; charset=UTF-8")
    }

    static func bytes(_ bytes: [UInt8], status: HTTPResponse.Status = .ok, contentType: String) -> Response {
        var buffer = ByteBuffer()
        buffer.writeBytes(bytes)
        return Response(status: status, headers: [.contentType: contentType], body: ResponseBody(byteBuffer: buffer))
    }
}
