import FogKit
import FogKitTesting
import FogServer
import Foundation
import Testing

/// The console's administration API, its act-as path through the Web Services endpoints,
/// and the sign-in page, over real HTTP.
@Suite struct ConsoleAdministrationTests {
    static let header = "X-FogKit-Administrator-Token"

    func adminURL(_ server: ServerHarness, _ path: String, environment: String = "development") -> String {
        "\(server.base)/admin/1/\(ServerHarness.container)/\(environment)/\(path)"
    }

    func adminToken(_ server: ServerHarness) throws -> String {
        try ServerCredentials(store: server.directory.url).createAdministratorToken()
    }

    func send(
        _ server: ServerHarness, _ method: String, _ url: String, token: String?, actAs: String? = nil, json: [String: Any]? = nil
    ) async throws -> ServerHarness.Reply {
        var headers = ["Content-Type": "application/json"]
        if let token { headers[Self.header] = token }
        if let actAs { headers["X-FogKit-Act-As"] = actAs }
        return try await server.send(method, url, body: try json.map { try JSONSerialization.data(withJSONObject: $0) }, headers: headers)
    }

    @Test func administrationNeedsTheAdministratorToken() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        for token in [nil, server.apiToken, String(repeating: "0", count: 64)] {
            for path in ["users", "schema", "roles"] {
                let reply = try await send(server, "GET", adminURL(server, path), token: token)
                #expect(reply.status == 401, "\(path) with \(token ?? "no token")")
                #expect(reply.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
            }
        }
        let deploy = try await send(server, "POST", adminURL(server, "schema/deploy"), token: server.apiToken, json: [:])
        #expect(deploy.status == 401)
        let token = try adminToken(server)
        let users = try await send(server, "GET", adminURL(server, "users"), token: token)
        #expect(users.status == 200)
        let names = (users.json["users"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["alice", "bob"])
        let containers = try await send(server, "GET", "\(server.base)/admin/1/containers", token: token)
        #expect(containers.json["containers"] as? [String] == [ServerHarness.container])
        let other = try await send(server, "GET", "\(server.base)/admin/1/iCloud.other/development/users", token: token)
        #expect(other.status == 404)
    }

