import Foundation
import Synchronization

/// The streams of ``Container/accountChanges`` that are being iterated, told of each change.
final class AccountWatchers: Sendable {
    private let continuations = Mutex<[UUID: AsyncStream<AccountStatus>.Continuation]>([:])

    /// A stream of the statuses after each change, from now on.
    func stream() -> AsyncStream<AccountStatus> {
        let (stream, continuation) = AsyncStream<AccountStatus>.makeStream(bufferingPolicy: .unbounded)
        let id = UUID()
        continuations.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.continuations.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    /// Tells every stream the status after a change.
    func yield(_ status: AccountStatus) {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(status) }
    }

    /// Ends every stream (the container closed).
    func finish() {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.finish() }
    }
}

extension Notification.Name {
    /// Posted on `NotificationCenter.default`, with the ``Container`` as its object, after
    /// the signed-in account of a container changes: a sign-in, a sign-out, a switch to
    /// another user, or a change of the account's ``AccountStatus`` (CloudKit's
    /// `.CKAccountChanged`; the same string value, `"CKAccountChangedNotification"`).
    public static let AccountChanged = Notification.Name("CKAccountChangedNotification")
}
