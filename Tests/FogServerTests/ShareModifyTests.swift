import FogKit
import FogKitTesting
import Foundation
import Testing

/// Shares made, changed and deleted through `records/modify`, over real HTTP, with the
/// participant's side through `records/resolve`, `records/accept` and the shared database.
@Suite struct ShareModifyTests {
    static var trip: [String: Any] { ["zoneName": "Trip"] }

    static func modify(
        _ server: ServerHarness, _ operations: [[String: Any]], database: String = "private", user: String = "alice",
        zone: [String: Any] = trip
    ) async throws -> ServerHarness.Reply {
        try await server.post(server.url(database, "records/modify", user: user), ["zoneID": zone, "operations": operations])
    }

    static func participant(_ lookup: [String: Any], _ permission: String) -> [String: Any] {
        ["type": "USER", "permission": permission, "acceptanceStatus": "INVITED", "userIdentity": ["lookupInfo": lookup]]
    }

    /// Alice's zone "Trip" with the root record "trip".
    static func tripWithRoot(_ server: ServerHarness) async throws -> [String: Any] {
        let zone = try await server.post(
            server.url("private", "zones/modify"), ["operations": [["operationType": "create", "zone": ["zoneID": trip]]]])
        #expect(zone.status == 200)
        let root = try await modify(
            server,
            [
                [
                    "operationType": "create",
                    "record": ["recordName": "trip", "recordType": "Trip", "fields": ["title": ["value": "Lisbon"]]],
                ]
            ])
        return try #require(root.records.first, "\(root.text)")
    }

    @Test func ownerSharesParticipantAcceptsReadsIsRefusedWritingAndLosesAccessWhenTheShareIsDeleted() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let root = try await Self.tripWithRoot(server)
        let tag = try #require(root["recordChangeTag"] as? String)

        // Alice shares the root with bob, found by email, read-only (CloudKit JS's spelling of the type).
        let created = try await Self.modify(
            server,
            [
                [
                    "operationType": "create",
                    "record": [
                        "recordName": "trip-share", "recordType": "cloudKit.share",
                        "fields": ["cloudkit.share.title": ["value": "Lisbon trip"]],
                        "forRecord": ["recordName": "trip", "recordChangeTag": tag], "publicPermission": "NONE",
                        "participants": [Self.participant(["emailAddress": "bob@example.com"], "READ_ONLY")],
                    ],
                ]
            ])
        #expect(created.status == 200)
        let share = try #require(created.records.first)
        #expect(share["serverErrorCode"] == nil, "\(created.text)")
        #expect(share["recordType"] as? String == "cloudkit.share")
        #expect(share["publicPermission"] as? String == "NONE")
        let guid = try #require(share["shortGUID"] as? String)
        let owner = try #require(share["owner"] as? [String: Any])
        #expect(owner["type"] as? String == "OWNER")
        #expect(owner["acceptanceStatus"] as? String == "ACCEPTED")
        let participants = try #require(share["participants"] as? [[String: Any]])
        #expect(participants.count == 2)
        let bob = try #require(participants.first { $0["type"] as? String == "USER" })
        #expect(bob["permission"] as? String == "READ_ONLY")
        #expect(bob["acceptanceStatus"] as? String == "INVITED")
        #expect(((bob["userIdentity"] as? [String: Any])?["lookupInfo"] as? [String: Any])?["emailAddress"] as? String == "bob@example.com")
        #expect((share["currentUserParticipant"] as? [String: Any])?["type"] as? String == "OWNER")
        #expect((share["fields"] as? [String: Any])?["cloudkit.share.title"] != nil)

        // The root now names its share.
        let lookup = try await server.post(
            server.url("private", "records/lookup"), ["zoneID": Self.trip, "records": [["recordName": "trip"]]])
        let rootShare = try #require(lookup.records.first?["share"] as? [String: Any], "\(lookup.text)")
        #expect(rootShare["recordName"] as? String == "trip-share")
        #expect((rootShare["zoneID"] as? [String: Any])?["zoneName"] as? String == "Trip")

