import FogKit
import FogKitTesting
import FogServer
import Foundation
import Logging

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A FogServer on an ephemeral port of loopback, over a temporary store with users alice
/// and bob, spoken to over real HTTP (URLSession).
final class ServerHarness: Sendable {
    static let container = "iCloud.com.example.notes"
    let directory: TemporaryDirectory
    let server: FogServer
    let port: Int
    let apiToken: String
    let aliceToken: String
    let bobToken: String
    private let task: Task<Void, any Error>

    init(configuration: FogServer.Configuration = FogServer.Configuration(port: 0)) async throws {
        directory = try TemporaryDirectory("server")
        let admin = try Container.Administrator(identifier: Self.container, directory: directory.url)
        var alice = PersonNameComponents()
        alice.givenName = "Alice"
        alice.familyName = "Smith"
        try await admin.addUser("alice", emailAddress: "alice@example.com", nameComponents: alice)
        try await admin.addUser("bob", emailAddress: "bob@example.com")
        admin.close()
        let credentials = ServerCredentials(store: directory.url)
        apiToken = try credentials.createAPIToken()
        aliceToken = try credentials.createWebAuthToken(user: "alice")
        bobToken = try credentials.createWebAuthToken(user: "bob")
        var configuration = configuration
        configuration.port = 0
        configuration.logLevel = .critical
        let server = try FogServer(store: directory.url, configuration: configuration)
        self.server = server
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        task = Task { try await server.run { port in continuation.yield(port) } }
        var bound = 0
        for await port in stream {
            bound = port
            break
        }
        port = bound
    }

    deinit { task.cancel() }

    /// Stops the server and waits for it.
    func stop() async {
        task.cancel()
        _ = await task.result
    }

    var base: String { "http://127.0.0.1:\(port)" }

    /// The URL of a Web Services endpoint of `database`, with the API token and, for `user`,
    /// that user's web auth token.
    func url(_ database: String, _ endpoint: String, user: String? = "alice", environment: String = "development") -> String {
        var url = "\(base)/database/1/\(Self.container)/\(environment)/\(database)/\(endpoint)?ckAPIToken=\(apiToken)"
        if let user {
            let token = user == "alice" ? aliceToken : user == "bob" ? bobToken : user
            url += "&ckWebAuthToken=\(Self.escape(token))"
        }
        return url
    }

    static func escape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// A response: status, headers and the body parsed as JSON.
    struct Reply: @unchecked Sendable {
        var status: Int
        var headers: [String: String]
        var body: Data
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var records: [[String: Any]] { json["records"] as? [[String: Any]] ?? [] }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends a request over HTTP.
    func send(
        _ method: String, _ url: String, body: Data? = nil, headers: [String: String] = [:]
    ) async throws -> Reply {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body
        // Far past URLSession's default 60 s: a debug server on a loaded CI machine can take
        // that long for a large batch, and a test should fail on answers, not on the load.
        request.timeoutInterval = 300
        for (key, value) in headers { request.setValue(value, forHTTPHeaderField: key) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields { fields[String(describing: key).lowercased()] = String(describing: value) }
        return Reply(status: http.statusCode, headers: fields, body: data)
    }

    /// POSTs `json` (a JSON object written as Swift dictionaries) with CloudKit JS's
    /// `text/plain` content type.
    func post(_ url: String, _ json: [String: Any]) async throws -> Reply {
        try await send(
            "POST", url, body: try JSONSerialization.data(withJSONObject: json), headers: ["Content-Type": "text/plain"])
    }

    func get(_ url: String) async throws -> Reply { try await send("GET", url) }
}
