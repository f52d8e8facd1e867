import FogKit
import Foundation

/// `assets/upload` and `assets/rereference`.
enum AssetEndpoints {
    static var table: [String: Endpoint] {
        [
            "assets/upload": .post(upload),
            "assets/rereference": .post(rereference),
        ]
    }

    /// The most tokens one `assets/upload` may ask for.
    static let maximumTokens = 200

    struct UploadRequest: Decodable {
        struct Token: Decodable {
            var recordName: String?
            var recordType: String?
            var fieldName: String
        }
        var zoneID: WebServices.ZoneID?
        var tokens: [Token]
    }

    /// `assets/upload`: an upload URL per requested token, in order, each good for one file
    /// for 15 minutes, for this environment, database and caller.
    @Sendable static func upload(_ call: EndpointCall) async throws -> JSON {
        let request = try call.decode(UploadRequest.self)
        guard !request.tokens.isEmpty else { throw ServerError(.badRequest, "tokens is empty") }
        guard request.tokens.count <= maximumTokens else {
            throw ServerError(.badRequest, "\(request.tokens.count) tokens in one request; the limit is \(maximumTokens)")
        }
        guard let user = call.caller.user else {
            throw ServerError(.authenticationRequired, "uploading an asset needs a signed-in user", redirectURL: call.state.signInURL)
        }
        let expires = (Date().timeIntervalSince1970 + AssetLinks.uploadLifetime).rounded(.up)
        var tokens: [JSON] = []
        for (i, token) in request.tokens.enumerated() {
            guard !token.fieldName.isEmpty else { throw ServerError(.badRequest, "tokens[\(i)].fieldName is empty") }
            let recordName = token.recordName.flatMap { $0.isEmpty ? nil : $0 } ?? UUID().uuidString
            let upload = AssetLinks.Upload(
                environment: call.route.environment.rawValue, database: AssetLinks.name(call.route.scope), user: user,
                expires: expires, recordName: recordName, fieldName: token.fieldName)
            tokens.append(
                .object([
                    ("recordName", .string(recordName)), ("fieldName", .string(token.fieldName)),
                    ("url", .string(AssetLinks.uploadURL(upload, state: call.state))),
                ]))
        }
        return .object([("tokens", .array(tokens))])
    }

    struct RereferenceRequest: Decodable {
        struct Item: Decodable {
            var recordName: String
            var fieldName: String
        }
        var zoneID: WebServices.ZoneID?
        var assets: [Item]
    }

    /// `assets/rereference`: for each `{recordName, fieldName}`, in order, the asset
    /// dictionary (`{fileChecksum, size, receipt}`) of the record's asset with a fresh receipt, so another record's save can reuse the stored
    /// bytes without an upload. The caller must be able to read the record.
    @Sendable static func rereference(_ call: EndpointCall) async throws -> JSON {
        let request = try call.decode(RereferenceRequest.self)
        guard request.assets.count <= maximumTokens else {
            throw ServerError(.badRequest, "\(request.assets.count) assets in one request; the limit is \(maximumTokens)")
        }
        let me = await call.callerRecordName()
        let zone = call.zoneID(request.zoneID, callerRecordName: me)
        let ids = request.assets.map { Record.ID(recordName: $0.recordName, zoneID: zone) }
        let found = ids.isEmpty ? [:] : try await call.database.records(for: ids, desiredKeys: Array(Set(request.assets.map(\.fieldName))))
        var assets: [JSON] = []
        for (item, id) in zip(request.assets, ids) {
            let names: [(String, JSON)] = [("recordName", .string(item.recordName)), ("fieldName", .string(item.fieldName))]
            do {
                guard case .success(let record)? = found[id] else {
                    if case .failure(let error)? = found[id] { throw error }
                    throw ServerError(.notFound, "record \(item.recordName) not found")
                }
                guard case .asset(let asset)? = record.fieldValue(forKey: item.fieldName) else {
                    throw ServerError(.badRequest, "field \(item.fieldName) of \(item.recordName) does not hold one asset")
                }
                // Only the asset's keys: a record name beside them would read as a reference
                // when the dictionary is sent back untyped.
                assets.append(.object(try dictionary(reusing: asset, call: call)))
            } catch {
                assets.append(ServerError(error, signIn: call.state.signInURL).item(names))
            }
        }
        return .object([("assets", .array(assets))])
    }

    /// `{fileChecksum, size, receipt}` of a stored asset, the receipt naming its bytes.
    static func dictionary(reusing asset: Asset, call: EndpointCall) throws -> [(String, JSON)] {
        guard let url = asset.fileURL, AssetLinks.relativePath(of: asset, state: call.state) != nil else {
            throw ServerError(.notFound, "the asset is not stored")
        }
        let sha = url.lastPathComponent
        guard sha.count == 64, sha.allSatisfy(\.isHexDigit),
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber
        else { throw ServerError(.notFound, "the asset is no longer stored") }
        let receipt = AssetLinks.Receipt(
            environment: call.route.environment.rawValue, database: AssetLinks.name(call.route.scope), user: call.caller.user,
            expires: (Date().timeIntervalSince1970 + AssetLinks.receiptLifetime).rounded(.up), staged: nil, sha256: sha,
            size: size.int64Value)
        return [
            ("fileChecksum", .string(AssetLinks.fileChecksum(hex: sha))), ("size", .int(size.int64Value)),
            ("receipt", .string(AssetLinks.receipt(receipt, state: call.state))),
        ]
    }
}
