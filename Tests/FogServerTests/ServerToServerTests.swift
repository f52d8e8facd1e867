import Crypto
import FogKit
import FogKitTesting
import FogServer
import Foundation
import Testing

/// Server-to-server keys: ECDSA P-256 signatures over `date:base64(sha256(body)):path?query`.
@Suite struct ServerToServerTests {
    struct Signer {
        let key = P256.Signing.PrivateKey()
        var keyID = ""

        func headers(path: String, body: Data, date: Date = Date()) throws -> [String: String] {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            let dateText = formatter.string(from: date)
            let hash = Data(SHA256.hash(data: body)).base64EncodedString()
            let signature = try key.signature(for: Data("\(dateText):\(hash):\(path)".utf8))
            return [
                "X-Apple-CloudKit-Request-KeyID": keyID, "X-Apple-CloudKit-Request-ISO8601Date": dateText,
                "X-Apple-CloudKit-Request-SignatureV1": signature.derRepresentation.base64EncodedString(),
                "Content-Type": "text/plain",
            ]
        }
    }

    static func signer(_ server: ServerHarness) throws -> Signer {
        var signer = Signer()
        signer.keyID = try ServerCredentials(store: server.directory.url).addKey(
            publicKeyPEM: signer.key.publicKey.pemRepresentation, user: "alice")
        return signer
    }

    func path(_ database: String, _ endpoint: String, query: String = "") -> String {
        "/database/1/\(ServerHarness.container)/development/\(database)/\(endpoint)\(query)"
    }

    @Test func keyIDsAreSixtyFourHexDigits() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let signer = try Self.signer(server)
        #expect(signer.keyID.count == 64)
        #expect(signer.keyID.allSatisfy { "0123456789abcdef".contains($0) })
    }

    @Test func signedCallerNamesTheKeysUserEvenWithExtraQueryParameters() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let signer = try Self.signer(server)
        let target = path("public", "users/caller", query: "?ckjsBuildVersion=1811ProjectDev27&ckjsVersion=2.4.0&clientId=abc")
        let reply = try await server.send("GET", server.base + target, headers: try signer.headers(path: target, body: Data()))
        #expect(reply.status == 200, "\(reply.text)")
        #expect((reply.json["lookupInfo"] as? [String: Any])?["emailAddress"] as? String == "alice@example.com")
    }

    @Test func signedWritesReachThePublicDatabaseOnly() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let signer = try Self.signer(server)
        let body = Data(#"{"query":{"recordType":"Note"}}"#.utf8)
        let target = path("public", "records/query")
        let reply = try await server.send("POST", server.base + target, body: body, headers: try signer.headers(path: target, body: body))
        #expect(reply.status == 200)
        let privateTarget = path("private", "records/query")
        let refused = try await server.send(
            "POST", server.base + privateTarget, body: body, headers: try signer.headers(path: privateTarget, body: body))
        #expect(refused.status == 403)
        #expect(refused.json["serverErrorCode"] as? String == "ACCESS_DENIED")
    }

    @Test func tamperedStaleReplayedAndUnknownSignaturesFail() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let signer = try Self.signer(server)
        let body = Data(#"{"query":{"recordType":"Note"}}"#.utf8)
        let target = path("public", "records/query")
        // The body changed after signing.
        var reply = try await server.send(
            "POST", server.base + target, body: Data(#"{"query":{"recordType":"Other"}}"#.utf8),
            headers: try signer.headers(path: target, body: body))
        #expect(reply.status == 401)
        #expect(reply.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
        // Signed over the path without the query the request has.
        reply = try await server.send(
            "POST", server.base + target + "?x=1", body: body, headers: try signer.headers(path: target, body: body))
        #expect(reply.status == 401)
        // Ten minutes old.
        reply = try await server.send(
            "POST", server.base + target, body: body,
            headers: try signer.headers(path: target, body: body, date: Date().addingTimeInterval(-600)))
        #expect(reply.status == 401)
        // A replay of a request that was accepted.
        let headers = try signer.headers(path: target, body: body)
        reply = try await server.send("POST", server.base + target, body: body, headers: headers)
        #expect(reply.status == 200)
        reply = try await server.send("POST", server.base + target, body: body, headers: headers)
        #expect(reply.status == 401)
        // A key nobody registered.
        var stranger = Signer()
        stranger.keyID = String(repeating: "a", count: 64)
        reply = try await server.send("POST", server.base + target, body: body, headers: try stranger.headers(path: target, body: body))
        #expect(reply.status == 401)
    }
}
