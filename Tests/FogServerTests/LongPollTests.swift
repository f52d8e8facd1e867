import FogKit
import FogKitTesting
import FogServer
import Foundation
import Testing

/// `tokens/create`, `tokens/register` and the `webcourierURL` long poll, over real HTTP.
@Suite struct LongPollTests {
    static func deviceURL(_ server: ServerHarness, _ action: String, user: String? = "alice") -> String {
        var url = "\(server.base)/device/1/\(ServerHarness.container)/development/tokens/\(action)?ckAPIToken=\(server.apiToken)"
        if let user { url += "&ckWebAuthToken=\(ServerHarness.escape(user == "alice" ? server.aliceToken : server.bobToken))" }
        return url
    }

    static func harness(timeout: TimeInterval) async throws -> ServerHarness {
        var configuration = FogServer.Configuration(port: 0)
        configuration.longPollTimeout = timeout
        return try await ServerHarness(configuration: configuration)
    }

    @Test func tokensCreateAndRegisterAtBothPaths() async throws {
        let server = try await Self.harness(timeout: 1)
        defer { Task { await server.stop() } }
        let created = try await server.post(Self.deviceURL(server, "create", user: nil), ["apnsEnvironment": "development"])
        #expect(created.status == 200)
        #expect(created.json["apnsEnvironment"] as? String == "development")
        let token = try #require(created.json["apnsToken"] as? String)
        #expect(Data(base64Encoded: token) != nil)
        let courier = try #require(created.json["webcourierURL"] as? String)
        #expect(URL(string: courier) != nil)
        #expect(courier.hasPrefix(server.base))
        // Registering needs a user; the /database/1/… spelling works as well.
        let anonymous = try await server.post(Self.deviceURL(server, "register", user: nil), ["apnsToken": token])
        #expect(anonymous.status == 421)
        let databasePath =
            "\(server.base)/database/1/\(ServerHarness.container)/development/tokens/register?ckAPIToken=\(server.apiToken)&ckWebAuthToken=\(ServerHarness.escape(server.aliceToken))"
        let registered = try await server.post(databasePath, ["apnsEnvironment": "development", "apnsToken": token])
        #expect(registered.status == 200)
        #expect(registered.json["webcourierURL"] as? String == courier)
        let withScope = try await server.post(server.url("public", "tokens/create"), ["apnsEnvironment": "development"])
        #expect(withScope.status == 200)
        // A token the server did not make is refused.
        let forged = try await server.post(
            Self.deviceURL(server, "register"), ["apnsToken": Data(repeating: 1, count: 32).base64EncodedString()])
        #expect(forged.status == 400)
        // A poll with nothing to deliver answers {} after the timeout.
        let start = Date()
        let empty = try await server.get(courier)
        #expect(empty.status == 200)
        #expect(empty.json.isEmpty)
        #expect(empty.text == "{}")
        #expect(Date().timeIntervalSince(start) >= 0.9)
        let bad = try await server.get("\(server.base)/webcourier/AAAA")
        #expect(bad.status == 404)
    }

    @Test func aQuerySubscriptionsNotificationReachesTheLongPoll() async throws {
        let server = try await Self.harness(timeout: 20)
        defer { Task { await server.stop() } }
        let bob = try Container(identifier: ServerHarness.container, directory: server.directory.url, user: "bob")
        defer { bob.close() }
        let notes = bob.publicCloudDatabase
        let first = Record(recordType: "Note", recordID: Record.ID(recordName: "first"))
        first["title"] = "x"
        _ = try await notes.save(first)

        let subscribe = try await server.post(
            server.url("public", "subscriptions/modify"),
            [
                "operations": [
                    [
                        "operationType": "create",
                        "subscription": [
                            "subscriptionID": "new-notes", "subscriptionType": "query", "query": ["recordType": "Note"],
                            "firesOn": ["create"], "notificationInfo": ["alertBody": "A new note", "soundName": "ping.aiff"],
                        ],
                    ]
                ]
            ])
        #expect((subscribe.json["subscriptions"] as? [[String: Any]])?.first?["serverErrorCode"] == nil)
        let created = try await server.post(Self.deviceURL(server, "create"), ["apnsEnvironment": "development"])
        let courier = try #require(created.json["webcourierURL"] as? String)

        let poll = Task { try await server.get(courier) }
        try await Task.sleep(for: .milliseconds(300))
        let second = Record(recordType: "Note", recordID: Record.ID(recordName: "second"))
        second["title"] = "y"
        _ = try await notes.save(second)
        let reply = try await poll.value
        #expect(reply.status == 200)
        let ck = try #require(reply.json["ck"] as? [String: Any])
        #expect(ck["cid"] as? String == ServerHarness.container)
        #expect(ck["nid"] is String)
        let qry = try #require(ck["qry"] as? [String: Any])
        #expect(qry["sid"] as? String == "new-notes")
        #expect(qry["rid"] as? String == "second")
        #expect(qry["fo"] as? Int == 1)
        #expect(qry["dbs"] as? Int == 1)
        #expect(qry["zid"] as? String == "_defaultZone")
        let aps = try #require(reply.json["aps"] as? [String: Any])
        #expect((aps["alert"] as? [String: Any])?["body"] as? String == "A new note")
        #expect(aps["sound"] as? String == "ping.aiff")
        // Delivered once: the next poll waits for the next one.
        let next = Task { try await server.get(courier) }
        try await Task.sleep(for: .milliseconds(300))
        let third = Record(recordType: "Note", recordID: Record.ID(recordName: "third"))
        _ = try await notes.save(third)
        let again = try await next.value
        #expect(((again.json["ck"] as? [String: Any])?["qry"] as? [String: Any])?["rid"] as? String == "third")
    }
}
