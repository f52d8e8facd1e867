import Crypto
import Foundation

/// A web auth token: who it signs in, until when, signed with the store's secret, so that a
/// server checks one without keeping it (and mints a fresh one for every response without
/// its memory growing).
///
/// Layout before base64: version (1 byte), expiry (8 bytes, seconds since 1970, big-endian),
/// lifetime (4 bytes, seconds), 32 random bytes, the user name (UTF-8), then an HMAC-SHA256 of
/// all of that (32 bytes). The base64 form is at least 100 characters of `[A-Za-z0-9+/=]`,
/// as clients such as MistKit check.
struct WebAuthToken: Sendable, Equatable {
    var user: String
    var expires: Date
    var lifetime: TimeInterval

    static let version: UInt8 = 1

    /// The token's text, signed with `secret`.
    func encoded(secret: SymmetricKey) -> String {
        var bytes: [UInt8] = [Self.version]
        let expiry = UInt64(max(0, expires.timeIntervalSince1970.rounded(.up)))
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: expiry >> UInt64(shift))) }
        let life = UInt32(clamping: Int(lifetime))
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: life >> UInt32(shift))) }
        bytes += SecureBytes.random(32)
        bytes += Array(user.utf8)
        bytes += Array(HMAC<SHA256>.authenticationCode(for: bytes, using: secret))
        return Data(bytes).base64EncodedString()
    }

    /// The token `text` stands for, or `nil` when it is not one signed with `secret`.
    /// Expiry is the caller's to check.
    init?(_ text: String, secret: SymmetricKey) {
        // A `+` that arrived unescaped in a query string reads as a space.
        let text = text.contains(" ") ? text.replacingOccurrences(of: " ", with: "+") : text
        guard let data = Data(base64Encoded: text), data.count > 45 + 32 else { return nil }
        let bytes = Array(data)
        let body = bytes[..<(bytes.count - 32)]
        let mac = bytes[(bytes.count - 32)...]
        guard bytes[0] == Self.version, HMAC<SHA256>.isValidAuthenticationCode(Array(mac), authenticating: Array(body), using: secret)
        else { return nil }
        var expiry: UInt64 = 0
        for i in 1...8 { expiry = expiry << 8 | UInt64(bytes[i]) }
        var life: UInt32 = 0
        for i in 9...12 { life = life << 8 | UInt32(bytes[i]) }
        guard let user = String(bytes: body[45...], encoding: .utf8), !user.isEmpty else { return nil }
        self.user = user
        self.expires = Date(timeIntervalSince1970: TimeInterval(expiry))
        self.lifetime = TimeInterval(life)
    }

    init(user: String, expires: Date, lifetime: TimeInterval) {
        self.user = user
        self.expires = expires
        self.lifetime = lifetime
    }
}
