import Foundation

/// A notification that a subscription produced (CloudKit's `CKNotification`).
///
/// CloudKit's name without its prefix would be `Notification`, which is Foundation's; FogKit
/// calls its base class `CloudNotification` (see `Docs/CloudKitDifferences.md`). The
/// subclasses keep CloudKit's names: ``QueryNotification``, ``RecordZoneNotification`` and
/// ``DatabaseNotification``. Notifications are produced when a change commits, stored for
/// the subscriber, and delivered by ``Container/notifications(listener:)``.
public class CloudNotification: @unchecked Sendable, CustomStringConvertible {
    /// A notification's identifier: its position in the store's commit order (CloudKit's
    /// `CKNotification.ID`). A later notification has a greater identifier.
    public struct ID: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The position, from 1.
        public let position: Int64
        /// Creates an identifier from a position (as ``description`` shows it).
        public init(position: Int64) { self.position = position }
        /// Orders by position.
        public static func < (a: ID, b: ID) -> Bool { a.position < b.position }
        /// The position as text.
        public var description: String { String(position) }
    }

    /// The kind of a notification, with CloudKit's raw values.
    public enum NotificationType: Int, Sendable, Hashable, CustomStringConvertible {
        /// A ``QueryNotification``.
        case query = 1
        /// A ``RecordZoneNotification``.
        case recordZone = 2
        /// CloudKit's read notification (FogKit produces none).
        case readNotification = 3
        /// A ``DatabaseNotification``.
        case database = 4

        /// The kind's name.
        public var description: String {
            switch self {
            case .query: "query"
            case .recordZone: "recordZone"
            case .readNotification: "readNotification"
            case .database: "database"
            }
        }
    }

    /// The kind.
    public let notificationType: NotificationType
    /// The identifier, unique in the container and increasing in commit order.
    public let notificationID: ID?
    /// The container's identifier.
    public let containerIdentifier: String?
    /// The user record ID of the subscription's owner (the user notified).
    public let subscriptionOwnerUserRecordID: Record.ID?
    /// The subscription that fired.
    public let subscriptionID: Subscription.ID?
    /// Always `false`: FogKit's notifications are never cut to fit a push payload.
    public let isPruned: Bool
    /// The database the change happened in, as the subscriber sees it.
    public let databaseScope: Database.Scope
    /// When the change committed.
    public let date: Date

    init(
        type: NotificationType, id: ID, container: String?, owner: String, subscriptionID: Subscription.ID,
        scope: Database.Scope, date: Date
    ) {
        notificationType = type
        notificationID = id
        containerIdentifier = container
        subscriptionOwnerUserRecordID = Record.ID(recordName: owner)
        self.subscriptionID = subscriptionID
        isPruned = false
        databaseScope = scope
        self.date = date
    }

    /// The kind, identifier and subscription.
    public var description: String {
        "<\(notificationType) notification \(notificationID.map(\.description) ?? "?") of \(subscriptionID ?? "?") in \(databaseScope)>"
    }
}

/// A notification of a ``QuerySubscription``: a matching record was created, updated or
/// deleted (CloudKit's `CKQueryNotification`).
public final class QueryNotification: CloudNotification, @unchecked Sendable {
    /// Why a query subscription fired, with CloudKit's raw values.
    public enum Reason: Int, Sendable, Hashable, CustomStringConvertible {
        /// A matching record was created.
        case recordCreated = 1
        /// A matching record was updated.
        case recordUpdated = 2
        /// A matching record was deleted.
        case recordDeleted = 3

        /// The reason's name.
        public var description: String {
            switch self {
            case .recordCreated: "recordCreated"
            case .recordUpdated: "recordUpdated"
            case .recordDeleted: "recordDeleted"
            }
        }
    }

    /// Why the subscription fired.
    public let queryNotificationReason: Reason
    /// The record that changed.
    public let recordID: Record.ID?
    /// The values of the subscription's `desiredKeys` (strings, numbers, dates, locations
    /// and references) of a created or updated record, as the change left them; `nil` for
    /// a deletion or when no key was desired.
    public let recordFields: [Record.FieldKey: FieldValue]?

    init(
        base: (id: ID, container: String?, owner: String, subscriptionID: Subscription.ID, scope: Database.Scope, date: Date),
        reason: Reason, recordID: Record.ID, recordFields: [Record.FieldKey: FieldValue]?
    ) {
        queryNotificationReason = reason
        self.recordID = recordID
        self.recordFields = recordFields
        super.init(
            type: .query, id: base.id, container: base.container, owner: base.owner, subscriptionID: base.subscriptionID,
            scope: base.scope, date: base.date)
    }

    /// The kind, reason and record.
    public override var description: String {
        "<query notification \(notificationID.map(\.description) ?? "?"): \(queryNotificationReason) \(recordID?.recordName ?? "?") (\(subscriptionID ?? "?"))>"
    }
}

/// A notification of a ``RecordZoneSubscription``: records of the zone changed in one
/// commit (CloudKit's `CKRecordZoneNotification`). Fetch the zone's changes to see which.
public final class RecordZoneNotification: CloudNotification, @unchecked Sendable {
    /// The zone whose records changed.
    public let recordZoneID: RecordZone.ID?

    init(
        base: (id: ID, container: String?, owner: String, subscriptionID: Subscription.ID, scope: Database.Scope, date: Date),
        zoneID: RecordZone.ID
    ) {
        recordZoneID = zoneID
        super.init(
            type: .recordZone, id: base.id, container: base.container, owner: base.owner, subscriptionID: base.subscriptionID,
            scope: base.scope, date: base.date)
    }
}

/// A notification of a ``DatabaseSubscription``: records of custom zones of the database
/// changed in one commit (CloudKit's `CKDatabaseNotification`). Fetch the database's
/// changes, then the zones'.
public final class DatabaseNotification: CloudNotification, @unchecked Sendable {}
