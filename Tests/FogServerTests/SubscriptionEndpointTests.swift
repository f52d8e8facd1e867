import FogKit
import FogKitTesting
import FogServer
import Foundation
import Testing

/// `subscriptions/list`, `lookup` and `modify`, over real HTTP.
@Suite struct SubscriptionEndpointTests {
    static var querySubscription: [String: Any] {
        [
            "subscriptionID": "new-notes", "subscriptionType": "query",
            "query": ["recordType": "Note", "filterBy": [["comparator": "EQUALS", "fieldName": "title", "fieldValue": ["value": "x"]]]],
            "firesOn": ["create", "update"], "notificationInfo": ["alertBody": "Changed", "shouldSendContentAvailable": true],
            "zoneWide": true,
        ]
    }

    static func operation(_ type: String, _ subscription: [String: Any]) -> [String: Any] {
        ["operationType": type, "subscription": subscription]
    }

    @Test func createListLookupUpdateAndDeleteRoundTrip() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let zone = try await server.post(
            server.url("private", "zones/modify"),
            ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "Notes"]]]]])
        #expect(zone.status == 200)
        let zoneSubscription: [String: Any] = [
            "subscriptionID": "z1", "subscriptionType": "zone", "zoneID": ["zoneName": "Notes"],
        ]
        let created = try await server.post(
            server.url("private", "subscriptions/modify"),
            ["operations": [Self.operation("create", Self.querySubscription), Self.operation("create", zoneSubscription)]])
        #expect(created.status == 200)
        let results = try #require(created.json["subscriptions"] as? [[String: Any]])
        #expect(results.count == 2)
        #expect(results[0]["subscriptionID"] as? String == "new-notes")
        #expect(results[0]["subscriptionType"] as? String == "query")
        #expect(Set(results[0]["firesOn"] as? [String] ?? []) == ["create", "update"])
        #expect(results[0]["firesOnce"] as? Bool == false)
        #expect((results[0]["query"] as? [String: Any])?["recordType"] as? String == "Note")
        let info = try #require(results[0]["notificationInfo"] as? [String: Any])
        #expect(info["alertBody"] as? String == "Changed")
        #expect(info["shouldSendContentAvailable"] as? Bool == true)
        #expect(results[1]["subscriptionID"] as? String == "z1")
        #expect(results[1]["subscriptionType"] as? String == "zone")
        #expect((results[1]["zoneID"] as? [String: Any])?["zoneName"] as? String == "Notes")

        let list = try await server.get(server.url("private", "subscriptions/list"))
        #expect(list.status == 200)
        let listed = (list.json["subscriptions"] as? [[String: Any]] ?? []).compactMap { $0["subscriptionID"] as? String }
        #expect(listed == ["new-notes", "z1"])

        let lookup = try await server.post(
            server.url("private", "subscriptions/lookup"), ["subscriptions": [["subscriptionID": "z1"], ["subscriptionID": "nope"]]])
        let found = try #require(lookup.json["subscriptions"] as? [[String: Any]])
        #expect(found.count == 2)
        #expect(found[0]["subscriptionType"] as? String == "zone")
        #expect(found[1]["subscriptionID"] as? String == "nope")
        #expect(found[1]["serverErrorCode"] as? String == "NOT_FOUND")
        #expect(found[1]["uuid"] is String && found[1]["reason"] is String)

        // Update changes the events; delete answers {subscriptionID, deleted}.
        var updated = Self.querySubscription
        updated["firesOn"] = ["delete"]
        updated["firesOnce"] = true
        let modify = try await server.post(
            server.url("private", "subscriptions/modify"),
            ["operations": [Self.operation("update", updated), Self.operation("delete", ["subscriptionID": "z1"])]])
        let modified = try #require(modify.json["subscriptions"] as? [[String: Any]])
        #expect(modified[0]["firesOn"] as? [String] == ["delete"])
        #expect(modified[0]["firesOnce"] as? Bool == true)
        #expect(modified[1]["subscriptionID"] as? String == "z1")
        #expect(modified[1]["deleted"] as? Bool == true)
        let after = try await server.get(server.url("private", "subscriptions/list"))
        #expect((after.json["subscriptions"] as? [[String: Any]])?.compactMap { $0["subscriptionID"] as? String } == ["new-notes"])
        // Subscriptions are their user's: bob sees none of alice's.
        let bob = try await server.get(server.url("private", "subscriptions/list", user: "bob"))
        #expect((bob.json["subscriptions"] as? [[String: Any]])?.isEmpty == true)
    }

    @Test func perOperationErrorsComeInOrder() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        _ = try await server.post(
            server.url("public", "subscriptions/modify"), ["operations": [Self.operation("create", Self.querySubscription)]])
        let reply = try await server.post(
            server.url("public", "subscriptions/modify"),
            [
                "operations": [
                    Self.operation("create", Self.querySubscription),  // exists
                    Self.operation("update", ["subscriptionID": "missing", "subscriptionType": "zone"]),  // not found
                    // FogKit allows no zone subscription in the public database.
                    Self.operation("create", ["subscriptionID": "z", "subscriptionType": "zone"]),
                    Self.operation("create", ["subscriptionID": "bad", "subscriptionType": "sometimes"]),
                    Self.operation("delete", ["subscriptionID": "new-notes"]),
                ]
            ])
        #expect(reply.status == 200)
        let results = try #require(reply.json["subscriptions"] as? [[String: Any]])
        #expect(results.count == 5)
        #expect(results.map { $0["subscriptionID"] as? String } == ["new-notes", "missing", "z", "bad", "new-notes"])
        #expect(results[0]["serverErrorCode"] as? String == "EXISTS")
        #expect(results[1]["serverErrorCode"] as? String == "NOT_FOUND")
        #expect(results[2]["serverErrorCode"] as? String == "BAD_REQUEST")
        #expect(results[3]["serverErrorCode"] as? String == "BAD_REQUEST")
        #expect(results[4]["deleted"] as? Bool == true)
        for failed in results.prefix(4) { #expect(failed["uuid"] is String && failed["reason"] is String) }
    }

    @Test func anonymousCallersHaveNoSubscriptions() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let modify = try await server.post(
            server.url("public", "subscriptions/modify", user: nil), ["operations": [Self.operation("create", Self.querySubscription)]])
        #expect(modify.status == 421)
        #expect(modify.json["serverErrorCode"] as? String == "AUTHENTICATION_REQUIRED")
        let list = try await server.get(server.url("public", "subscriptions/list", user: nil))
        #expect(list.status == 421)
    }
}
