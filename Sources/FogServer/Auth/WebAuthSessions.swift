import Foundation
import Synchronization

/// Web auth tokens a server has checked, remembered so that a session's later requests skip
/// the base64 decoding and the HMAC, and the fresh tokens its responses hand out.
///
/// A fresh token is minted at most once a second per user and lifetime: responses within the
/// same second carry the same fresh token (its expiry is that second's plus the lifetime).
/// Both tables are bounded (emptied when full); a token's expiry is checked on every request.
final class WebAuthSessions: Sendable {
    let credentials: CredentialCache
    /// The most tokens either table keeps.
    static let capacity = 4096

    private struct FreshKey: Hashable {
        var user: String
        var lifetime: TimeInterval
    }
    private struct Fresh {
        var token: String
        var minted: Date
    }
    private let verified = Mutex<[String: WebAuthToken]>([:])
    private let fresh = Mutex<[FreshKey: Fresh]>([:])

    init(credentials: CredentialCache) { self.credentials = credentials }

    /// The session `text` (as the query sent it, percent-encoded) stands for, or `nil` when
    /// this server did not sign it.
    func session(_ text: String) -> WebAuthToken? {
        if let known = verified.withLock({ $0[text] }) { return known }
        guard let session = WebAuthToken(ServerResponder.decoded(text), secret: credentials.secret) else { return nil }
        verified.withLock { table in
            if table.count >= Self.capacity { table.removeAll(keepingCapacity: true) }
            table[text] = session
        }
        return session
    }

    /// A token for `user` that lasts `lifetime` from now (minted at most once a second).
    func freshToken(user: String, lifetime: TimeInterval, now: Date = Date()) -> String {
        let key = FreshKey(user: user, lifetime: lifetime)
        if let recent = fresh.withLock({ $0[key] }), now.timeIntervalSince(recent.minted) < 1 { return recent.token }
        let token = WebAuthToken(user: user, expires: now.addingTimeInterval(lifetime), lifetime: lifetime).encoded(
            secret: credentials.secret)
        fresh.withLock { table in
            if table.count >= Self.capacity { table.removeAll(keepingCapacity: true) }
            table[key] = Fresh(token: token, minted: now)
        }
        return token
    }
}
