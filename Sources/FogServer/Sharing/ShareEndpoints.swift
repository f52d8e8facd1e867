import FogKit
import Foundation
import Synchronization

/// `records/resolve` and `records/accept`: share links as short GUIDs.
///
/// A short GUID is the share's FogKit URL (`fogkit:share/<owner>/<zone>/<record>`) in
/// base64url without padding; share records carry theirs as `shortGUID`.
enum ShareEndpoints {
    static func shortGUID(of url: URL) -> String {
        Data(url.absoluteString.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func url(ofShortGUID value: String) -> URL? {
        var text = value.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text), let string = String(data: data, encoding: .utf8),
            string.hasPrefix("fogkit:share/")
        else { return nil }
        return URL(string: string)
    }

    struct Request: Decodable {
        struct ShortGUID: Decodable {
            var value: String
            var shouldFetchRootRecord: Bool?
            var rootRecordDesiredKeys: [String]?

            init(from decoder: any Decoder) throws {
                // CloudKit JS sends plain strings to accept, dictionaries to resolve.
                if let text = try? decoder.singleValueContainer().decode(String.self) {
                    value = text
                    return
                }
                let c = try decoder.container(keyedBy: CodingKeys.self)
                value = try c.decode(String.self, forKey: .value)
                shouldFetchRootRecord = try c.decodeIfPresent(Bool.self, forKey: .shouldFetchRootRecord)
                rootRecordDesiredKeys = try c.decodeIfPresent([String].self, forKey: .rootRecordDesiredKeys)
            }

            enum CodingKeys: String, CodingKey { case value, shouldFetchRootRecord, rootRecordDesiredKeys }
        }
        var shortGUIDs: [ShortGUID]
    }

    /// The metadata of one share link, through ``FetchShareMetadataOperation``.
    static func metadata(_ url: URL, item: Request.ShortGUID, container: Container) async throws -> Share.Metadata {
        let found = Mutex<Result<Share.Metadata, any Error>?>(nil)
        let operation = FetchShareMetadataOperation(shareURLs: [url])
        operation.shouldFetchRootRecord = item.shouldFetchRootRecord ?? false
        operation.rootRecordDesiredKeys = item.rootRecordDesiredKeys
        operation.perShareMetadataResultBlock = { _, result in found.withLock { $0 = result } }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            operation.fetchShareMetadataResultBlock = { result in continuation.resume(with: result) }
            container.add(operation)
        }
        guard let result = found.withLock({ $0 }) else { throw ServerError(.internalError, "no share metadata") }
        return try result.get()
    }

    /// A ShortGUID result dictionary.
    static func result(_ metadata: Share.Metadata, shortGUID: String, call: EndpointCall, output: RecordOutput) throws -> JSON {
        let share = metadata.share
        var members: [(String, JSON)] = [
            ("shortGUID", .string(shortGUID)), ("containerIdentifier", .string(metadata.containerIdentifier)),
            ("environment", .string(call.route.environment.rawValue)),
            ("databaseScope", .string(share.owner.participantID == output.callerRecordName ? "PRIVATE" : "SHARED")),
            ("zoneID", output.zoneIDJSON(share.recordID.zoneID)), ("share", try output.record(share)),
            ("participantPermission", .string(ShareOutput.permission(metadata.participantPermission))),
            ("participantStatus", .string(ShareOutput.status(metadata.participantStatus))),
            ("participantType", .string(ShareOutput.type(metadata.participantRole))),
        ]
        if let owner = metadata.ownerIdentity.userRecordID {
            members.append(("ownerIdentity", .object(UserEndpoints.identity(metadata.ownerIdentity, recordName: owner.recordName))))
        }
        if let root = metadata.hierarchicalRootRecordID { members.append(("rootRecordName", .string(root.recordName))) }
        if let root = metadata.rootRecord { members.append(("rootRecord", try output.record(root))) }
        return .object(members)
    }

    static func run(_ call: EndpointCall, accepting: Bool) async throws -> JSON {
        let request = try call.decode(Request.self)
        let me = await call.callerRecordName()
        let output = RecordOutput(call, callerRecordName: me)
        var results: [JSON] = []
        for item in request.shortGUIDs {
            do {
                guard let url = url(ofShortGUID: item.value) else {
                    throw ServerError(.notFound, "\(item.value) is not a share link of this server")
                }
                var metadata = try await metadata(url, item: item, container: call.container)
                if accepting {
                    _ = try await call.container.accept(metadata)
                    metadata = try await self.metadata(url, item: item, container: call.container)
                }
                results.append(try result(metadata, shortGUID: item.value, call: call, output: output))
            } catch {
                results.append(ServerError(error, signIn: call.state.signInURL).item([("shortGUID", .string(item.value))]))
            }
        }
        return .object([("results", .array(results))])
    }

    /// `records/resolve`: what each share link leads to, for the caller.
    @Sendable static func resolve(_ call: EndpointCall) async throws -> JSON { try await run(call, accepting: false) }

    /// `records/accept`: accepts each share as the caller, then resolves it.
    @Sendable static func accept(_ call: EndpointCall) async throws -> JSON { try await run(call, accepting: true) }
}