    @Test func schemaRoundTripAndDeploy() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let token = try adminToken(server)
        let text = """
            DEFINE SCHEMA
                CREATE ROLE Editor;
                RECORD TYPE Communication (title STRING QUERYABLE, isCurrent INT64 QUERYABLE, GRANT READ TO "_world", GRANT READ, CREATE, WRITE TO Editor);
            """
        let saved = try await send(server, "POST", adminURL(server, "schema"), token: token, json: ["schema": text])
        #expect(saved.status == 200)
        let canonical = try #require(saved.json["schema"] as? String)
        #expect(canonical.contains("RECORD TYPE Communication ("))
        #expect(canonical.contains("CREATE ROLE Editor;"))
        // The canonical text saves to itself.
        let again = try await send(server, "POST", adminURL(server, "schema"), token: token, json: ["schema": canonical])
        #expect(again.json["schema"] as? String == canonical)
        let production = try await send(server, "GET", adminURL(server, "schema", environment: "production"), token: token)
        #expect((production.json["schema"] as? String)?.contains("Communication") == false)
        let deployed = try await send(server, "POST", adminURL(server, "schema/deploy"), token: token, json: [:])
        #expect(deployed.status == 200)
        #expect(deployed.json["schema"] as? String == canonical)
        // Production is not edited directly, and text that does not parse changes nothing.
        let direct = try await send(
            server, "POST", adminURL(server, "schema", environment: "production"), token: token, json: ["schema": canonical])
        #expect(direct.status == 400)
        let broken = try await send(
            server, "POST", adminURL(server, "schema"), token: token, json: ["schema": "DEFINE SCHEMA\n    RECORD TYPE X (title);\n"])
        #expect(broken.status == 400)
        #expect(broken.json["serverErrorCode"] as? String == "BAD_REQUEST")
        #expect((broken.json["reason"] as? String)?.hasPrefix("2:") == true)
        let after = try await send(server, "GET", adminURL(server, "schema"), token: token)
        #expect(after.json["schema"] as? String == canonical)
    }

    @Test func roleMembersAndTheAccessTheyGive() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let token = try adminToken(server)
        let schema = """
            DEFINE SCHEMA
                CREATE ROLE Editor;
                RECORD TYPE Communication (title STRING QUERYABLE, GRANT READ TO "_world", GRANT READ, CREATE, WRITE TO Editor);
            """
        _ = try await send(server, "POST", adminURL(server, "schema"), token: token, json: ["schema": schema])
        let added = try await send(
            server, "POST", adminURL(server, "roles/members"), token: token,
            json: ["operationType": "add", "role": "Editor", "user": "alice"])
        #expect(added.status == 200)
        let roles = try #require(added.json["roles"] as? [[String: Any]])
        #expect(roles.count == 1)
        #expect(roles.first?["name"] as? String == "Editor")
        #expect((roles.first?["members"] as? [[String: Any]])?.map { $0["name"] as? String } == ["alice"])
        let listed = try await send(server, "GET", adminURL(server, "roles"), token: token)
        #expect(((listed.json["roles"] as? [[String: Any]])?.first?["members"] as? [[String: Any]])?.count == 1)
        let unknownRole = try await send(
            server, "POST", adminURL(server, "roles/members"), token: token, json: ["operationType": "add", "role": "Nope", "user": "bob"])
        #expect(unknownRole.status == 400)
        let unknownUser = try await send(
            server, "POST", adminURL(server, "roles/members"), token: token,
            json: ["operationType": "add", "role": "Editor", "user": "carol"])
        #expect(unknownUser.status == 404)
        let removed = try await send(
            server, "POST", adminURL(server, "roles/members"), token: token,
            json: ["operationType": "remove", "role": "Editor", "user": "alice"])
        #expect(((removed.json["roles"] as? [[String: Any]])?.first?["members"] as? [[String: Any]])?.isEmpty == true)
    }

    @Test func actingAsAUserGoesThroughTheWebServicesEndpointsAsThatUser() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let token = try adminToken(server)
        let base = "\(server.base)/database/1/\(ServerHarness.container)/development"
        // As alice: her identity, her private zones.
        let caller = try await send(server, "GET", "\(base)/public/users/caller", token: token, actAs: "alice")
        #expect(caller.status == 200)
        #expect((caller.json["lookupInfo"] as? [String: Any])?["emailAddress"] as? String == "alice@example.com")
        #expect(caller.headers["x-apple-cloudkit-web-auth-token"] == nil)
        let created = try await send(
            server, "POST", "\(base)/private/zones/modify", token: token, actAs: "alice",
            json: ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "Drafts"]]]]])
        #expect(created.status == 200)
        let aliceZones = try await send(server, "GET", "\(base)/private/zones/list", token: token, actAs: "alice")
        #expect((aliceZones.json["zones"] as? [[String: Any]])?.count == 2)
        // Bob does not see alice's zone; nobody has no private database.
        let bobZones = try await send(server, "GET", "\(base)/private/zones/list", token: token, actAs: "bob")
        #expect((bobZones.json["zones"] as? [[String: Any]])?.count == 1)
        let nobody = try await send(server, "GET", "\(base)/private/zones/list", token: token)
        #expect(nobody.status == 421)
        let publicQuery = try await send(
            server, "POST", "\(base)/public/records/query", token: token, json: ["query": ["recordType": "Communication"]])
        #expect(publicQuery.status == 200)
        // A user not in the directory, or a wrong administrator token, gets nothing.
        let carol = try await send(server, "GET", "\(base)/private/zones/list", token: token, actAs: "carol")
        #expect(carol.status == 400)
        let wrong = try await send(server, "GET", "\(base)/private/zones/list", token: server.apiToken, actAs: "alice")
        #expect(wrong.status == 401)
        #expect(wrong.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
    }

    @Test func signInWithAPassword() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        try ServerCredentials(store: server.directory.url).setPassword("correct horse", user: "alice")
        let page = try await server.get("\(server.base)/signin")
        #expect(page.status == 200)
        #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(page.text.contains("signin.js"))
        for (user, password) in [("alice", "wrong"), ("bob", "correct horse"), ("carol", "correct horse"), ("alice", "")] {
            let reply = try await server.post("\(server.base)/signin", ["user": user, "password": password])
            #expect(reply.status == 401, "\(user)")
            #expect(reply.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
            #expect(reply.json["ckWebAuthToken"] == nil)
        }
        let good = try await server.post("\(server.base)/signin", ["user": "alice", "password": "correct horse"])
        #expect(good.status == 200)
        let token = try #require(good.json["ckWebAuthToken"] as? String)
        let caller = try await server.get(server.url("public", "users/caller", user: token))
        #expect(caller.status == 200)
        #expect((caller.json["lookupInfo"] as? [String: Any])?["emailAddress"] as? String == "alice@example.com")
        // The 421 answers point at this page.
        let required = try await server.get(server.url("private", "zones/list", user: nil))
        #expect(required.json["redirectURL"] as? String == "\(server.base)/signin")
    }

    @Test func credentialFilesWithoutPasswordsStillRead() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        // The harness's file was written before any password: the API token works.
        let file = try String(contentsOf: server.directory.url.appendingPathComponent("credentials.json"), encoding: .utf8)
        #expect(!file.contains("passwords"))
        let reply = try await server.get(server.url("public", "users/caller"))
        #expect(reply.status == 200)
        try ServerCredentials(store: server.directory.url).setPassword("pw", user: "bob")
        let written = try String(contentsOf: server.directory.url.appendingPathComponent("credentials.json"), encoding: .utf8)
        #expect(written.contains("pbkdf2-sha256"))
        #expect(!written.contains("\"pw\""))
    }

    @Test func consoleFilesAreServedAndNothingElse() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let page = try await server.get("\(server.base)/console")
        #expect(page.status == 200)
        #expect(page.text.contains("console.js"))
        let script = try await server.get("\(server.base)/console/console.js")
        #expect(script.headers["content-type"]?.hasPrefix("text/javascript") == true)
        for path in ["/console/nothing.js", "/console/../Console/ConsoleRoutes.swift", "/console/%2e%2e/x"] {
            let reply = try await server.get("\(server.base)\(path)")
            #expect(reply.status == 404, "\(path)")
        }
    }
}
