import FogKit
import FogKitTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `fog serve` answers a seed app's session the same on an embedded store and on PostgreSQL
/// (issue 21: "serves the seeds' apps with the same results as the LMDB store"): the same
/// schema (`SeedSchema`), the same requests of the photo-sharing seed (posts and comments in the
/// public database, a signed-in writer and anonymous readers), and the same answers once what
/// differs by nature (change tags, times, tokens, user record names, error uuids) is left out.
@Suite(.enabled(if: TestBackend.postgresServer != nil || ProcessInfo.processInfo.environment["CI"] != nil))
struct SeedsOnBothStoresTests {
    /// The requests: (path in the public database, body, signed in).
    static let session: [(path: String, body: String, signedIn: Bool)] = [
        (
            "records/modify",
            #"""
            {"operations":[
              {"operationType":"create","record":{"recordType":"Post","recordName":"p1","fields":{"caption":{"value":"Sunrise over the bay"},"commentCount":{"value":2},"tags":{"value":["sky","swift"]},"timestamp":{"value":1700000000000,"type":"TIMESTAMP"}}}},
              {"operationType":"create","record":{"recordType":"Post","recordName":"p2","fields":{"caption":{"value":"Lunch"},"commentCount":{"value":0},"tags":{"value":["food"]},"timestamp":{"value":1700000100000,"type":"TIMESTAMP"}}}},
              {"operationType":"create","record":{"recordType":"Post","recordName":"p3","fields":{"caption":{"value":"Swift meetup"},"commentCount":{"value":5},"tags":{"value":["swift","talk"]},"timestamp":{"value":1700000200000,"type":"TIMESTAMP"}}}},
              {"operationType":"create","record":{"recordType":"Comment","recordName":"c1","fields":{"post":{"value":{"recordName":"p1","action":"DELETE_SELF"},"type":"REFERENCE"},"text":{"value":"Lovely"},"timestamp":{"value":1700000300000,"type":"TIMESTAMP"}}}}
            ]}
            """#,
            true
        ),
        (
            "records/query",
            #"{"query":{"recordType":"Post","filterBy":[{"comparator":"GREATER_THAN","fieldName":"commentCount","fieldValue":{"value":0,"type":"INT64"}}],"sortBy":[{"fieldName":"commentCount","ascending":false}]}}"#,
            false
        ),
        (
            "records/query",
            #"{"query":{"recordType":"Post","filterBy":[{"comparator":"LIST_CONTAINS","fieldName":"tags","fieldValue":{"value":"swift","type":"STRING"}}],"sortBy":[{"fieldName":"timestamp","ascending":true}]},"desiredKeys":["caption"]}"#,
            false
        ),
        (
            "records/query",
            #"{"query":{"recordType":"Comment","filterBy":[{"comparator":"EQUALS","fieldName":"post","fieldValue":{"value":{"recordName":"p1"},"type":"REFERENCE"}}]}}"#,
            false
        ),
        (#"records/lookup"#, #"{"records":[{"recordName":"p2"},{"recordName":"missing"}]}"#, false),
        (
            "records/modify",
            #"{"operations":[{"operationType":"update","record":{"recordType":"Post","recordName":"p2","recordChangeTag":"stale","fields":{"caption":{"value":"Dinner"}}}}]}"#,
            true
        ),
        ("records/modify", #"{"operations":[{"operationType":"forceDelete","record":{"recordName":"p1"}}]}"#, true),
        (
            "records/query",
            #"{"query":{"recordType":"Post","sortBy":[{"fieldName":"caption","ascending":true}]},"resultsLimit":1}"#,
            false
        ),
        (
            "records/query",
            #"{"query":{"recordType":"Comment","filterBy":[{"comparator":"EQUALS","fieldName":"post","fieldValue":{"value":{"recordName":"p1"},"type":"REFERENCE"}}]}}"#,
            false
        ),
        ("records/modify", #"{"operations":[{"operationType":"create","record":{"recordType":"Post","recordName":"anon"}}]}"#, false),
    ]

    /// What differs between two stores by nature, not by behaviour.
    static let incidental: Set<String> = [
        "recordChangeTag", "created", "modified", "syncToken", "continuationMarker", "userRecordName", "ownerRecordName",
        "redirectURL", "reason", "deviceID", "uuid",
    ]

    static func normalized(_ value: Any) -> Any {
        if let dictionary = value as? [String: Any] {
            var kept: [String: Any] = [:]
            for (key, inner) in dictionary where !incidental.contains(key) { kept[key] = normalized(inner) }
            return kept
        }
        if let array = value as? [Any] { return array.map(normalized) }
        return value
    }

    /// Runs the session against `fog serve` on `store` and returns each answer, normalised.
    static func answers(store: String, work: TemporaryDirectory, name: String) async throws -> [String] {
        let schema = try SchemaCommandTests.write(SeedSchema.text, "seeds-\(name).ckdb", in: work)
        _ = try SchemaCommandTests.fogSucceeds(["schema", "import", schema, "--store", store, "--container", "iCloud.com.example.seeds"])
        let token = try SchemaCommandTests.fogSucceeds(["token", "create", "--store", store]).trimmingCharacters(
            in: .whitespacesAndNewlines)
        _ = try SchemaCommandTests.fogSucceeds(["user", "add", "alice", "--store", store])
        let session = try SchemaCommandTests.fogSucceeds(["user", "token", "alice", "--store", store]).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let (server, port) = try await ServeCommandTests.serve(store, output: work.appending("\(name).out"))
        defer { server.terminate() }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let escaped = session.addingPercentEncoding(withAllowedCharacters: allowed) ?? session
        var answers: [String] = []
        for step in Self.session {
            var address = "http://127.0.0.1:\(port)/database/1/iCloud.com.example.seeds/development/public/\(step.path)?ckAPIToken=\(token)"
            if step.signedIn { address += "&ckWebAuthToken=\(escaped)" }
            var request = URLRequest(url: URL(string: address)!)
            request.httpMethod = "POST"
            request.httpBody = Data(step.body.utf8)
            let (data, response) = try await URLSession.shared.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            let json = try JSONSerialization.jsonObject(with: data)
            let text = try JSONSerialization.data(withJSONObject: normalized(json), options: [.sortedKeys])
            answers.append("\(step.path) \(status) \(String(decoding: text, as: UTF8.self))")
        }
        return answers
    }

    @Test func theSeedSessionAnswersTheSameOnBothStores() async throws {
        let work = try TemporaryDirectory("seeds-both")
        let embedded = try await Self.answers(store: work.appending("store").path, work: work, name: "lmdb")
        let location = try TestBackend.freshPostgresLocation()
        defer { TestBackend.remove(location) }
        let postgres = try await Self.answers(store: location.url.absoluteString, work: work, name: "postgres")
        #expect(embedded.count == Self.session.count)
        for (index, (a, b)) in zip(embedded, postgres).enumerated() {
            #expect(a == b, "request \(index + 1): LMDB answered \(a), PostgreSQL \(b)")
        }
        // The session did what the seed app relies on, not the same failure twice.
        #expect(embedded[0].hasPrefix("records/modify 200") && !embedded[0].contains("serverErrorCode"), "\(embedded[0])")
        #expect(embedded[1].contains("p3") && embedded[1].contains("p1") && !embedded[1].contains("p2"), "\(embedded[1])")
        #expect(embedded[3].contains("c1"), "\(embedded[3])")
        #expect(embedded[5].contains("CONFLICT"), "\(embedded[5])")
        #expect(!embedded[8].contains("c1"), "the comment went with its post (DELETE_SELF): \(embedded[8])")
        #expect(embedded[9].hasPrefix("records/modify 421"), "\(embedded[9])")
    }
}
