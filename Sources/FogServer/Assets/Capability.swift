import Crypto
import Foundation

/// A signed, self-contained permission handed out in a URL or a receipt: what it allows
/// (`payload`), for which purpose, until when. The server keeps nothing per capability, so
/// handing out any number of them costs no memory.
///
/// Text form: `base64url(JSON payload) "." base64url(HMAC-SHA256(purpose "\n" JSON payload))`,
/// signed with the store's secret. The purpose is part of what is signed, so an upload URL's
/// token is not accepted as a download token or a receipt.
enum Capability {
    /// What a capability may be used for.
    enum Purpose: String {
        case upload, receipt, download, courier
    }

    /// The text of a capability for `purpose` carrying `payload`.
    static func encode<T: Encodable>(_ payload: T, purpose: Purpose, secret: SymmetricKey) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = (try? encoder.encode(payload)) ?? Data()
        let mac = HMAC<SHA256>.authenticationCode(for: Data(purpose.rawValue.utf8) + [0x0A] + data, using: secret)
        return base64URL(data) + "." + base64URL(Data(mac))
    }

    /// The payload of `text`, or `nil` when it is not a capability for `purpose` signed with
    /// `secret` (expiry is the payload's to check).
    static func decode<T: Decodable>(_ type: T.Type, from text: String, purpose: Purpose, secret: SymmetricKey) -> T? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let data = data(base64URL: parts[0]), let mac = self.data(base64URL: parts[1]),
            HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Data(purpose.rawValue.utf8) + [0x0A] + data, using: secret)
        else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func data(base64URL text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
