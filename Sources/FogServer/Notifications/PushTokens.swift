import Crypto
import FogKit
import Foundation

/// Web push tokens: an `apnsToken` is 16 random bytes and the first 16 bytes of their
/// HMAC with the store's secret (base64), so the server knows its own without keeping them;
/// registering one writes `<store>/server-push/<id>.json` with the user and environment it
/// delivers for. Its `webcourierURL` is `<base>/webcourier/<token in base64url>`, and its
/// FogKit notification listener is `web-push-<id>`, so each token receives every
/// notification once, from its registration on.
enum PushTokens {
    static let coursePrefix = "/webcourier/"

    /// A registration: whose notifications a token receives, in which environment.
    struct Registration: Codable, Equatable {
        var user: String
        var environment: String
    }

    /// A new token's bytes.
    static func make(secret: SymmetricKey) -> [UInt8] {
        let id = SecureBytes.random(16)
        return id + mac(id, secret: secret)
    }

    /// The token's ID (hexadecimal) when `bytes` is a token of this server.
    static func id(of bytes: [UInt8], secret: SymmetricKey) -> String? {
        guard bytes.count == 32 else { return nil }
        let id = Array(bytes[..<16])
        // Constant-time enough for a 16-byte tag: compare all bytes.
        guard zip(mac(id, secret: secret), bytes[16...]).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 else { return nil }
        return id.map { String(format: "%02x", $0) }.joined()
    }

    private static func mac(_ id: [UInt8], secret: SymmetricKey) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array("courier\n".utf8) + id, using: secret)).prefix(16).map { $0 }
    }

    static func courierURL(_ bytes: [UInt8], state: ServerState) -> String {
        "\(state.baseURL)\(coursePrefix)\(Capability.base64URL(Data(bytes)))"
    }

    static func listener(_ id: String) -> String { "web-push-\(id)" }

    static func folder(_ state: ServerState) -> URL {
        state.store.directory.appendingPathComponent("server-push", isDirectory: true)
    }

    static func register(_ registration: Registration, id: String, state: ServerState) throws {
        let folder = folder(state)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let temporary = folder.appendingPathComponent("\(id).json.new")
        try JSONEncoder().encode(registration).write(to: temporary)
        guard rename(temporary.path, folder.appendingPathComponent("\(id).json").path) == 0 else {
            throw ServerError(.internalError, "cannot register the token: \(String(cString: strerror(errno)))")
        }
    }

    static func registration(id: String, state: ServerState) -> Registration? {
        guard let data = try? Data(contentsOf: folder(state).appendingPathComponent("\(id).json")) else { return nil }
        return try? JSONDecoder().decode(Registration.self, from: data)
    }
}
