import Foundation
import HTTPTypes
import Hummingbird

/// The web console (`/console`), its administration API (`/admin/1/…`), and the sign-in
/// page (`/signin`).
///
/// The console's pages are static files (`Console/Site`, plain HTML, CSS and JavaScript
/// modules, no build step). The console talks to the Web Services endpoints like any client,
/// with the administrator token and the user it acts as in headers (``Authenticator``), and
/// to ``AdministrationEndpoints`` for what is not a database operation.
enum ConsoleRoutes {
    static func respond(to request: inout Request, path: String, client: String?, state: ServerState) async throws -> Response? {
        if path == "/console" || path == "/console/" { return try site("index.html", request: request) }
        if path.hasPrefix("/console/") { return try site(String(path.dropFirst("/console/".count)), request: request) }
        if path == "/signin" || path == "/signin/" {
            if request.method == .post { return try await SignIn.respond(to: &request, client: client, state: state) }
            return try site("signin.html", request: request)
        }
        if path.hasPrefix("/admin/") { return try await AdministrationEndpoints.respond(to: &request, path: path, state: state) }
        return nil
    }

    /// A file of the site, `NOT_FOUND` for one it does not have (or a path that leaves it).
    static func site(_ relativePath: String, request: Request) throws -> Response {
        guard request.method == .get || request.method == .head else {
            throw ServerError(.notFound, "the console's files take GET, not \(request.method.rawValue)")
        }
        let parts = relativePath.split(separator: "/").map(String.init)
        guard !parts.isEmpty, parts.allSatisfy({ !$0.hasPrefix(".") && !$0.contains("\\") }),
            let root = Bundle.module.resourceURL?.appendingPathComponent("Site", isDirectory: true)
        else { throw ServerError(.notFound, "no console file \(relativePath)") }
        let url = parts.reduce(root) { $0.appendingPathComponent($1) }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw ServerError(.notFound, "no console file \(relativePath)")
        }
        var response = ServerResponder.bytes(Array(data), contentType: contentType(of: url.pathExtension))
        response.headers[.cacheControl] = "no-store"
        // The console's pages load only their own files and talk only to this server.
        response.headers[HTTPField.Name("Content-Security-Policy")!] =
            "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; frame-ancestors 'none'"
        return response
    }

    static func contentType(of pathExtension: String) -> String {
        switch pathExtension {
        case "html": "text/html; charset=UTF-8"
        case "js": "text/javascript; charset=UTF-8"
        case "css": "text/css; charset=UTF-8"
        case "svg": "image/svg+xml"
        case "json": "application/json; charset=UTF-8"
        default: "application/octet-stream"
        }
    }
}
