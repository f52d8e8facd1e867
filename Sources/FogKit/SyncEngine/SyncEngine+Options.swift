import Foundation

extension SyncEngine {
    /// Why the engine syncs (CloudKit's `CKSyncEngine.SyncReason`).
    public enum SyncReason: Sendable, Hashable, CustomStringConvertible {
        /// The engine scheduled it: automatic sync after a change, a notification or a retry.
        case scheduled
        /// The app called ``SyncEngine/fetchChanges(_:)`` or ``SyncEngine/sendChanges(_:)``.
        case manual

        /// `scheduled` or `manual`.
        public var description: String { self == .scheduled ? "scheduled" : "manual" }
    }

    /// What a fetch covers (CloudKit's `CKSyncEngine.FetchChangesOptions`).
    public struct FetchChangesOptions: Sendable {
        /// Which zones to fetch.
        public var scope: Scope
        /// The group the fetch's requests belong to.
        public var operationGroup: OperationGroup
        /// Zones fetched first, in this order; listed zones with nothing to fetch are ignored
        /// and the others follow in the engine's order.
        public var prioritizedZoneIDs: [RecordZone.ID] = []

        /// Options for `scope`, in `operationGroup` (a new group when `nil`).
        public init(scope: Scope = .all, operationGroup: OperationGroup? = nil) {
            self.scope = scope
            self.operationGroup = operationGroup ?? OperationGroup()
        }

        /// Which zones a fetch covers.
        public enum Scope: Sendable, Hashable {
            /// Every zone.
            case all
            /// Every zone but these.
            case allExcluding([RecordZone.ID])
            /// Only these zones.
            case zoneIDs([RecordZone.ID])

            /// Whether the scope covers `zoneID`.
            public func contains(_ zoneID: RecordZone.ID) -> Bool {
                switch self {
                case .all: true
                case .allExcluding(let excluded): !excluded.contains(zoneID)
                case .zoneIDs(let included): included.contains(zoneID)
                }
            }
        }
    }

    /// What a send covers (CloudKit's `CKSyncEngine.SendChangesOptions`).
    public struct SendChangesOptions: Sendable {
        /// Which changes to send.
        public var scope: Scope
        /// The group the send's requests belong to.
        public var operationGroup: OperationGroup

        /// Options for `scope`, in `operationGroup` (a new group when `nil`).
        public init(scope: Scope = .all, operationGroup: OperationGroup? = nil) {
            self.scope = scope
            self.operationGroup = operationGroup ?? OperationGroup()
        }

        /// Which changes a send covers.
        public enum Scope: Sendable, Hashable {
            /// Every pending change.
            case all
            /// Changes of every zone but these.
            case allExcluding([RecordZone.ID])
            /// Changes of these zones only.
            case zoneIDs([RecordZone.ID])
            /// Changes of these records only (and no zone changes).
            case recordIDs([Record.ID])

            /// Whether the scope covers the record `recordID`.
            public func contains(_ recordID: Record.ID) -> Bool {
                switch self {
                case .all: true
                case .allExcluding(let excluded): !excluded.contains(recordID.zoneID)
                case .zoneIDs(let included): included.contains(recordID.zoneID)
                case .recordIDs(let included): included.contains(recordID)
                }
            }

            /// Whether the scope covers `change`.
            public func contains(_ change: PendingRecordZoneChange) -> Bool { contains(change.recordID) }

            /// Whether the scope covers the zone change `change` (a record scope covers none).
            func contains(_ change: PendingDatabaseChange) -> Bool {
                switch self {
                case .all: true
                case .allExcluding(let excluded): !excluded.contains(change.zoneID)
                case .zoneIDs(let included): included.contains(change.zoneID)
                case .recordIDs: false
                }
            }
        }
    }

    /// The fetch a delegate is asked about or told of (CloudKit's
    /// `CKSyncEngine.FetchChangesContext`).
    public struct FetchChangesContext: Sendable {
        /// Why the engine fetches.
        public let reason: SyncReason
        /// The options of the fetch.
        public let options: FetchChangesOptions
    }

    /// The send a delegate is asked about or told of (CloudKit's
    /// `CKSyncEngine.SendChangesContext`).
    public struct SendChangesContext: Sendable {
        /// Why the engine sends.
        public let reason: SyncReason
        /// The options of the send.
        public let options: SendChangesOptions
    }
}
