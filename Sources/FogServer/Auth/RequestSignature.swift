import Crypto
import Foundation
import Synchronization

/// Checks server-to-server signatures: ECDSA P-256 with SHA-256 over
/// `date:base64(sha256(body)):request-target`, where the request target is the path with its
/// query exactly as received, and the date (ISO 8601, UTC, no fractional seconds) is within
/// ``window`` of the server's clock. A signature seen once is refused again while its date is
/// in the window (a replay).
final class RequestSignatureChecker: Sendable {
    /// How far a request's date may be from the server's clock: five minutes either way.
    let window: TimeInterval
    private let seen = Mutex<[String: Date]>([:])

    init(window: TimeInterval = 300) { self.window = window }

    /// The headers a signed request carries.
    static let keyIDHeader = "X-Apple-CloudKit-Request-KeyID"
    static let dateHeader = "X-Apple-CloudKit-Request-ISO8601Date"
    static let signatureHeader = "X-Apple-CloudKit-Request-SignatureV1"

    /// Checks the signature of a request to `target` with `body`, dated `date`, by `key`.
    func check(
        key: CredentialFile.Key, date dateText: String, signature signatureText: String, target: String, body: [UInt8],
        now: Date = Date()
    ) throws(ServerError) {
        guard let date = Self.parseDate(dateText) else {
            throw ServerError(.authenticationFailed, "\(Self.dateHeader) is not an ISO 8601 date such as 2026-11-22T10:15:30Z")
        }
        guard abs(date.timeIntervalSince(now)) <= window else {
            throw ServerError(
                .authenticationFailed, "the request's date \(dateText) is more than \(Int(window)) seconds from the server's clock")
        }
        guard let publicKey = try? P256.Signing.PublicKey(pemRepresentation: key.publicKey),
            let signatureData = Data(base64Encoded: signatureText),
            let signature = try? P256.Signing.ECDSASignature(derRepresentation: signatureData)
        else { throw ServerError(.authenticationFailed, "the request signature is not a base64 DER ECDSA signature") }
        let bodyHash = Data(SHA256.hash(data: body)).base64EncodedString()
        let message = Data("\(dateText):\(bodyHash):\(target)".utf8)
        guard publicKey.isValidSignature(signature, for: message) else {
            throw ServerError(.authenticationFailed, "the request signature does not verify for key \(key.keyID)")
        }
        let replay = seen.withLock { seen -> Bool in
            if seen.count > 10_000 { seen = seen.filter { now.timeIntervalSince($0.value) <= window } }
            let id = "\(key.keyID):\(signatureText)"
            if let first = seen[id], now.timeIntervalSince(first) <= 2 * window { return true }
            seen[id] = now
            return false
        }
        if replay { throw ServerError(.authenticationFailed, "this signed request was already received (a replay)") }
    }

    static func parseDate(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
