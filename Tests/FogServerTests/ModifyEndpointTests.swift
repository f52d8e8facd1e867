import FogKit
import FogKitTesting
import Foundation
import Testing

/// `records/modify` over HTTP: the seven operation types, `atomic`, request order, the
/// per-item errors real clients decode.
@Suite struct ModifyEndpointTests {
    static func zone(_ server: ServerHarness, _ name: String = "Notes") async throws {
        let reply = try await server.post(
            server.url("private", "zones/modify"), ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": name]]]]])
        #expect(reply.status == 200)
    }

    static func modify(
        _ server: ServerHarness, _ operations: [[String: Any]], atomic: Bool, zone: String = "Notes", user: String = "alice"
    ) async throws
        -> ServerHarness.Reply
    {
        try await server.post(
            server.url(zone == "_defaultZone" ? "public" : "private", "records/modify", user: user),
            ["zoneID": ["zoneName": zone], "atomic": atomic, "operations": operations])
    }

    static func lookup(_ server: ServerHarness, _ names: [String]) async throws -> [[String: Any]] {
        try await server.post(
            server.url("private", "records/lookup"), ["zoneID": ["zoneName": "Notes"], "records": names.map { ["recordName": $0] }]
        ).records
    }

    static func fields(_ record: [String: Any]) -> [String: [String: Any]] { record["fields"] as? [String: [String: Any]] ?? [:] }

    @Test func allSevenOperationTypesAnswerInRequestOrder() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        try await Self.zone(server)
        let created = try await Self.modify(
            server,
            [
                [
                    "operationType": "create",
                    "record": ["recordType": "Note", "recordName": "a", "fields": ["title": ["value": "A"], "n": ["value": 1]]],
                ],
                ["operationType": "create", "record": ["recordType": "Note", "recordName": "b", "fields": ["title": ["value": "B"]]]],
                ["operationType": "create", "record": ["recordType": "Note", "recordName": "c", "fields": ["title": ["value": "C"]]]],
                ["operationType": "create", "record": ["recordType": "Note", "fields": ["title": ["value": "unnamed"]]]],
            ], atomic: true)
        #expect(created.status == 200)
        let records = created.records
        #expect(records.map { $0["recordName"] as? String }.prefix(3) == ["a", "b", "c"])
        #expect(UUID(uuidString: records[3]["recordName"] as? String ?? "") != nil)
        let tags = records.map { $0["recordChangeTag"] as? String ?? "" }

        let mixed = try await Self.modify(
            server,
            [
                [
                    "operationType": "update",
                    "record": ["recordName": "a", "recordChangeTag": tags[0], "fields": ["title": ["value": "A2"]]],
                ],
                [
                    "operationType": "replace",
                    "record": ["recordName": "b", "recordChangeTag": tags[1], "recordType": "Note", "fields": ["body": ["value": "only"]]],
                ],
                ["operationType": "delete", "record": ["recordName": "c", "recordChangeTag": tags[2]]],
                [
                    "operationType": "forceUpdate",
                    "record": ["recordType": "Note", "recordName": "d", "fields": ["title": ["value": "D"]]],
                ],
                [
                    "operationType": "forceReplace",
                    "record": ["recordType": "Note", "recordName": "e", "fields": ["title": ["value": "E"]]],
                ],
                ["operationType": "forceDelete", "record": ["recordName": records[3]["recordName"] as! String]],
            ], atomic: false)
        #expect(mixed.status == 200)
        let results = mixed.records
        #expect(results.map { $0["recordName"] as? String } == ["a", "b", "c", "d", "e", records[3]["recordName"] as? String])
        #expect(results.allSatisfy { $0["serverErrorCode"] == nil }, "\(mixed.text)")
        // update kept the unsent field; replace dropped it.
        #expect(Self.fields(results[0])["title"]?["value"] as? String == "A2")
        #expect(Self.fields(results[0])["n"]?["value"] as? Int == 1)
        #expect(Self.fields(results[1]).keys.sorted() == ["body"])
        // Deletes answer {recordName, deleted: true, zoneID}.
        #expect(results[2]["deleted"] as? Bool == true)
        #expect((results[2]["zoneID"] as? [String: Any])?["zoneName"] as? String == "Notes")
        #expect(results[5]["deleted"] as? Bool == true)
        let after = try await Self.lookup(server, ["c", "d", "e"])
        #expect(after[0]["serverErrorCode"] as? String == "NOT_FOUND")
        #expect(after[1]["recordType"] as? String == "Note")
    }

