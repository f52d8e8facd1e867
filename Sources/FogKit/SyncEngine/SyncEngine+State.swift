import Foundation
import Synchronization

extension SyncEngine {
    /// What the engine keeps between runs (CloudKit's `CKSyncEngine.State`): the changes
    /// waiting to be sent, the change tokens, the zones with changes to fetch, the
    /// subscription and the user it syncs for. The engine reports every change with a
    /// ``Event/stateUpdate(_:)`` event, whose ``State/Serialization`` the app persists.
    ///
    /// Pending changes are ordered and de-duplicated as CloudKit's are: adding a change
    /// already pending keeps its first position; a save replaces a pending delete of the
    /// same record and a delete a pending save (zones likewise).
    public final class State: Sendable, CustomStringConvertible {
        private struct Box: Sendable {
            var storage: Storage
            /// How many times each record's change was added, so that a change added again
            /// while its batch is in flight stays pending after the batch succeeds.
            var versions: [Record.ID: Int] = [:]
        }

        private let box: Mutex<Box>
        /// Told of the app's changes (the engine reports them and schedules a send).
        let onAppChange: Mutex<(@Sendable (_ added: Bool) -> Void)?> = Mutex(nil)

        init(_ storage: Storage) { box = Mutex(Box(storage: storage)) }

        /// The record changes waiting to be sent, in the order they were added.
        public var pendingRecordZoneChanges: [PendingRecordZoneChange] { box.withLock { $0.storage.pendingRecordZoneChanges } }

        /// The zone changes waiting to be sent, in the order they were added.
        public var pendingDatabaseChanges: [PendingDatabaseChange] { box.withLock { $0.storage.pendingDatabaseChanges } }

        /// Whether the app has changes to send that it keeps itself (an outbox of its own).
        /// Setting it to `true` schedules a send, in which the engine asks the delegate for
        /// batches as usual; the engine sets it back to `false` after a send that ran out of
        /// batches.
        public var hasPendingUntrackedChanges: Bool {
            get { box.withLock { $0.storage.hasPendingUntrackedChanges } }
            set {
                let changed = box.withLock { b in
                    defer { b.storage.hasPendingUntrackedChanges = newValue }
                    return b.storage.hasPendingUntrackedChanges != newValue
                }
                if changed { notifyApp(added: newValue) }
            }
        }

        /// The zones the engine knows have changes it has not fetched yet (from the database
        /// feed or a notification).
        public var zoneIDsWithUnfetchedServerChanges: [RecordZone.ID] {
            box.withLock { $0.storage.zoneIDsWithUnfetchedServerChanges }
        }

        /// Adds record changes to send.
        public func add(pendingRecordZoneChanges changes: [PendingRecordZoneChange]) {
            guard !changes.isEmpty else { return }
            box.withLock { b in
                for change in changes {
                    b.versions[change.recordID, default: 0] += 1
                    Self.insert(change, into: &b.storage.pendingRecordZoneChanges) { $0.recordID == change.recordID }
                }
            }
            notifyApp(added: true)
        }

        /// Removes record changes (they will not be sent).
        public func remove(pendingRecordZoneChanges changes: [PendingRecordZoneChange]) {
            guard !changes.isEmpty else { return }
            let removing = Set(changes)
            box.withLock { $0.storage.pendingRecordZoneChanges.removeAll { removing.contains($0) } }
            notifyApp(added: false)
        }

        /// Adds zone changes to send; they go before record changes.
        public func add(pendingDatabaseChanges changes: [PendingDatabaseChange]) {
            guard !changes.isEmpty else { return }
            box.withLock { b in
                for change in changes {
                    Self.insert(change, into: &b.storage.pendingDatabaseChanges) { $0.zoneID == change.zoneID }
                }
            }
            notifyApp(added: true)
        }

        /// Removes zone changes (they will not be sent).
        public func remove(pendingDatabaseChanges changes: [PendingDatabaseChange]) {
            guard !changes.isEmpty else { return }
            let removing = Set(changes)
            box.withLock { $0.storage.pendingDatabaseChanges.removeAll { removing.contains($0) } }
            notifyApp(added: false)
        }

