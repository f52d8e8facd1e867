import FogKit
import FogKitTesting
import Foundation
import Testing

/// `records/query` and `records/lookup` over HTTP, with the JSON shapes real clients need.
@Suite struct RecordEndpointTests {
    /// Saves `count` notes in alice's public database through the Swift API.
    static func seed(_ server: ServerHarness, count: Int) async throws -> Container {
        let container = try Container(identifier: ServerHarness.container, directory: server.directory.url, user: "alice")
        var records: [Record] = []
        for i in 0..<count {
            let note = Record(recordType: "Note", recordID: Record.ID(recordName: "N-\(i)"))
            note["title"] = "Note \(i)"
            note["score"] = i
            note["ratio"] = Double(i) / 2
            note["due"] = Date(timeIntervalSince1970: 1_767_000_000 + Double(i))
            note["blob"] = Data([UInt8(i), 1, 2])
            note["tags"] = ["work", "t\(i)"]
            note["where"] = Location(latitude: 52.37, longitude: 4.89)
            if i > 0 { note["previous"] = Record.Reference(recordID: Record.ID(recordName: "N-\(i - 1)"), action: .none) }
            records.append(note)
        }
        _ = try await container.publicCloudDatabase.modifyRecords(saving: records, deleting: [])
        return container
    }

