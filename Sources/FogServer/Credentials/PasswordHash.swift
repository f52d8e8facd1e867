import Crypto
import Foundation
import _CryptoExtras

/// A password as `credentials.json` keeps it for the sign-in page: PBKDF2 with HMAC-SHA256
/// over a random 16-byte salt, many rounds, 32 bytes out. The password itself is never stored.
struct PasswordHash: Codable, Sendable, Equatable {
    /// `pbkdf2-sha256`, the only algorithm so far.
    var algorithm: String
    var rounds: Int
    /// Base64.
    var salt: String
    /// Base64.
    var hash: String

    static let algorithmName = "pbkdf2-sha256"
    /// OWASP's 2023 advice for PBKDF2-HMAC-SHA256.
    static let defaultRounds = 600_000

    /// A fresh hash of `password` with a new salt.
    init(password: String, rounds: Int = defaultRounds) throws {
        let salt = SecureBytes.random(16)
        algorithm = Self.algorithmName
        self.rounds = rounds
        self.salt = Data(salt).base64EncodedString()
        hash = try Self.derive(password, salt: salt, rounds: rounds).base64EncodedString()
    }

    /// Whether `password` is the one hashed, compared in constant time.
    func matches(_ password: String) -> Bool {
        guard algorithm == Self.algorithmName, rounds > 0, let salt = Data(base64Encoded: salt),
            let expected = Data(base64Encoded: hash), let actual = try? Self.derive(password, salt: Array(salt), rounds: rounds),
            actual.count == expected.count
        else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(actual, expected) { difference |= a ^ b }
        return difference == 0
    }

    private static func derive(_ password: String, salt: [UInt8], rounds: Int) throws -> Data {
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8), salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: rounds)
        return key.withUnsafeBytes { Data($0) }
    }
}
