import FogKit
import FogKitTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `fog` on a store on PostgreSQL: `fog init`, `fog token create` and two `fog serve`
/// processes sharing the store.
@Suite(.enabled(if: TestBackend.postgresServer != nil || ProcessInfo.processInfo.environment["CI"] != nil))
struct PostgresServeTests {
    static func post(_ port: Int, _ path: String, token: String, body: String) async throws -> (Int, String) {
        var request = URLRequest(
            url: URL(string: "http://127.0.0.1:\(port)/database/1/iCloud.com.example.pg/development/public/\(path)?ckAPIToken=\(token)")!)
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test func twoServersShareOneStoreAndItsCredentials() async throws {
        let location = try TestBackend.freshPostgresLocation()
        defer { TestBackend.remove(location) }
        let store = location.url.absoluteString
        #expect(try SchemaCommandTests.fogSucceeds(["init", "--store", store, "--container", "iCloud.com.example.pg"]).contains("created"))
        let token = try SchemaCommandTests.fogSucceeds(["token", "create", "--store", store]).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let work = try TemporaryDirectory("pg-serve")
        let (a, portA) = try await ServeCommandTests.serve(store, output: work.appending("a.out"))
        defer { a.terminate() }
        let (b, portB) = try await ServeCommandTests.serve(store, output: work.appending("b.out"))
        defer { b.terminate() }
        // Anonymous writes to the public database need a user: the token alone reads.
        let (created, _) = try await Self.post(
            portA, "records/modify", token: token,
            body:
                #"{"operations":[{"operationType":"create","record":{"recordType":"Note","recordName":"n1","fields":{"title":{"value":"hi"}}}}]}"#
        )
        #expect(created == 421)
        // A record the test saves through FogKit, read through both servers.
        let container = try Container(identifier: "iCloud.com.example.pg", store: location, user: "alice")
        let note = Record(recordType: "Note", recordID: Record.ID(recordName: "n1"))
        note["title"] = "from FogKit"
        try await container.publicCloudDatabase.save(note)
        container.close()
        for port in [portA, portB] {
            let (status, body) = try await Self.post(port, "records/lookup", token: token, body: #"{"records":[{"recordName":"n1"}]}"#)
            #expect(status == 200)
            #expect(body.contains("from FogKit"), "\(body)")
        }
        // A token minted while the servers run works on both at once (the credentials are in
        // the store, not beside one process).
        let fresh = try SchemaCommandTests.fogSucceeds(["token", "create", "--store", store]).trimmingCharacters(
            in: .whitespacesAndNewlines)
        for port in [portA, portB] {
            #expect(try await Self.post(port, "records/query", token: fresh, body: #"{"query":{"recordType":"Note"}}"#).0 == 200)
        }
        #expect(try await Self.post(portB, "records/query", token: String(repeating: "0", count: 64), body: "{}").0 == 401)
    }
}