        // Bob resolves and accepts, then reads the root through the shared database.
        let resolved = try await server.post(server.url("public", "records/resolve", user: "bob"), ["shortGUIDs": [["value": guid]]])
        let result = try #require((resolved.json["results"] as? [[String: Any]])?.first)
        #expect(result["participantStatus"] as? String == "INVITED", "\(resolved.text)")
        #expect(result["participantPermission"] as? String == "READ_ONLY")
        let accepted = try await server.post(server.url("public", "records/accept", user: "bob"), ["shortGUIDs": [guid]])
        #expect((accepted.json["results"] as? [[String: Any]])?.first?["participantStatus"] as? String == "ACCEPTED", "\(accepted.text)")
        let ownerName = try #require((owner["userIdentity"] as? [String: Any])?["userRecordName"] as? String)
        let shared: [String: Any] = ["zoneName": "Trip", "ownerRecordName": ownerName]
        let read = try await server.post(
            server.url("shared", "records/lookup", user: "bob"), ["zoneID": shared, "records": [["recordName": "trip"]]])
        #expect(read.records.first?["recordType"] as? String == "Trip", "\(read.text)")

        // Read-only: bob's write is refused with ACCESS_DENIED, and nothing changes.
        let write = try await Self.modify(
            server,
            [
                [
                    "operationType": "forceUpdate",
                    "record": ["recordName": "trip", "recordType": "Trip", "fields": ["title": ["value": "Porto"]]],
                ]
            ],
            database: "shared", user: "bob", zone: shared)
        #expect(write.status == 200)
        #expect(write.records.first?["serverErrorCode"] as? String == "ACCESS_DENIED", "\(write.text)")

