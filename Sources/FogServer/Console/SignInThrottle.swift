import Foundation
import Synchronization

/// Failed sign-in attempts, counted per account name and per client address: once a key has
/// its limit of failures within the window (which starts at its first failure), attempts
/// under that key are refused without checking the password until the window has passed.
/// A successful sign-in clears the account's count.
///
/// At most `maximumKeys` keys are tracked; a new one beyond that evicts the one whose window
/// began first, so a flood of made-up names costs bounded memory.
final class SignInThrottle: Sendable {
    private struct Entry {
        var failures: Int
        var windowStart: Date
    }

    /// Failures per account name within a window.
    let accountLimit: Int
    /// Failures per client address within a window.
    let clientLimit: Int
    /// How long a window lasts, from its first failure.
    let window: TimeInterval
    /// The most keys tracked at once.
    let maximumKeys: Int
    private let entries = Mutex<[String: Entry]>([:])

    init(accountLimit: Int, clientLimit: Int, window: TimeInterval, maximumKeys: Int) {
        self.accountLimit = max(1, accountLimit)
        self.clientLimit = max(1, clientLimit)
        self.window = max(0, window)
        self.maximumKeys = max(2, maximumKeys)
    }

    private static func keys(account: String, client: String?) -> [(key: String, isAccount: Bool)] {
        var keys = [("account:" + account, true)]
        if let client { keys.append(("client:" + client, false)) }
        return keys
    }

    /// The seconds until `account` (from `client`, when known) may try again, or `nil` when
    /// it may try now.
    func retryAfter(account: String, client: String?, now: Date = Date()) -> TimeInterval? {
        entries.withLock { entries in
            var wait: TimeInterval?
            for (key, isAccount) in Self.keys(account: account, client: client) {
                guard let entry = entries[key] else { continue }
                let end = entry.windowStart.addingTimeInterval(window)
                guard end > now else {
                    entries[key] = nil
                    continue
                }
                if entry.failures >= (isAccount ? accountLimit : clientLimit) {
                    wait = max(wait ?? 0, end.timeIntervalSince(now))
                }
            }
            return wait
        }
    }

    /// Counts a failed attempt for `account` and `client`.
    func recordFailure(account: String, client: String?, now: Date = Date()) {
        entries.withLock { entries in
            for (key, _) in Self.keys(account: account, client: client) {
                if var entry = entries[key], entry.windowStart.addingTimeInterval(window) > now {
                    entry.failures += 1
                    entries[key] = entry
                    continue
                }
                if entries[key] == nil, entries.count >= maximumKeys,
                    let oldest = entries.min(by: { $0.value.windowStart < $1.value.windowStart })?.key
                {
                    entries[oldest] = nil
                }
                entries[key] = Entry(failures: 1, windowStart: now)
            }
        }
    }

    /// Clears the count of `account` after it signed in.
    func recordSuccess(account: String) {
        _ = entries.withLock { $0.removeValue(forKey: "account:" + account) }
    }

    /// How many keys are tracked now.
    var trackedKeys: Int { entries.withLock { $0.count } }
}
