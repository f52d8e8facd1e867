import FogKit
import FogKitTesting
import Foundation
import Testing

/// `records/resolve` and `records/accept` over HTTP, and the shared database they open.
@Suite struct ShareEndpointTests {
    @Test func bobResolvesAcceptsAndReadsAlicesSharedZone() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let alice = try Container(identifier: ServerHarness.container, directory: server.directory.url, user: "alice")
        defer { alice.close() }
        let zone = try await alice.privateCloudDatabase.save(RecordZone(zoneName: "Trip"))
        let root = Record(recordType: "Trip", recordID: Record.ID(recordName: "trip", zoneID: zone.zoneID))
        root["title"] = "Lisbon"
        let share = Share(rootRecord: root)
        share.publicPermission = .readOnly
        let saved = try await alice.privateCloudDatabase.modifyRecords(saving: [root, share], deleting: [])
        let savedShare = try #require(try saved.saveResults[share.recordID]?.get() as? Share)
        let url = try #require(savedShare.url)

        // The share record's JSON carries its short GUID.
        let lookup = try await server.post(
            server.url("private", "records/lookup"),
            ["zoneID": ["zoneName": "Trip"], "records": [["recordName": share.recordID.recordName]]])
        let guid = try #require(lookup.records.first?["shortGUID"] as? String)
        #expect(!guid.contains("=") && !guid.contains("/") && !guid.contains("+"))
        _ = url

        let resolved = try await server.post(
            server.url("public", "records/resolve", user: "bob"), ["shortGUIDs": [["value": guid, "shouldFetchRootRecord": true]]])
        #expect(resolved.status == 200)
        let result = try #require((resolved.json["results"] as? [[String: Any]])?.first)
        #expect(result["serverErrorCode"] == nil, "\(result)")
        #expect(result["rootRecordName"] as? String == "trip")
        #expect(((result["rootRecord"] as? [String: Any])?["fields"] as? [String: Any])?["title"] != nil)
        #expect(result["participantPermission"] as? String == "READ_ONLY")

        // Before accepting, bob's shared database has no zone of alice's.
        let before = try await server.get(server.url("shared", "zones/list", user: "bob"))
        #expect((before.json["zones"] as? [Any])?.isEmpty == true)
        let accepted = try await server.post(server.url("public", "records/accept", user: "bob"), ["shortGUIDs": [guid]])
        #expect((accepted.json["results"] as? [[String: Any]])?.first?["serverErrorCode"] == nil, "\(accepted.text)")
        let after = try await server.get(server.url("shared", "zones/list", user: "bob"))
        let zones = try #require(after.json["zones"] as? [[String: Any]])
        let zoneID = try #require(zones.first?["zoneID"] as? [String: Any])
        #expect(zoneID["zoneName"] as? String == "Trip")
        let owner = try #require(zoneID["ownerRecordName"] as? String)

        // Bob reads the record in the shared database, and may not change it (read-only).
        let read = try await server.post(
            server.url("shared", "records/lookup", user: "bob"),
            ["zoneID": ["zoneName": "Trip", "ownerRecordName": owner], "records": [["recordName": "trip"]]])
        #expect(read.records.first?["recordType"] as? String == "Trip", "\(read.text)")

        // A link that is not a share's.
        let bogus = try await server.post(server.url("public", "records/resolve", user: "bob"), ["shortGUIDs": [["value": "AAAA"]]])
        #expect((bogus.json["results"] as? [[String: Any]])?.first?["serverErrorCode"] as? String == "NOT_FOUND")
    }
}
