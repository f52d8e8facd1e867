import Crypto
import FogKit
import FogKitTesting
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Testing

@testable import FogServer

/// `assets/upload`, the upload URL (raw and multipart), receipts turned into assets,
/// download URLs and `assets/rereference`, over real HTTP. Records are saved through the
/// server's own path for modify dictionaries (``RecordInput``), in the server's store.
@Suite struct AssetEndpointTests {
    /// An endpoint call of `user` in `database`, as the server would make it.
    static func call(_ server: ServerHarness, user: String = "alice", database: Database.Scope = .private) throws -> EndpointCall {
        let state = server.server.state
        let route = try #require(
            Route(path: "/database/1/\(ServerHarness.container)/development/\(AssetLinks.name(database))/records/modify"))
        let session = WebAuthToken(user: user, expires: Date().addingTimeInterval(600), lifetime: 600)
        let request = Request(
            head: HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1", path: "/"), body: RequestBody(buffer: ByteBuffer()))
        return EndpointCall(
            route: route, caller: .user(user, session: session), container: try state.store.container(.development, user: user), body: [],
            query: [:], state: state, request: request)
    }

    /// Saves a record made from `json` (a modify request's record dictionary).
    static func save(_ json: [String: Any], call: EndpointCall) async throws -> Record {
        let dictionary = try WebServices.decode(WebServices.RecordDictionary.self, from: JSONSerialization.data(withJSONObject: json))
        let record = try RecordInput.record(from: dictionary, zone: .default, call: call)
        return try await call.database.save(record)
    }

    static func uploadURL(_ server: ServerHarness, database: String = "private", recordName: String? = nil) async throws -> String {
        var token: [String: Any] = ["recordType": "Note", "fieldName": "attachment"]
        if let recordName { token["recordName"] = recordName }
        let reply = try await server.post(server.url(database, "assets/upload"), ["tokens": [token]])
        #expect(reply.status == 200)
        let tokens = try #require(reply.json["tokens"] as? [[String: Any]])
        return try #require(tokens.first?["url"] as? String)
    }

    static func sha256Base64(_ data: Data) -> String { Data(SHA256.hash(data: data)).base64EncodedString() }

    /// The asset field of record `name` as records/lookup gives it.
    static func fetchedAsset(_ server: ServerHarness, name: String, field: String = "attachment") async throws -> [String: Any] {
        let lookup = try await server.post(server.url("private", "records/lookup"), ["records": [["recordName": name]]])
        let record = try #require(lookup.records.first)
        let value = try #require((record["fields"] as? [String: Any])?[field] as? [String: Any])
        #expect(value["type"] as? String == "ASSETID")
        return try #require(value["value"] as? [String: Any])
    }

    @Test func uploadURLsComeOnePerTokenInOrder() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let reply = try await server.post(
            server.url("private", "assets/upload"),
            [
                "zoneID": ["zoneName": "_defaultZone"],
                "tokens": [
                    ["recordName": "r1", "recordType": "Note", "fieldName": "a"], ["recordType": "Note", "fieldName": "b"],
                ],
            ])
        #expect(reply.status == 200)
        let tokens = try #require(reply.json["tokens"] as? [[String: Any]])
        #expect(tokens.count == 2)
        #expect(tokens[0]["recordName"] as? String == "r1")
        #expect(tokens[0]["fieldName"] as? String == "a")
        #expect(UUID(uuidString: tokens[1]["recordName"] as? String ?? "") != nil)
        #expect(tokens[1]["fieldName"] as? String == "b")
        for token in tokens { #expect((token["url"] as? String)?.hasPrefix(server.base + "/assets/upload/") == true) }
        let tooMany = try await server.post(
            server.url("private", "assets/upload"),
            ["tokens": Array(repeating: ["recordType": "Note", "fieldName": "a"], count: 201)])
        #expect(tooMany.status == 400)
        let anonymous = try await server.post(
            server.url("public", "assets/upload", user: nil), ["tokens": [["recordType": "Note", "fieldName": "a"]]])
        #expect(anonymous.status == 421)
    }

    @Test func rawUploadSavedThroughAReceiptDownloadsBack() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let url = try await Self.uploadURL(server)
        // No credentials on the upload itself: the URL is the permission.
        let upload = try await server.send("POST", url, body: bytes, headers: ["Content-Type": "application/octet-stream"])
        #expect(upload.status == 200)
        let file = try #require(upload.json["singleFile"] as? [String: Any])
        #expect(file["size"] as? Int == bytes.count)
        #expect(file["fileChecksum"] as? String == Self.sha256Base64(bytes))
        #expect(file["receipt"] is String)

