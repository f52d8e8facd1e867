import FogKit
import FogKitTesting
import Foundation
import Testing

/// `zones/*`, `changes/database` and `changes/zone` over HTTP.
@Suite struct ZoneAndChangeEndpointTests {
    @Test func zonesAreCreatedListedLookedUpAndDeleted() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let created = try await server.post(
            server.url("private", "zones/modify"),
            ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "Notes"]]]]])
        #expect(created.status == 200)
        let zone = try #require((created.json["zones"] as? [[String: Any]])?.first)
        let id = try #require(zone["zoneID"] as? [String: Any])
        #expect(id["zoneName"] as? String == "Notes")
        #expect(id["zoneType"] as? String == "REGULAR_CUSTOM_ZONE")
        #expect((id["ownerRecordName"] as? String)?.hasPrefix("_") == true)
        #expect(Data(base64Encoded: try #require(zone["syncToken"] as? String)) != nil)
        #expect(zone["atomic"] as? Bool == true)

        let list = try await server.get(server.url("private", "zones/list"))
        let names = (list.json["zones"] as? [[String: Any]])?.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
        #expect(names?.sorted() == ["Notes", "_defaultZone"])

        let lookup = try await server.post(
            server.url("private", "zones/lookup"), ["zones": [["zoneName": "Notes"], ["zoneName": "Missing"]]])
        let found = try #require(lookup.json["zones"] as? [[String: Any]])
        #expect(found.count == 2)
        #expect(found[0]["serverErrorCode"] == nil)
        #expect(found[1]["serverErrorCode"] as? String == "ZONE_NOT_FOUND")
        #expect((found[1]["zoneID"] as? [String: Any])?["zoneName"] as? String == "Missing")

        let deleted = try await server.post(
            server.url("private", "zones/modify"),
            ["operations": [["operationType": "delete", "zone": ["zoneID": ["zoneName": "Notes"]]]]])
        let result = try #require((deleted.json["zones"] as? [[String: Any]])?.first)
        #expect(result["deleted"] as? Bool == true)
        #expect((result["zoneID"] as? [String: Any])?["zoneName"] as? String == "Notes")
    }

    @Test func bobNeverSeesAlicesPrivateZones() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        _ = try await server.post(
            server.url("private", "zones/modify"),
            ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "Secret"]]]]])
        let list = try await server.get(server.url("private", "zones/list", user: "bob"))
        let names = (list.json["zones"] as? [[String: Any]])?.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
        #expect(names == ["_defaultZone"])
    }

    @Test func zoneChangeFeedLoopsWithMoreComingAndReportsTombstones() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let container = try Container(identifier: ServerHarness.container, directory: server.directory.url, user: "alice")
        defer { container.close() }
        let database = container.privateCloudDatabase
        let zone = try await database.save(RecordZone(zoneName: "Notes"))
        var records: [Record] = []
        for i in 0..<5 {
            let note = Record(recordType: "Note", recordID: Record.ID(recordName: "N-\(i)", zoneID: zone.zoneID))
            note["title"] = "Note \(i)"
            records.append(note)
        }
        _ = try await database.modifyRecords(saving: records, deleting: [])
        try await database.deleteRecord(withID: records[4].recordID)
        // N-0 changes last, so the feed (in commit order) gives it last.
        let first = try await database.record(for: records[0].recordID)
        first["title"] = "Note 0, edited"
        _ = try await database.save(first)

        var token: String?
        var seen: [String] = []
        var deleted: [String] = []
        var loops = 0
        while loops < 10 {
            var zoneRequest: [String: Any] = ["zoneID": ["zoneName": "Notes", "zoneType": "REGULAR_CUSTOM_ZONE"]]
            if let token { zoneRequest["syncToken"] = token }
            let reply = try await server.post(server.url("private", "changes/zone"), ["zones": [zoneRequest], "resultsLimit": 2])
            #expect(reply.status == 200)
            let page = try #require((reply.json["zones"] as? [[String: Any]])?.first)
            for record in page["records"] as? [[String: Any]] ?? [] {
                if record["deleted"] as? Bool == true {
                    deleted.append(record["recordName"] as! String)
                } else {
                    seen.append(record["recordName"] as! String)
                }
            }
            token = try #require(page["syncToken"] as? String)
            #expect(Data(base64Encoded: token!) != nil)
            loops += 1
            if page["moreComing"] as? Bool != true { break }
        }
        #expect(loops >= 2)
        #expect(seen == ["N-1", "N-2", "N-3", "N-0"])
        #expect(deleted == ["N-4"])

        // The same token again: nothing new, a usable token.
        let again = try await server.post(
            server.url("private", "changes/zone"), ["zones": [["zoneID": ["zoneName": "Notes"], "syncToken": token!]]])
        let page = try #require((again.json["zones"] as? [[String: Any]])?.first)
        #expect((page["records"] as? [Any])?.isEmpty == true)
        #expect(page["moreComing"] as? Bool == false)

        // A missing zone is an item error, not a failed request.
        let missing = try await server.post(server.url("private", "changes/zone"), ["zones": [["zoneID": ["zoneName": "Gone"]]]])
        #expect(missing.status == 200)
        #expect((missing.json["zones"] as? [[String: Any]])?.first?["serverErrorCode"] as? String == "ZONE_NOT_FOUND")
    }

    @Test func databaseChangesReportCreatedAndDeletedZones() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let first = try await server.post(server.url("private", "changes/database"), [:])
        #expect(first.status == 200)
        let token = try #require(first.json["syncToken"] as? String)
        _ = try await server.post(
            server.url("private", "zones/modify"),
            [
                "operations": [
                    ["operationType": "create", "zone": ["zoneID": ["zoneName": "A"]]],
                    ["operationType": "create", "zone": ["zoneID": ["zoneName": "B"]]],
                ]
            ])
        _ = try await server.post(
            server.url("private", "zones/modify"), ["operations": [["operationType": "delete", "zone": ["zoneID": ["zoneName": "B"]]]]])
        let next = try await server.post(server.url("private", "changes/database"), ["syncToken": token])
        let zones = try #require(next.json["zones"] as? [[String: Any]])
        let changed = zones.filter { $0["deleted"] == nil }.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
        let gone = zones.filter { $0["deleted"] as? Bool == true }.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }
        #expect(changed == ["A"])
        #expect(gone == ["B"])
        #expect(next.json["moreComing"] as? Bool == false)
        let legacy = try await server.post(server.url("private", "zones/changes"), ["syncToken": token])
        #expect(legacy.json["metaSyncToken"] is String)
    }
}