        /// The pending changes and the zones to fetch.
        public var description: String {
            box.withLock { b in
                "<SyncEngine.State \(b.storage.pendingRecordZoneChanges.count) pending record changes, \(b.storage.pendingDatabaseChanges.count) pending zone changes, \(b.storage.zoneIDsWithUnfetchedServerChanges.count) zones to fetch>"
            }
        }

        /// Adds `change` unless it is pending; an opposite change of the same item is
        /// replaced where it stood.
        private static func insert<C: Equatable>(_ change: C, into list: inout [C], sameItem: (C) -> Bool) {
            if list.contains(change) { return }
            if let i = list.firstIndex(where: sameItem) {
                list[i] = change
            } else {
                list.append(change)
            }
        }

        private func notifyApp(added: Bool) {
            let hook = onAppChange.withLock { $0 }
            hook?(added)
        }

        // MARK: - The engine's side

        /// The state as it is now, for a serialization.
        var storage: Storage { box.withLock { $0.storage } }

        /// Changes the state (the engine's own changes, which it reports itself).
        func update<R>(_ body: (inout Storage) -> R) -> R { box.withLock { body(&$0.storage) } }

        /// The versions of the record changes of `ids`, taken when a batch is built.
        func versions(of ids: [Record.ID]) -> [Record.ID: Int] {
            box.withLock { b in
                var found: [Record.ID: Int] = [:]
                for id in ids { found[id] = b.versions[id, default: 0] }
                return found
            }
        }

        /// Removes `change` after it was sent, unless the app added it again since `version`.
        func removeSent(_ changes: [PendingRecordZoneChange], versions: [Record.ID: Int]) {
            box.withLock { b in
                let sent = Set(changes.filter { b.versions[$0.recordID, default: 0] == versions[$0.recordID, default: 0] })
                b.storage.pendingRecordZoneChanges.removeAll { sent.contains($0) }
            }
        }

        /// A serialization of the state now.
        func serialization() -> Serialization { Serialization(storage: storage) }
    }
}

extension SyncEngine.State {
    /// The state as the app persists it (CloudKit's `CKSyncEngine.State.Serialization`): an
    /// opaque `Codable` value. Store it with the data it describes, and pass the latest one
    /// to ``SyncEngine/Configuration/stateSerialization`` when the app starts.
    public struct Serialization: Sendable, Codable, Hashable {
        let storage: Storage
    }

    /// What a serialization holds.
    struct Storage: Sendable, Codable, Hashable {
        /// The format of this value.
        var version = 1
        /// The database feed's token.
        var databaseToken: ServerChangeToken?
        /// Each zone feed's token.
        var zoneTokens: [RecordZone.ID: ServerChangeToken] = [:]
        var pendingRecordZoneChanges: [SyncEngine.PendingRecordZoneChange] = []
        var pendingDatabaseChanges: [SyncEngine.PendingDatabaseChange] = []
        var hasPendingUntrackedChanges = false
        var zoneIDsWithUnfetchedServerChanges: [RecordZone.ID] = []
        /// Whether the state knows which user it syncs for (`false` until the engine first
        /// saw the account).
        var knowsUser = false
        /// The user record name the state belongs to (`nil`: nobody was signed in).
        var userRecordName: String?
        /// The database subscription the engine saved, once it did.
        var subscriptionID: Subscription.ID?
        /// The name under which the engine reads the container's notifications.
        var listener = "SyncEngine-" + UUID().uuidString

        /// The state after an account change: everything of the previous account goes, the
        /// listener stays.
        func reset(for user: String?) -> Storage {
            var fresh = Storage()
            fresh.knowsUser = true
            fresh.userRecordName = user
            fresh.listener = listener
            return fresh
        }

        /// Marks `zoneID` as having changes to fetch.
        mutating func markUnfetched(_ zoneID: RecordZone.ID) {
            if !zoneIDsWithUnfetchedServerChanges.contains(zoneID) { zoneIDsWithUnfetchedServerChanges.append(zoneID) }
        }
    }
}
