import FogKit
import FogKitTesting
import FogServer
import Foundation
import Testing

/// API tokens, web auth tokens and their rotation, over real HTTP.
@Suite struct AuthenticationTests {
    @Test func callerIsTheSignedInUserAtTheTopLevel() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let reply = try await server.get(server.url("public", "users/caller"))
        #expect(reply.status == 200)
        let name = try #require(reply.json["userRecordName"] as? String)
        #expect(name.hasPrefix("_"))
        #expect((reply.json["lookupInfo"] as? [String: Any])?["emailAddress"] as? String == "alice@example.com")
        #expect((reply.json["nameComponents"] as? [String: Any])?["givenName"] as? String == "Alice")
        #expect((reply.json["users"] as? [[String: Any]])?.first?["userRecordName"] as? String == name)
    }

    @Test func everyUserResponseCarriesAFreshTokenAndTheOldOneStaysValid() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let first = try await server.get(server.url("public", "users/caller"))
        let fresh = try #require(first.headers["x-apple-cloudkit-web-auth-token"])
        #expect(fresh != server.aliceToken)
        #expect(fresh.count >= 100)
        #expect(fresh.allSatisfy { $0.isLetter || $0.isNumber || "+/=_".contains($0) })
        // The fresh token signs in the same user …
        let second = try await server.get(server.url("public", "users/caller", user: fresh))
        #expect(second.status == 200)
        #expect(second.json["userRecordName"] as? String == first.json["userRecordName"] as? String)
        // … and the first token keeps working (clients that never read the header reuse it).
        let third = try await server.get(server.url("public", "users/caller"))
        #expect(third.status == 200)
    }

    @Test func apiTokenAloneIsAnonymous() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        // Public reads work.
        let query = try await server.post(server.url("public", "records/query", user: nil), ["query": ["recordType": "Note"]])
        #expect(query.status == 200)
        #expect(query.records.isEmpty)
        // Private requests need a user: 421 with a sign-in page.
        let zones = try await server.get(server.url("private", "zones/list", user: nil))
        #expect(zones.status == 421)
        #expect(zones.json["serverErrorCode"] as? String == "AUTHENTICATION_REQUIRED")
        #expect((zones.json["redirectURL"] as? String)?.hasPrefix("http://127.0.0.1:") == true)
        let caller = try await server.get(server.url("public", "users/caller", user: nil))
        #expect(caller.status == 421)
    }

    @Test func missingOrUnknownAPITokenFails() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let path = "\(server.base)/database/1/\(ServerHarness.container)/development/public/records/query"
        for url in [path, path + "?ckAPIToken=" + String(repeating: "0", count: 64)] {
            let reply = try await server.post(url, ["query": ["recordType": "Note"]])
            #expect(reply.status == 401)
            #expect(reply.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
            #expect(reply.json["records"] == nil)
        }
    }

    @Test func forgedOrExpiredWebAuthTokens() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let forged = String(repeating: "A", count: 120)
        let reply = try await server.get(server.url("public", "users/caller", user: forged))
        #expect(reply.status == 401)
        #expect(reply.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
        let expired = try ServerCredentials(store: server.directory.url).createWebAuthToken(user: "alice", lifetime: -10)
        let late = try await server.get(server.url("public", "users/caller", user: expired))
        #expect(late.status == 421)
        #expect(late.json["serverErrorCode"] as? String == "AUTHENTICATION_REQUIRED")
    }

    @Test func apiTokensAreSixtyFourLowercaseHexDigits() throws {
        let directory = try FogKitTestingDirectory()
        let token = try ServerCredentials(store: directory.url).createAPIToken()
        #expect(token.count == 64)
        #expect(token.allSatisfy { "0123456789abcdef".contains($0) })
    }

    @Test func tokensMintedWhileTheServerRunsWorkAtOnce() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let token = try ServerCredentials(store: server.directory.url).createAPIToken()
        let url = "\(server.base)/database/1/\(ServerHarness.container)/development/public/records/query?ckAPIToken=\(token)"
        let reply = try await server.post(url, ["query": ["recordType": "Note"]])
        #expect(reply.status == 200)
    }

    @Test func otherContainersAndUnknownEndpointsAreNotFound() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let other = try await server.post(
            "\(server.base)/database/1/iCloud.other/development/public/records/query?ckAPIToken=\(server.apiToken)",
            ["query": ["recordType": "Note"]])
        #expect(other.status == 404)
        #expect(other.json["serverErrorCode"] as? String == "NOT_FOUND")
        let unknown = try await server.post(server.url("public", "records/frobnicate"), [:])
        #expect(unknown.status == 404)
        #expect(unknown.json["serverErrorCode"] as? String == "NOT_FOUND")
        let outside = try await server.get("\(server.base)/nothing/here")
        #expect(outside.status == 404)
        #expect(outside.json["serverErrorCode"] as? String == "NOT_FOUND")
    }
}

/// A temporary directory for tests that need no server.
typealias FogKitTestingDirectory = FogKitTesting.TemporaryDirectory