        // Alice deletes the share: the root loses it, and bob loses access.
        let deleted = try await Self.modify(server, [["operationType": "forceDelete", "record": ["recordName": "trip-share"]]])
        #expect(deleted.records.first?["deleted"] as? Bool == true, "\(deleted.text)")
        let unshared = try await server.post(
            server.url("private", "records/lookup"), ["zoneID": Self.trip, "records": [["recordName": "trip"]]])
        #expect(unshared.records.first?["share"] == nil, "\(unshared.text)")
        let after = try await server.post(
            server.url("shared", "records/lookup", user: "bob"), ["zoneID": shared, "records": [["recordName": "trip"]]])
        #expect(after.records.first?["recordType"] == nil, "\(after.text)")
        #expect(after.status != 200 || after.records.first?["serverErrorCode"] != nil, "\(after.text)")
    }

    @Test func updateChangesParticipantsFoundByUserRecordName() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        _ = try await Self.tripWithRoot(server)
        let bobName = try #require(
            try await server.get(server.url("public", "users/caller", user: "bob")).json["userRecordName"] as? String)
        let created = try await Self.modify(
            server,
            [
                [
                    "operationType": "create",
                    "record": [
                        "recordName": "s", "recordType": "cloudkit.share", "forRecord": ["recordName": "trip"],
                        "participants": [Self.participant(["userRecordName": bobName], "READ_ONLY")],
                    ],
                ]
            ])
        let share = try #require(created.records.first)
        let guid = try #require(share["shortGUID"] as? String, "\(created.text)")
        _ = try await server.post(server.url("public", "records/accept", user: "bob"), ["shortGUIDs": [guid]])

        // A stale tag is a CONFLICT; the current one makes bob READ_WRITE, still accepted.
        let stale = try await Self.modify(
            server,
            [["operationType": "update", "record": ["recordName": "s", "recordType": "cloudkit.share", "recordChangeTag": "stale"]]])
        #expect(stale.records.first?["serverErrorCode"] as? String == "CONFLICT", "\(stale.text)")
        let lookup = try await server.post(
            server.url("private", "records/lookup"), ["zoneID": Self.trip, "records": [["recordName": "s"]]])
        let tag = try #require(lookup.records.first?["recordChangeTag"] as? String, "\(lookup.text)")
        let updated = try await Self.modify(
            server,
            [
                [
                    "operationType": "update",
                    "record": [
                        "recordName": "s", "recordType": "cloudkit.share", "recordChangeTag": tag,
                        "participants": [Self.participant(["userRecordName": bobName], "READ_WRITE")],
                    ],
                ]
            ])
        let bob = try #require(
            (updated.records.first?["participants"] as? [[String: Any]])?.first { $0["participantId"] as? String == bobName },
            "\(updated.text)")
        #expect(bob["permission"] as? String == "READ_WRITE")
        #expect(bob["acceptanceStatus"] as? String == "ACCEPTED")

        // Now bob's write goes through.
        let ownerName = try #require(try await server.get(server.url("public", "users/caller")).json["userRecordName"] as? String)
        let write = try await Self.modify(
            server,
            [
                [
                    "operationType": "forceUpdate",
                    "record": ["recordName": "trip", "recordType": "Trip", "fields": ["title": ["value": "Porto"]]],
                ]
            ],
            database: "shared", user: "bob", zone: ["zoneName": "Trip", "ownerRecordName": ownerName])
        #expect(write.records.first?["serverErrorCode"] == nil, "\(write.text)")

        // An unknown participant fails the operation with NOT_FOUND, as FogKit's lookup does.
        let unknown = try await Self.modify(
            server,
            [
                [
                    "operationType": "forceUpdate",
                    "record": [
                        "recordName": "s", "recordType": "cloudkit.share",
                        "participants": [Self.participant(["emailAddress": "nobody@example.com"], "READ_ONLY")],
                    ],
                ]
            ])
        #expect(unknown.records.first?["serverErrorCode"] as? String == "NOT_FOUND", "\(unknown.text)")
    }

    @Test func aShareInTheDefaultZoneIsRefusedAsFogKitRefusesIt() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let zone: [String: Any] = ["zoneName": "_defaultZone"]
        _ = try await Self.modify(
            server, [["operationType": "create", "record": ["recordName": "r", "recordType": "Trip"]]], zone: zone)
        let refused = try await Self.modify(
            server,
            [
                [
                    "operationType": "create",
                    "record": ["recordName": "s", "recordType": "cloudkit.share", "forRecord": ["recordName": "r"]],
                ]
            ],
            zone: zone)
        #expect(refused.status == 200)
        // FogKit refuses it with invalidArguments, which the protocol calls BAD_REQUEST.
        #expect(refused.records.first?["serverErrorCode"] as? String == "BAD_REQUEST", "\(refused.text)")
        let root = try await server.post(server.url("private", "records/lookup"), ["records": [["recordName": "r"]]])
        #expect(root.records.first?["share"] == nil)
    }

    @Test func aZoneWideShareSharesTheZone() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        _ = try await Self.tripWithRoot(server)
        let created = try await Self.modify(
            server,
            [
                [
                    "operationType": "create",
                    "record": [
                        "recordName": Share.zoneWideShareRecordName, "recordType": "cloudkit.share",
                        "participants": [Self.participant(["emailAddress": "bob@example.com"], "READ_ONLY")],
                    ],
                ]
            ])
        let share = try #require(created.records.first)
        #expect(share["serverErrorCode"] == nil, "\(created.text)")
        let guid = try #require(share["shortGUID"] as? String)
        let accepted = try await server.post(server.url("public", "records/accept", user: "bob"), ["shortGUIDs": [guid]])
        #expect((accepted.json["results"] as? [[String: Any]])?.first?["serverErrorCode"] == nil, "\(accepted.text)")
        let ownerName = try #require((share["owner"] as? [String: Any])?["participantId"] as? String)
        let read = try await server.post(
            server.url("shared", "records/lookup", user: "bob"),
            ["zoneID": ["zoneName": "Trip", "ownerRecordName": ownerName], "records": [["recordName": "trip"]]])
        #expect(read.records.first?["recordType"] as? String == "Trip", "\(read.text)")
        // A share without forRecord that is not the zone's is refused before FogKit sees it.
        let nameless = try await Self.modify(
            server, [["operationType": "create", "record": ["recordName": "other", "recordType": "cloudkit.share"]]])
        #expect(nameless.records.first?["serverErrorCode"] as? String == "BAD_REQUEST")
    }
}