    @Test func anEmptyFieldDictionaryClearsTheField() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        try await Self.zone(server)
        let created = try await Self.modify(
            server,
            [
                [
                    "operationType": "create",
                    "record": ["recordType": "Note", "recordName": "a", "fields": ["title": ["value": "A"], "archived": ["value": 1]]],
                ]
            ],
            atomic: true)
        let tag = try #require(created.records.first?["recordChangeTag"] as? String)
        let updated = try await Self.modify(
            server,
            [
                [
                    "operationType": "update",
                    "record": [
                        "recordName": "a", "recordChangeTag": tag, "fields": ["title": ["value": "A2"], "archived": [:] as [String: Any]],
                    ],
                ]
            ],
            atomic: true)
        #expect(updated.records.first?["serverErrorCode"] == nil, "\(updated.text)")
        let stored = try await Self.lookup(server, ["a"])
        #expect(Self.fields(stored[0]).keys.sorted() == ["title"])
    }

    @Test func anAtomicBatchWithAConflictWritesNothing() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        try await Self.zone(server)
        let created = try await Self.modify(
            server,
            [["operationType": "create", "record": ["recordType": "Note", "recordName": "a", "fields": ["title": ["value": "A"]]]]],
            atomic: true)
        let tag = try #require(created.records.first?["recordChangeTag"] as? String)
        _ = try await Self.modify(
            server,
            [["operationType": "update", "record": ["recordName": "a", "recordChangeTag": tag, "fields": ["title": ["value": "newer"]]]]],
            atomic: true)
        let batch = try await Self.modify(
            server,
            [
                ["operationType": "create", "record": ["recordType": "Note", "recordName": "x", "fields": ["title": ["value": "X"]]]],
                [
                    "operationType": "update",
                    "record": ["recordName": "a", "recordChangeTag": tag, "fields": ["title": ["value": "stale"]]],
                ],
                ["operationType": "create", "record": ["recordType": "Note", "recordName": "y", "fields": ["title": ["value": "Y"]]]],
            ], atomic: true)
        #expect(batch.status == 200)
        let results = batch.records
        #expect(results.map { $0["serverErrorCode"] as? String } == ["ATOMIC_ERROR", "CONFLICT", "ATOMIC_ERROR"])
        #expect(results.map { $0["recordName"] as? String } == ["x", "a", "y"])
        #expect(results.allSatisfy { $0["reason"] is String && $0["uuid"] is String })
        let stored = try await Self.lookup(server, ["x", "a", "y"])
        #expect(stored[0]["serverErrorCode"] as? String == "NOT_FOUND")
        #expect(Self.fields(stored[1])["title"]?["value"] as? String == "newer")
        #expect(stored[2]["serverErrorCode"] as? String == "NOT_FOUND")

        // Without atomic the others are written.
        let loose = try await Self.modify(
            server,
            [
                ["operationType": "create", "record": ["recordType": "Note", "recordName": "x", "fields": ["title": ["value": "X"]]]],
                [
                    "operationType": "update",
                    "record": ["recordName": "a", "recordChangeTag": tag, "fields": ["title": ["value": "stale"]]],
                ],
            ], atomic: false)
        #expect(loose.records.map { $0["serverErrorCode"] as? String } == [nil, "CONFLICT"])
    }

    @Test func createOfAnExistingRecordIsExistsAndMalformedOperationsAreBadRequests() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        try await Self.zone(server)
        _ = try await Self.modify(
            server, [["operationType": "create", "record": ["recordType": "Note", "recordName": "a"]]], atomic: true)
        let again = try await Self.modify(
            server, [["operationType": "create", "record": ["recordType": "Note", "recordName": "a"]]], atomic: true)
        #expect(again.records.first?["serverErrorCode"] as? String == "EXISTS")
        let bad = try await Self.modify(
            server,
            [
                ["operationType": "update", "record": ["recordName": "a", "fields": ["title": ["value": "no tag"]]]],
                ["operationType": "explode", "record": ["recordName": "a"]],
                [
                    "operationType": "create",
                    "record": ["recordType": "Note", "recordName": "b", "fields": ["n": ["value": "x", "type": "INT64"]]],
                ],
            ], atomic: false)
        #expect(bad.status == 200)
        #expect(bad.records.map { $0["serverErrorCode"] as? String } == ["BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST"], "\(bad.text)")
        #expect(try await Self.lookup(server, ["b"]).first?["serverErrorCode"] as? String == "NOT_FOUND")
        let empty = try await server.post(server.url("private", "records/modify"), ["operations": []])
        #expect(empty.status == 400)
        let tooMany = try await server.post(
            server.url("private", "records/modify"),
            ["operations": (0..<201).map { ["operationType": "create", "record": ["recordType": "Note", "recordName": "r\($0)"]] }])
        #expect(tooMany.status == 400)
    }

    @Test func writesNeedAUserAndTheAccessPolicyHolds() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let operations: [[String: Any]] = [
            ["operationType": "create", "record": ["recordType": "Post", "recordName": "p", "fields": ["caption": ["value": "hi"]]]]
        ]
        let anonymous = try await server.post(
            server.url("public", "records/modify", user: nil), ["operations": operations])
        #expect(anonymous.status == 421)
        #expect(anonymous.json["serverErrorCode"] as? String == "AUTHENTICATION_REQUIRED")
        let created = try await Self.modify(server, operations, atomic: false, zone: "_defaultZone")
        let tag = try #require(created.records.first?["recordChangeTag"] as? String)
        // Bob may read alice's public post but not change it.
        let bob = try await Self.modify(
            server,
            [
                [
                    "operationType": "update",
                    "record": ["recordName": "p", "recordChangeTag": tag, "fields": ["caption": ["value": "mine"]]],
                ]
            ],
            atomic: false, zone: "_defaultZone", user: "bob")
        #expect(bob.records.first?["serverErrorCode"] as? String == "ACCESS_DENIED", "\(bob.text)")
        let read = try await server.post(server.url("public", "records/lookup", user: "bob"), ["records": [["recordName": "p"]]])
        #expect(Self.fields(read.records[0])["caption"]?["value"] as? String == "hi")
    }
}
