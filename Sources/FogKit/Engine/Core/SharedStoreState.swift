import Foundation
import Synchronization

/// What every engine open on one store in this process shares: the name cache. Several
/// containers and administrators may open one directory, each with its own ``Engine``; they
/// share one cache of the store's interned names and field types (which is keyed by the
/// catalog's version, so a schema change made through any of them, or another process,
/// reaches all).
///
/// Kept in a process-wide table by the store's directory, with a count of the engines that
/// hold it; the last ``release()`` removes it.
final class SharedStoreState: Sendable {
    /// The interned names and fixed field types of the store.
    let names = NameCache()
    /// The index of the store's subscriptions (keyed by the stamp in `meta`).
    let subscriptions = SubscriptionCache()
    /// Wakes the notification listeners of the store after a commit that wrote notifications.
    let notificationSignal = NotificationSignal()
    private let key: String

    private struct Entry {
        let state: SharedStoreState
        var holders: Int
    }

    private static let table = Mutex<[String: Entry]>([:])

    private init(key: String) {
        self.key = key
    }

    /// The state of the store in `directory`, made when no engine of this process holds it
    /// yet. Each call is matched by one ``release()``.
    static func acquire(location: StoreLocation) -> SharedStoreState {
        let key =
            location.isDirectory
            ? location.url.standardizedFileURL.resolvingSymlinksInPath().path : location.url.absoluteString
        return table.withLock { table in
            if var entry = table[key] {
                entry.holders += 1
                table[key] = entry
                return entry.state
            }
            let state = SharedStoreState(key: key)
            table[key] = Entry(state: state, holders: 1)
            return state
        }
    }

    /// Gives up one hold; the last one removes the state from the table.
    func release() {
        Self.table.withLock { table in
            guard var entry = table[key], entry.state === self else { return }
            entry.holders -= 1
            table[key] = entry.holders == 0 ? nil : entry
        }
    }
}
