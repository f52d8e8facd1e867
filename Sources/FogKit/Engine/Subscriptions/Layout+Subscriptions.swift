import FogStorage
import Foundation

/// Keys of the `subscriptions` and `notifications` tables (from format version 6).
/// `Docs/OnDiskFormat.md` describes both; change them together.
///
/// `subscriptions`:
///
/// | key | value |
/// |---|---|
/// | (subscriber, scope, subscription ID) | the subscription as JSON (``StoredSubscription``) |
///
/// `notifications`, keys starting with a tag:
///
/// | key | value |
/// |---|---|
/// | ("n", subscriber, position) | the notification as JSON (``StoredNotification``) |
/// | ("l", subscriber, listener name) | BE64 position of the last notification the listener acknowledged |
/// | ("h", subscriber) | BE64 horizon: the newest position pruned (older than the retention window) |
///
/// `meta` gains `subscriptionStamp` (16 random bytes, rewritten by every change to
/// `subscriptions`: the in-memory index of subscriptions is keyed by it) and
/// `nextNotification` (the counter of notification positions).
extension Layout {
    static let subscriptions = "subscriptions"
    static let notifications = "notifications"

    static let metaSubscriptionStamp: [UInt8] = Array("subscriptionStamp".utf8)
    static let metaNextNotification: [UInt8] = Array("nextNotification".utf8)

    /// `subscriptions`: (subscriber, scope, subscription ID).
    static func subscriptionKey(subscriber: String, scope: Int, id: String) -> [UInt8] {
        var w = KeyWriter(capacity: 24 + subscriber.utf8.count + id.utf8.count)
        w.append(subscriber)
        w.append(Int64(scope))
        w.append(id)
        return w.bytes
    }

    /// The prefix of one user's subscriptions in one database.
    static func subscriptionPrefix(subscriber: String, scope: Int) -> [UInt8] {
        var w = KeyWriter(capacity: 16 + subscriber.utf8.count)
        w.append(subscriber)
        w.append(Int64(scope))
        return w.bytes
    }

    /// `notifications`: ("n", subscriber, position).
    static func notificationKey(subscriber: String, position: Int64) -> [UInt8] {
        var w = KeyWriter(capacity: 16 + subscriber.utf8.count)
        w.append("n")
        w.append(subscriber)
        w.append(position)
        return w.bytes
    }

    /// The prefix of one user's notifications.
    static func notificationPrefix(subscriber: String) -> [UInt8] {
        var w = KeyWriter(capacity: 8 + subscriber.utf8.count)
        w.append("n")
        w.append(subscriber)
        return w.bytes
    }

    /// `notifications`: ("l", subscriber, listener).
    static func listenerKey(subscriber: String, listener: String) -> [UInt8] {
        var w = KeyWriter(capacity: 8 + subscriber.utf8.count + listener.utf8.count)
        w.append("l")
        w.append(subscriber)
        w.append(listener)
        return w.bytes
    }

    /// `notifications`: ("h", subscriber).
    static func notificationHorizonKey(subscriber: String) -> [UInt8] {
        var w = KeyWriter(capacity: 8 + subscriber.utf8.count)
        w.append("h")
        w.append(subscriber)
        return w.bytes
    }
}
