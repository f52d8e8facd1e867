import FogKit
import Foundation

/// The capabilities the asset endpoints hand out, and the URLs that carry them:
///
/// - an upload URL, `<base>/assets/upload/<token>`: lets anyone holding it POST one file for
///   the environment, database and user it names, for 15 minutes;
/// - a receipt, the upload's answer: names the staged file (and its SHA-256) for that
///   environment, database and user, for ``AssetLinks/receiptLifetime``;
/// - a download URL, `<base>/assets/download/<token>/${f}`: serves one stored asset file of
///   an environment for ``AssetLinks/downloadLifetime``.
///
/// Each is a ``Capability`` signed with the store's secret: the server keeps nothing per URL.
enum AssetLinks {
    static let uploadLifetime: TimeInterval = 15 * 60
    static let receiptLifetime: TimeInterval = 60 * 60
    static let downloadLifetime: TimeInterval = 60 * 60

    static let uploadPrefix = "/assets/upload/"
    static let downloadPrefix = "/assets/download/"

    /// What an upload URL allows.
    struct Upload: Codable, Equatable {
        var environment: String
        var database: String
        var user: String?
        var expires: Double
        var recordName: String
        var fieldName: String
    }

    /// What a receipt proves: a staged upload (`staged`, a file of the staging folder) or a
    /// stored asset being reused (`staged` nil), with its SHA-256 (hexadecimal) and size.
    struct Receipt: Codable, Equatable {
        var environment: String
        var database: String
        var user: String?
        var expires: Double
        var staged: String?
        var sha256: String
        var size: Int64
    }

    /// What a download URL serves: a file of the store folder, by its path in that folder.
    struct Download: Codable, Equatable {
        var path: String
        var expires: Double
    }

    /// The name of a database scope in a capability.
    static func name(_ scope: Database.Scope?) -> String {
        switch scope {
        case .private?: "private"
        case .shared?: "shared"
        default: "public"
        }
    }

    static func uploadURL(_ upload: Upload, state: ServerState) -> String {
        "\(state.baseURL)\(uploadPrefix)\(Capability.encode(upload, purpose: .upload, secret: state.credentials.secret))"
    }

    static func receipt(_ receipt: Receipt, state: ServerState) -> String {
        Capability.encode(receipt, purpose: .receipt, secret: state.credentials.secret)
    }

    /// The URL a fetched record's asset is downloaded from, or `nil` for an asset outside
    /// the store's folder (one not saved yet). Its last segment is a literal `${f}`, which
    /// clients replace with a file name.
    static func downloadURL(for asset: Asset, call: EndpointCall) -> String? {
        guard let path = relativePath(of: asset, state: call.state) else { return nil }
        let download = Download(path: path, expires: (Date().timeIntervalSince1970 + downloadLifetime).rounded(.up))
        let token = Capability.encode(download, purpose: .download, secret: call.state.credentials.secret)
        return "\(call.state.baseURL)\(downloadPrefix)\(token)/${f}"
    }

    /// The path of a stored asset's file inside the store's folder.
    static func relativePath(of asset: Asset, state: ServerState) -> String? {
        guard let file = asset.fileURL?.standardizedFileURL.path else { return nil }
        let root = state.store.directory.standardizedFileURL.path
        let prefix = root.hasSuffix("/") ? root : root + "/"
        guard file.hasPrefix(prefix) else { return nil }
        let path = String(file.dropFirst(prefix.count))
        guard !path.split(separator: "/").contains(".."), path.contains("assets/") || path.hasPrefix("assets") else { return nil }
        return path
    }

    /// The `fileChecksum` of an asset with SHA-256 `hex`: the digest in base64.
    static func fileChecksum(hex: String) -> String {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            if let byte = UInt8(hex[index..<next], radix: 16) { bytes.append(byte) }
            index = next
        }
        return Data(bytes).base64EncodedString()
    }
}
