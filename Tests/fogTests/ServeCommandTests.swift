import Crypto
import FogKit
import FogKitTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `fog init`, the credential commands and `fog serve`, run as the built tool.
@Suite struct ServeCommandTests {
    @Test func initCreatesAStoreOnceAndRefusesAnotherContainer() throws {
        let work = try TemporaryDirectory("init-cli")
        let store = work.appending("store").path
        let out = try SchemaCommandTests.fogSucceeds(["init", "--store", store, "--container", "iCloud.com.example.a"])
        #expect(out.contains("created container iCloud.com.example.a"))
        #expect(try Container.storedIdentifier(at: URL(fileURLWithPath: store)) == "iCloud.com.example.a")
        #expect(try SchemaCommandTests.fogSucceeds(["init", "--store", store, "--container", "iCloud.com.example.a"]).contains("already"))
        let other = try FogTool.run(["init", "--store", store, "--container", "iCloud.com.example.b"])
        #expect(other.status != 0)
        #expect(other.err.contains("iCloud.com.example.a"))
    }

    @Test func serveOnAnEmptyFolderSaysHowToCreateAStore() throws {
        let work = try TemporaryDirectory("serve-empty")
        let run = try FogTool.run(["serve", "--store", work.appending("empty").path, "--port", "0"])
        #expect(run.status != 0)
        #expect(run.err.contains("fog init"), "\(run.err)")
    }

    @Test func credentialCommandsPrintOnlyTheCredential() throws {
        let work = try TemporaryDirectory("credentials-cli")
        let store = work.appending("store").path
        _ = try SchemaCommandTests.fogSucceeds(["init", "--store", store, "--container", "iCloud.com.example.a"])
        let token = try SchemaCommandTests.fogSucceeds(["token", "create", "--store", store])
        #expect(token.count == 65 && token.hasSuffix("\n"))
        #expect(token.dropLast().allSatisfy { "0123456789abcdef".contains($0) })
        let unknown = try FogTool.run(["user", "token", "nobody", "--store", store])
        #expect(unknown.status != 0)
        #expect(unknown.err.contains("fog user add"))
        _ = try SchemaCommandTests.fogSucceeds(["user", "add", "alice", "--store", store])
        let session = try SchemaCommandTests.fogSucceeds(["user", "token", "alice", "--store", store])
        #expect(session.split(separator: "\n").count == 1 && session.count > 100)
        let admin = try SchemaCommandTests.fogSucceeds(["admin", "token", "--store", store])
        #expect(admin.count == 65)
        let pem = work.appending("key.pub")
        try P256.Signing.PrivateKey().publicKey.pemRepresentation.write(to: pem, atomically: true, encoding: .utf8)
        let keyID = try SchemaCommandTests.fogSucceeds(["key", "add", "--store", store, "--public-key", pem.path])
        #expect(keyID.count == 65 && keyID.dropLast().allSatisfy { "0123456789abcdef".contains($0) }, "\(keyID)")
        let bad = work.appending("bad.pub")
        try "not a key".write(to: bad, atomically: true, encoding: .utf8)
        let refused = try FogTool.run(["key", "add", "--store", store, "--public-key", bad.path])
        #expect(refused.status != 0)
        #expect(refused.err.contains("P-256"))
    }

    @Test func serveAnswersCurlStyleRequests() async throws {
        let work = try TemporaryDirectory("serve-cli")
        let store = work.appending("store").path
        _ = try SchemaCommandTests.fogSucceeds(["init", "--store", store, "--container", "iCloud.com.example.a"])
        let token = try SchemaCommandTests.fogSucceeds(["token", "create", "--store", store]).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let (process, bound) = try await Self.serve(store, output: work.appending("serve.out"))
        defer { process.terminate() }
        var request = URLRequest(
            url: URL(
                string: "http://127.0.0.1:\(bound)/database/1/iCloud.com.example.a/development/public/records/query?ckAPIToken=\(token)")!)
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"query":{"recordType":"Note"}}"#.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == #"{"records":[]}"#)
    }

    /// The server logs to standard error through its own handler, in `StreamLogHandler`'s
    /// format, with the label, the level and the source.
    @Test func serveLogsToStandardError() async throws {
        let work = try TemporaryDirectory("serve-log")
        let store = work.appending("store").path
        _ = try SchemaCommandTests.fogSucceeds(["init", "--store", store, "--container", "iCloud.com.example.a"])
        let log = work.appending("serve.err")
        let (process, bound) = try await Self.serve(store, output: work.appending("serve.out"), errors: log)
        defer { process.terminate() }
        var text = ""
        for _ in 0..<100 where !text.contains("Server started") {
            try await Task.sleep(for: .milliseconds(50))
            text = String(decoding: (try? Data(contentsOf: log)) ?? Data(), as: UTF8.self)
        }
        let line = try #require(text.split(separator: "\n").first { $0.contains("Server started and listening") }, "\(text)")
        // `2026-11-28T10:40:00+0000 info FogServer: [HummingbirdCore] Server started and listening on 127.0.0.1:PORT`
        let pattern =
            #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} info FogServer: \[HummingbirdCore\] Server started and listening on 127\.0\.0\.1:(\d+)$/#
        let match = try #require(String(line).wholeMatch(of: pattern), "\(line)")
        #expect(Int(match.1) == bound)
    }

    /// Starts `fog serve` on `store` and returns the process and its port.
    static func serve(_ store: String, output: URL, errors: URL? = nil) async throws -> (ChildProcess, Int) {
        let process = try ChildProcess(
            FogTool.url.path, ["serve", "--store", store, "--port", "0"], standardOutput: .file(output.path),
            standardError: errors.map { .file($0.path) } ?? .discard)
        for _ in 0..<300 {
            let text = String(decoding: (try? Data(contentsOf: output)) ?? Data(), as: UTF8.self)
            if let range = text.range(of: "http://127.0.0.1:"), let port = Int(text[range.upperBound...].prefix { $0.isNumber }) {
                return (process, port)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        process.terminate()
        throw TestBackendError("fog serve printed no port")
    }

}