    @Test func queryAnswersTypedFieldsAndSystemKeys() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let container = try await Self.seed(server, count: 3)
        defer { container.close() }
        let reply = try await server.post(
            server.url("public", "records/query", user: nil),
            [
                "query": [
                    "recordType": "Note",
                    "filterBy": [
                        ["fieldName": "score", "comparator": "GREATER_THAN_OR_EQUALS", "fieldValue": ["value": 1, "type": "INT64"]]
                    ],
                    "sortBy": [["fieldName": "score", "ascending": false]],
                ]
            ])
        #expect(reply.status == 200)
        let records = reply.records
        #expect(records.map { $0["recordName"] as? String } == ["N-2", "N-1"])
        let note = try #require(records.first)
        let fields = try #require(note["fields"] as? [String: [String: Any]])
        #expect(fields["title"]?["type"] as? String == "STRING")
        #expect(fields["score"]?["type"] as? String == "INT64")
        #expect(fields["score"]?["value"] as? Int == 2)
        #expect(fields["ratio"]?["type"] as? String == "DOUBLE")
        #expect(fields["due"]?["type"] as? String == "TIMESTAMP")
        #expect(fields["due"]?["value"] as? Int == 1_767_000_002_000)
        #expect(fields["blob"]?["type"] as? String == "BYTES")
        #expect(fields["blob"]?["value"] as? String == Data([2, 1, 2]).base64EncodedString())
        #expect(fields["tags"]?["type"] as? String == "STRING_LIST")
        #expect(fields["tags"]?["value"] as? [String] == ["work", "t2"])
        #expect(fields["where"]?["type"] as? String == "LOCATION")
        #expect((fields["where"]?["value"] as? [String: Any])?["latitude"] as? Double == 52.37)
        #expect(fields["previous"]?["type"] as? String == "REFERENCE")
        #expect((fields["previous"]?["value"] as? [String: Any])?["recordName"] as? String == "N-1")
        #expect(note["recordChangeTag"] is String)
        #expect(note["deleted"] as? Bool == false)
        for key in ["created", "modified"] {
            let stamp = try #require(note[key] as? [String: Any])
            #expect(stamp["timestamp"] is Int)
            #expect((stamp["userRecordName"] as? String)?.hasPrefix("_") == true)
            #expect(stamp["deviceID"] is String)
        }
        let zone = try #require(note["zoneID"] as? [String: Any])
        #expect(zone["zoneName"] as? String == "_defaultZone")
        #expect(zone["zoneType"] as? String == "DEFAULT_ZONE")
        #expect(zone["ownerRecordName"] as? String == "_defaultOwner")
    }

    @Test func pagesWithBase64ContinuationMarkers() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let container = try await Self.seed(server, count: 5)
        defer { container.close() }
        var names: [String] = []
        var marker: String?
        var pages = 0
        repeat {
            var body: [String: Any] = [
                "query": ["recordType": "Note", "sortBy": [["fieldName": "score"]], "filterBy": []], "resultsLimit": 2,
                "zoneWide": false, "desiredKeys": ["title"],
            ]
            if let marker { body["continuationMarker"] = marker }
            let reply = try await server.post(server.url("public", "records/query"), body)
            #expect(reply.status == 200)
            names += reply.records.compactMap { $0["recordName"] as? String }
            for record in reply.records { #expect((record["fields"] as? [String: Any])?.keys.sorted() == ["title"]) }
            marker = reply.json["continuationMarker"] as? String
            if let marker { #expect(Data(base64Encoded: marker) != nil) }
            pages += 1
        } while marker != nil && pages < 10
        #expect(names == ["N-0", "N-1", "N-2", "N-3", "N-4"])
        #expect(pages == 3)
        let bad = try await server.post(
            server.url("public", "records/query"), ["query": ["recordType": "Note"], "continuationMarker": "not-a-marker"])
        #expect(bad.status == 400)
        #expect(bad.json["serverErrorCode"] as? String == "BAD_REQUEST")
    }

    @Test func comparatorsTranslateToFogKitPredicates() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let container = try await Self.seed(server, count: 4)
        defer { container.close() }
        func names(_ filter: [String: Any]) async throws -> [String] {
            let reply = try await server.post(
                server.url("public", "records/query"),
                ["query": ["recordType": "Note", "filterBy": [filter], "sortBy": [["fieldName": "score"]]]])
            #expect(reply.status == 200, "\(filter): \(reply.text)")
            return reply.records.compactMap { $0["recordName"] as? String }
        }
        #expect(try await names(["fieldName": "title", "comparator": "EQUALS", "fieldValue": ["value": "Note 1"]]) == ["N-1"])
        #expect(
            try await names(["fieldName": "score", "comparator": "IN", "fieldValue": ["value": [0, 3], "type": "INT64_LIST"]]) == [
                "N-0", "N-3",
            ])
        #expect(try await names(["fieldName": "score", "comparator": "NOT_IN", "fieldValue": ["value": [0, 3]]]) == ["N-1", "N-2"])
        #expect(try await names(["fieldName": "title", "comparator": "BEGINS_WITH", "fieldValue": ["value": "Note"]]).count == 4)
        #expect(try await names(["fieldName": "tags", "comparator": "LIST_CONTAINS", "fieldValue": ["value": "t2"]]) == ["N-2"])
        #expect(
            try await names([
                "fieldName": "tags", "comparator": "LIST_CONTAINS_ANY", "fieldValue": ["value": ["t1", "t3"], "type": "STRING_LIST"],
            ])
                == ["N-1", "N-3"])
        #expect(
            try await names(["systemFieldName": "recordName", "comparator": "EQUALS", "fieldValue": ["value": "N-2", "type": "STRING"]])
                == ["N-2"])
        #expect(
            try await names([
                "fieldName": "where", "comparator": "NEAR", "distance": 1000,
                "fieldValue": ["value": ["latitude": 52.371, "longitude": 4.891], "type": "LOCATION"],
            ]).count == 4)
        let unknown = try await server.post(
            server.url("public", "records/query"),
            ["query": ["recordType": "Note", "filterBy": [["fieldName": "title", "comparator": "LIKE", "fieldValue": ["value": "x"]]]]])
        #expect(unknown.status == 400)
        #expect((unknown.json["reason"] as? String)?.contains("LIKE") == true)
    }

    @Test func lookupAnswersInRequestOrderWithNotFoundItems() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let container = try await Self.seed(server, count: 2)
        defer { container.close() }
        let reply = try await server.post(
            server.url("public", "records/lookup", user: nil),
            [
                "records": [["recordName": "N-1"], ["recordName": "missing"], ["recordName": "N-0", "desiredKeys": ["score"]]],
                "numbersAsStrings": true,
            ])
        #expect(reply.status == 200)
        let records = reply.records
        #expect(records.count == 3)
        #expect(records[0]["recordName"] as? String == "N-1")
        #expect(((records[0]["fields"] as? [String: Any])?["score"] as? [String: Any])?["value"] as? String == "1")
        #expect(records[1]["recordName"] as? String == "missing")
        #expect(records[1]["serverErrorCode"] as? String == "NOT_FOUND")
        #expect(records[1]["reason"] is String)
        #expect(records[1]["uuid"] is String)
        #expect((records[2]["fields"] as? [String: Any])?.keys.sorted() == ["score"])
    }

    @Test func malformedBodiesAreBadRequestsAndChangeNothing() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        for body in ["{", "[]", "{\"query\": 3}", "{\"records\": [{\"recordName\": 5}]}", String(repeating: "x", count: 10)] {
            for endpoint in ["records/query", "records/lookup"] {
                let reply = try await server.send("POST", server.url("public", endpoint), body: Data(body.utf8))
                #expect(reply.status == 400, "\(endpoint) \(body)")
                #expect(reply.json["serverErrorCode"] as? String == "BAD_REQUEST")
                #expect(reply.json["reason"] is String)
            }
        }
        let huge = Data(repeating: UInt8(ascii: " "), count: 5 << 20)
        let reply = try await server.send("POST", server.url("public", "records/query"), body: huge)
        #expect(reply.status == 400)
        #expect(reply.json["serverErrorCode"] as? String == "BAD_REQUEST")
    }

    @Test func getsWithAJSONContentTypeAndNoBodyAreAccepted() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let reply = try await server.send(
            "GET", server.url("private", "zones/list"), headers: ["Content-Type": "application/json; charset=utf-8"])
        #expect(reply.status == 200)
        #expect((reply.json["zones"] as? [[String: Any]])?.isEmpty == false)
    }
}