        let call = try Self.call(server)
        _ = try await Self.save(
            [
                "recordName": "n1", "recordType": "Note",
                "fields": ["title": ["value": "hi"], "attachment": ["value": file, "type": "ASSETID"]],
            ],
            call: call)
        let asset = try await Self.fetchedAsset(server, name: "n1")
        #expect(asset["size"] as? Int == bytes.count)
        let downloadURL = try #require(asset["downloadURL"] as? String)
        #expect(downloadURL.hasPrefix(server.base + "/assets/download/"))
        #expect(downloadURL.hasSuffix("/${f}"))
        let base = String(downloadURL.dropLast("${f}".count))
        for name in ["%24%7Bf%7D", "photo.jpg"] {
            let download = try await server.get(base + name)
            #expect(download.status == 200)
            #expect(download.body == bytes)
            #expect(download.headers["content-length"] == String(bytes.count))
        }
        // A forged or expired download token is refused in CloudKit's error shape.
        let token = String(base.dropFirst((server.base + "/assets/download/").count).dropLast())
        let forged = try await server.get("\(server.base)/assets/download/\(Self.flip(token))/x")
        #expect(forged.status == 404)
        #expect(forged.json["serverErrorCode"] as? String == "NOT_FOUND")
        let state = server.server.state
        let payload = try #require(
            Capability.decode(AssetLinks.Download.self, from: token, purpose: .download, secret: state.credentials.secret))
        let expired = Capability.encode(
            AssetLinks.Download(path: payload.path, expires: Date().timeIntervalSince1970 - 1), purpose: .download,
            secret: state.credentials.secret)
        let late = try await server.get("\(server.base)/assets/download/\(expired)/x")
        #expect(late.status == 401)
        #expect(late.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
        // A download token is not an upload URL, nor the other way round.
        let crossed = try await server.send("POST", "\(server.base)/assets/upload/\(token)", body: bytes)
        #expect(crossed.status == 404)
    }

    @Test func multipartUploadKeepsOnlyTheFilesPart() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let bytes = Data("multipart content\r\n--not-the-boundary\r\nend".utf8) + Data((0..<5000).map { UInt8($0 % 251) })
        let url = try await Self.uploadURL(server)
        let boundary = "----FogBoundary7MA4YWxkTrZu0gW"
        var body = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nignored\r\n".utf8)
        body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a.bin\"\r\n".utf8)
        body += Data("Content-Type: application/octet-stream\r\n\r\n".utf8) + bytes + Data("\r\n--\(boundary)--\r\n".utf8)
        let upload = try await server.send("POST", url, body: body, headers: ["Content-Type": "multipart/form-data; boundary=\(boundary)"])
        #expect(upload.status == 200)
        let file = try #require(upload.json["singleFile"] as? [String: Any])
        #expect(file["size"] as? Int == bytes.count)
        #expect(file["fileChecksum"] as? String == Self.sha256Base64(bytes))
        // Saved in a list of assets, it downloads back as the part's bytes.
        let call = try Self.call(server)
        _ = try await Self.save(
            ["recordName": "m1", "recordType": "Note", "fields": ["files": ["value": [file], "type": "ASSETID_LIST"]]], call: call)
        let lookup = try await server.post(server.url("private", "records/lookup"), ["records": [["recordName": "m1"]]])
        let field = try #require((lookup.records.first?["fields"] as? [String: Any])?["files"] as? [String: Any])
        let asset = try #require((field["value"] as? [[String: Any]])?.first)
        let download = try await server.get(try #require(asset["downloadURL"] as? String).replacingOccurrences(of: "${f}", with: "a.bin"))
        #expect(download.body == bytes)
    }

    @Test func receiptsAreCheckedAndStagedFilesCleanedUp() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let bytes = Data(repeating: 7, count: 3000)
        let upload = try await server.send("POST", try await Self.uploadURL(server), body: bytes)
        var file = try #require(upload.json["singleFile"] as? [String: Any])
        let receipt = try #require(file["receipt"] as? String)
        let call = try Self.call(server)
        // A forged receipt, or alice's receipt used by bob, is BAD_REQUEST.
        for (text, caller) in [(Self.flip(receipt), call), (receipt, try Self.call(server, user: "bob"))] {
            file["receipt"] = text
            do {
                _ = try await Self.save(
                    ["recordName": "bad", "recordType": "Note", "fields": ["attachment": ["value": file]]], call: caller)
                Issue.record("a bad receipt was accepted")
            } catch let error as ServerError {
                #expect(error.code == .badRequest)
            }
        }
        file["receipt"] = receipt
        _ = try await Self.save(["recordName": "c1", "recordType": "Note", "fields": ["attachment": ["value": file]]], call: call)
        let staging = server.server.state.staging
        let staged = { (try? FileManager.default.contentsOfDirectory(atPath: staging.folder.path)) ?? [] }
        #expect(staged().count == 1)
        // Once the store holds the bytes, the staged copy goes; the receipt still works.
        staging.sweep(now: Date().addingTimeInterval(1), grace: 0)
        #expect(staged().isEmpty)
        _ = try await Self.save(["recordName": "c2", "recordType": "Note", "fields": ["attachment": ["value": file]]], call: call)
        let asset = try await Self.fetchedAsset(server, name: "c2")
        #expect(try await server.get(try #require(asset["downloadURL"] as? String)).body == bytes)
        // Uploads nobody saved go when their receipts expire.
        _ = try await server.send("POST", try await Self.uploadURL(server), body: Data(repeating: 9, count: 10))
        #expect(staged().count == 1)
        staging.sweep(now: Date().addingTimeInterval(AssetLinks.receiptLifetime + 10), grace: AssetStaging.savedGrace)
        #expect(staged().isEmpty)
    }

    @Test func uploadsLargerThanTheStoreLimitAreRefused() async throws {
        var configuration = FogServer.Configuration(port: 0)
        configuration.store.maximumAssetSize = 1000
        let server = try await ServerHarness(configuration: configuration)
        defer { Task { await server.stop() } }
        let reply = try await server.send("POST", try await Self.uploadURL(server), body: Data(repeating: 1, count: 5000))
        #expect(reply.status == 400)
        #expect(reply.json["serverErrorCode"] as? String == "BAD_REQUEST")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: server.server.state.staging.folder.path)) ?? []).isEmpty)
        let fits = try await server.send("POST", try await Self.uploadURL(server), body: Data(repeating: 1, count: 1000))
        #expect(fits.status == 200)
        // A forged upload URL is refused.
        let url = try await Self.uploadURL(server)
        let forged = try await server.send("POST", String(url.dropLast(2)) + "AA", body: Data([1]))
        #expect(forged.status == 404)
    }

    @Test func rereferencedAssetsSaveOnAnotherRecordWithoutUpload() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let bytes = Data("shared bytes".utf8)
        let upload = try await server.send("POST", try await Self.uploadURL(server), body: bytes)
        let file = try #require(upload.json["singleFile"] as? [String: Any])
        let call = try Self.call(server)
        _ = try await Self.save(["recordName": "a", "recordType": "Note", "fields": ["attachment": ["value": file]]], call: call)
        let reply = try await server.post(
            server.url("private", "assets/rereference"),
            ["assets": [["recordName": "a", "fieldName": "attachment"], ["recordName": "missing", "fieldName": "attachment"]]])
        #expect(reply.status == 200)
        let assets = try #require(reply.json["assets"] as? [[String: Any]])
        #expect(assets.count == 2)
        #expect(assets[0]["size"] as? Int == bytes.count)
        #expect(assets[0]["fileChecksum"] as? String == Self.sha256Base64(bytes))
        #expect(assets[1]["serverErrorCode"] as? String == "NOT_FOUND")
        _ = try await Self.save(["recordName": "b", "recordType": "Note", "fields": ["attachment": ["value": assets[0]]]], call: call)
        let asset = try await Self.fetchedAsset(server, name: "b")
        #expect(try await server.get(try #require(asset["downloadURL"] as? String)).body == bytes)
        // A fetched asset sent back as it came (its download URL) keeps its bytes too.
        _ = try await Self.save(
            ["recordName": "c", "recordType": "Note", "fields": ["attachment": ["value": asset, "type": "ASSETID"]]], call: call)
        let resent = try await Self.fetchedAsset(server, name: "c")
        #expect(resent["size"] as? Int == bytes.count)
        #expect(try await server.get(try #require(resent["downloadURL"] as? String)).body == bytes)
    }

    /// `text` with one character changed.
    static func flip(_ text: String) -> String {
        var characters = Array(text)
        let i = characters.count / 2
        characters[i] = characters[i] == "A" ? "B" : "A"
        return String(characters)
    }
}
