import Foundation

extension SyncEngine {
    /// What the engine tells its delegate (CloudKit's `CKSyncEngine.Event`), one at a time,
    /// in the order of CloudKit's engine:
    ///
    /// - a fetch: ``willFetchChanges(_:)``, ``fetchedDatabaseChanges(_:)`` pages, then for each
    ///   zone with changes ``willFetchRecordZoneChanges(_:)``, ``fetchedRecordZoneChanges(_:)``
    ///   pages and ``didFetchRecordZoneChanges(_:)``, then ``didFetchChanges(_:)``;
    /// - a send: ``willSendChanges(_:)``, ``sentDatabaseChanges(_:)`` per zone batch (zones go
    ///   before the records in them), ``sentRecordZoneChanges(_:)`` per record batch, then
    ///   ``didSendChanges(_:)``;
    /// - ``stateUpdate(_:)`` after every change of ``SyncEngine/state``, and
    ///   ``accountChange(_:)`` when the signed-in account changes.
    public enum Event: Sendable, CustomStringConvertible {
        /// The state changed: persist its serialization (with the data it describes).
        case stateUpdate(StateUpdate)
        /// The signed-in account changed; the engine reset its state.
        case accountChange(AccountChange)
        /// One page of the database's zone changes.
        case fetchedDatabaseChanges(FetchedDatabaseChanges)
        /// One page of record changes of a zone.
        case fetchedRecordZoneChanges(FetchedRecordZoneChanges)
        /// The result of one batch of zone changes.
        case sentDatabaseChanges(SentDatabaseChanges)
        /// The result of one batch of record changes.
        case sentRecordZoneChanges(SentRecordZoneChanges)
        /// A fetch starts.
        case willFetchChanges(WillFetchChanges)
        /// A zone's changes are about to be fetched.
        case willFetchRecordZoneChanges(WillFetchRecordZoneChanges)
        /// A zone's changes were fetched, or failed (``DidFetchRecordZoneChanges/error``).
        case didFetchRecordZoneChanges(DidFetchRecordZoneChanges)
        /// A fetch ended.
        case didFetchChanges(DidFetchChanges)
        /// A send starts.
        case willSendChanges(WillSendChanges)
        /// A send ended.
        case didSendChanges(DidSendChanges)

        /// The state after a change.
        public struct StateUpdate: Sendable {
            /// What to pass as ``Configuration/stateSerialization`` next time.
            public let stateSerialization: State.Serialization
        }

        /// A change of the signed-in account.
        public struct AccountChange: Sendable {
            /// What changed.
            public let changeType: ChangeType

            /// What changed, with the user record IDs involved.
            public enum ChangeType: Sendable, Hashable {
                /// Someone signed in where nobody was.
                case signIn(currentUser: Record.ID)
                /// The user signed out.
                case signOut(previousUser: Record.ID)
                /// Another user signed in in place of the previous one.
                case switchAccounts(previousUser: Record.ID, currentUser: Record.ID)
            }
        }

        /// Zones of the database that changed or went away.
        public struct FetchedDatabaseChanges: Sendable {
            /// Zones created or changed.
            public let modifications: [Database.DatabaseChange.Modification]
            /// Zones deleted or purged.
            public let deletions: [Database.DatabaseChange.Deletion]
        }

        /// Records of a zone that changed or went away.
        public struct FetchedRecordZoneChanges: Sendable {
            /// Records created or changed, as they are on the server.
            public let modifications: [Database.RecordZoneChange.Modification]
            /// Records deleted.
            public let deletions: [Database.RecordZoneChange.Deletion]
        }

        /// The result of one batch of zone changes.
        public struct SentDatabaseChanges: Sendable {
            /// Zones saved, as the server has them.
            public let savedZones: [RecordZone]
            /// Zones that could not be saved.
            public let failedZoneSaves: [FailedZoneSave]
            /// Zones deleted.
            public let deletedZoneIDs: [RecordZone.ID]
            /// Zones that could not be deleted, with why.
            public let failedZoneDeletes: [RecordZone.ID: FogError]

