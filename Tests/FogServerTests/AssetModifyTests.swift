import FogKit
import FogKitTesting
import Foundation
import Testing

/// The whole asset flow as a client makes it, over HTTP only: `assets/upload`, the POST of the
/// bytes, `records/modify` with the upload's `singleFile` dictionary, `records/lookup`, and
/// the download URL.
@Suite struct AssetModifyTests {
    @Test func uploadThenModifyThenDownload() async throws {
        let server = try await ServerHarness()
        defer { Task { await server.stop() } }
        let upload = try await server.post(
            server.url("private", "assets/upload"), ["tokens": [["recordName": "photo", "recordType": "Photo", "fieldName": "image"]]])
        let url = try #require((upload.json["tokens"] as? [[String: Any]])?.first?["url"] as? String)
        let bytes = Data((0..<5000).map { UInt8($0 % 251) })
        // No credentials: the URL is the capability.
        let posted = try await server.send("POST", url, body: bytes, headers: ["Content-Type": "application/octet-stream"])
        #expect(posted.status == 200, "\(posted.text)")
        let single = try #require(posted.json["singleFile"] as? [String: Any])
        #expect(single["size"] as? Int == bytes.count)

        let saved = try await server.post(
            server.url("private", "records/modify"),
            [
                "operations": [
                    [
                        "operationType": "create",
                        "record": [
                            "recordType": "Photo", "recordName": "photo", "fields": ["image": ["value": single, "type": "ASSETID"]],
                        ],
                    ]
                ]
            ])
        #expect(saved.records.first?["serverErrorCode"] == nil, "\(saved.text)")

        let lookup = try await server.post(server.url("private", "records/lookup"), ["records": [["recordName": "photo"]]])
        let image = try #require(((lookup.records.first?["fields"] as? [String: Any])?["image"] as? [String: Any]))
        #expect(image["type"] as? String == "ASSETID")
        let asset = try #require(image["value"] as? [String: Any])
        #expect(asset["size"] as? Int == bytes.count)
        let download = try #require(asset["downloadURL"] as? String)
        #expect(download.hasSuffix("/${f}"))
        let named = download.replacingOccurrences(of: "${f}", with: "photo.bin")
        let fetched = try await server.get(named)
        #expect(fetched.status == 200)
        #expect(fetched.body == bytes)

        // A forged receipt fails its operation only.
        var forged = single
        forged["receipt"] = "forged"
        let refused = try await server.post(
            server.url("private", "records/modify"),
            [
                "atomic": false,
                "operations": [
                    [
                        "operationType": "create",
                        "record": ["recordType": "Photo", "recordName": "bad", "fields": ["image": ["value": forged, "type": "ASSETID"]]],
                    ]
                ],
            ])
        #expect(refused.records.first?["serverErrorCode"] as? String == "BAD_REQUEST", "\(refused.text)")
    }
}