            /// A zone that could not be saved.
            public struct FailedZoneSave: Sendable {
                /// The zone.
                public let zone: RecordZone
                /// Why.
                public let error: FogError
            }
        }

        /// The result of one batch of record changes.
        public struct SentRecordZoneChanges: Sendable {
            /// Records saved, as the server has them now (cache their system fields).
            public let savedRecords: [Record]
            /// Records that could not be saved. The engine keeps transient failures pending
            /// and retries them; the others (`serverRecordChanged`, `zoneNotFound`,
            /// `unknownItem`, `quotaExceeded`, …) are no longer pending: the app resolves them
            /// and adds the change again.
            public let failedRecordSaves: [FailedRecordSave]
            /// Records deleted.
            public let deletedRecordIDs: [Record.ID]
            /// Records that could not be deleted, with why (same rules as failed saves).
            public let failedRecordDeletes: [Record.ID: FogError]

            /// A record that could not be saved.
            public struct FailedRecordSave: Sendable {
                /// The record as the app sent it.
                public let record: Record
                /// Why; for `serverRecordChanged`, ``FogError/serverRecord`` is the server's
                /// record, into which the app merges its changes.
                public let error: FogError
            }
        }

        /// A fetch starts.
        public struct WillFetchChanges: Sendable {
            /// The fetch.
            public let context: FetchChangesContext
        }

        /// A zone's changes are about to be fetched.
        public struct WillFetchRecordZoneChanges: Sendable {
            /// The zone.
            public let zoneID: RecordZone.ID
        }

        /// A zone's changes were fetched.
        public struct DidFetchRecordZoneChanges: Sendable {
            /// The zone.
            public let zoneID: RecordZone.ID
            /// `nil` on success; otherwise why the zone's fetch failed (`zoneNotFound`,
            /// `userDeletedZone`, or a transient error after the engine's retries).
            public let error: FogError?
        }

        /// A fetch ended.
        public struct DidFetchChanges: Sendable {
            /// The fetch.
            public let context: FetchChangesContext
        }

        /// A send starts.
        public struct WillSendChanges: Sendable {
            /// The send.
            public let context: SendChangesContext
        }

        /// A send ended.
        public struct DidSendChanges: Sendable {
            /// The send.
            public let context: SendChangesContext
        }

        /// The event's name and a summary of its payload.
        public var description: String {
            switch self {
            case .stateUpdate: "stateUpdate"
            case .accountChange(let e): "accountChange(\(e.changeType))"
            case .fetchedDatabaseChanges(let e):
                "fetchedDatabaseChanges(\(e.modifications.count) modified, \(e.deletions.count) deleted)"
            case .fetchedRecordZoneChanges(let e):
                "fetchedRecordZoneChanges(\(e.modifications.count) modified, \(e.deletions.count) deleted)"
            case .sentDatabaseChanges(let e):
                "sentDatabaseChanges(\(e.savedZones.count) saved, \(e.failedZoneSaves.count) failed saves, \(e.deletedZoneIDs.count) deleted, \(e.failedZoneDeletes.count) failed deletes)"
            case .sentRecordZoneChanges(let e):
                "sentRecordZoneChanges(\(e.savedRecords.count) saved, \(e.failedRecordSaves.count) failed saves, \(e.deletedRecordIDs.count) deleted, \(e.failedRecordDeletes.count) failed deletes)"
            case .willFetchChanges: "willFetchChanges"
            case .willFetchRecordZoneChanges(let e): "willFetchRecordZoneChanges(\(e.zoneID))"
            case .didFetchRecordZoneChanges(let e): "didFetchRecordZoneChanges(\(e.zoneID)\(e.error.map { ", \($0)" } ?? ""))"
            case .didFetchChanges: "didFetchChanges"
            case .willSendChanges: "willSendChanges"
            case .didSendChanges: "didSendChanges"
            }
        }
    }
}
