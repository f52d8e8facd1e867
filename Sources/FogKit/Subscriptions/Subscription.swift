import Foundation
import Synchronization

/// A persistent query on a database that produces a notification when records change
/// (CloudKit's `CKSubscription`).
///
/// Like CloudKit's, the class is abstract in practice: save one of its subclasses,
/// ``QuerySubscription``, ``RecordZoneSubscription`` or ``DatabaseSubscription``. A saved
/// subscription belongs to the user who saved it, in the database it was saved to, and
/// notifies only that user (`Docs/Subscriptions.md`).
public class Subscription: @unchecked Sendable, CustomStringConvertible {
    /// A subscription's identifier: unique within its database and user (CloudKit's
    /// `CKSubscription.ID`, a `String`).
    public typealias ID = String

    /// The kind of a subscription, with CloudKit's raw values.
    public enum SubscriptionType: Int, Sendable, Hashable, CustomStringConvertible {
        /// A ``QuerySubscription``.
        case query = 1
        /// A ``RecordZoneSubscription``.
        case recordZone = 2
        /// A ``DatabaseSubscription``.
        case database = 3

        /// `query`, `recordZone` or `database`.
        public var description: String {
            switch self {
            case .query: "query"
            case .recordZone: "recordZone"
            case .database: "database"
            }
        }
    }

    /// The subscription's identifier.
    public let subscriptionID: ID
    /// The subscription's kind.
    public let subscriptionType: SubscriptionType
    private let info: Mutex<NotificationInfo?>

    /// What the notifications of this subscription carry: `desiredKeys` selects the record
    /// fields a ``QueryNotification`` holds; the alert fields are kept and returned as they
    /// are (FogKit shows no alerts).
    public var notificationInfo: NotificationInfo? {
        get { info.withLock { $0 } }
        set { info.withLock { $0 = newValue } }
    }

    init(subscriptionID: ID, type: SubscriptionType) {
        self.subscriptionID = subscriptionID
        self.subscriptionType = type
        self.info = Mutex(nil)
    }

    /// The kind and identifier.
    public var description: String { "<\(subscriptionType)Subscription \(subscriptionID)>" }
}

extension Subscription {
    /// What a subscription's notifications carry (CloudKit's `CKSubscription.NotificationInfo`).
    ///
    /// FogKit delivers notifications in the process, not as pushes: ``desiredKeys`` decides
    /// the record fields a ``QueryNotification`` holds; the other fields are stored with the
    /// subscription and returned when it is fetched.
    public struct NotificationInfo: Sendable, Hashable, Codable {
        /// The alert's text.
        public var alertBody: String?
        /// The localization key of the alert's text.
        public var alertLocalizationKey: String?
        /// The fields whose values fill the alert's localized text.
        public var alertLocalizationArgs: [Record.FieldKey]?
        /// The alert's title.
        public var title: String?
        /// The localization key of the title.
        public var titleLocalizationKey: String?
        /// The fields whose values fill the localized title.
        public var titleLocalizationArgs: [Record.FieldKey]?
        /// The alert's subtitle.
        public var subtitle: String?
        /// The localization key of the subtitle.
        public var subtitleLocalizationKey: String?
        /// The fields whose values fill the localized subtitle.
        public var subtitleLocalizationArgs: [Record.FieldKey]?
        /// The localization key of the alert's action button.
        public var alertActionLocalizationKey: String?
        /// The launch image's file name.
        public var alertLaunchImage: String?
        /// The sound's file name.
        public var soundName: String?
        /// The record fields a ``QueryNotification`` carries in ``QueryNotification/recordFields``
        /// (at most 3 in CloudKit; strings, numbers, dates, locations and references).
        public var desiredKeys: [Record.FieldKey]?
        /// Whether the app's badge is incremented.
        public var shouldBadge: Bool
        /// Whether the push is a silent, content-available one.
        public var shouldSendContentAvailable: Bool
        /// Whether the push may be modified by a service extension.
        public var shouldSendMutableContent: Bool
        /// The notification's category.
        public var category: String?
        /// The field whose value becomes the push's collapse identifier.
        public var collapseIDKey: String?

        /// Creates notification info; every field is optional, as in CloudKit's memberwise
        /// initializer.
        public init(
            alertBody: String? = nil, alertLocalizationKey: String? = nil, alertLocalizationArgs: [Record.FieldKey]? = nil,
            title: String? = nil, titleLocalizationKey: String? = nil, titleLocalizationArgs: [Record.FieldKey]? = nil,
            subtitle: String? = nil, subtitleLocalizationKey: String? = nil, subtitleLocalizationArgs: [Record.FieldKey]? = nil,
            alertActionLocalizationKey: String? = nil, alertLaunchImage: String? = nil, soundName: String? = nil,
            desiredKeys: [Record.FieldKey]? = nil, shouldBadge: Bool = false, shouldSendContentAvailable: Bool = false,
            shouldSendMutableContent: Bool = false, category: String? = nil, collapseIDKey: String? = nil
        ) {
            self.alertBody = alertBody
            self.alertLocalizationKey = alertLocalizationKey
            self.alertLocalizationArgs = alertLocalizationArgs
            self.title = title
            self.titleLocalizationKey = titleLocalizationKey
            self.titleLocalizationArgs = titleLocalizationArgs
            self.subtitle = subtitle
            self.subtitleLocalizationKey = subtitleLocalizationKey
            self.subtitleLocalizationArgs = subtitleLocalizationArgs
            self.alertActionLocalizationKey = alertActionLocalizationKey
            self.alertLaunchImage = alertLaunchImage
            self.soundName = soundName
            self.desiredKeys = desiredKeys
            self.shouldBadge = shouldBadge
            self.shouldSendContentAvailable = shouldSendContentAvailable
            self.shouldSendMutableContent = shouldSendMutableContent
            self.category = category
            self.collapseIDKey = collapseIDKey
        }
    }
}

/// A subscription to the records of one type that match a predicate (CloudKit's
/// `CKQuerySubscription`): it fires when such a record is created, updated or deleted, as
/// its ``querySubscriptionOptions`` say. Allowed in the public and private databases.
public final class QuerySubscription: Subscription, @unchecked Sendable {
    /// When a query subscription fires (CloudKit's `CKQuerySubscription.Options`, same bits).
    public struct Options: OptionSet, Sendable, Hashable {
        /// The raw bits.
        public let rawValue: UInt
        /// Creates options from raw bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Fires when a matching record is created.
        public static let firesOnRecordCreation = Options(rawValue: 1 << 0)
        /// Fires when a matching record is updated.
        public static let firesOnRecordUpdate = Options(rawValue: 1 << 1)
        /// Fires when a matching record is deleted.
        public static let firesOnRecordDeletion = Options(rawValue: 1 << 2)
        /// The subscription is deleted in the commit that fires it.
        public static let firesOnce = Options(rawValue: 1 << 3)
    }

    /// The record type the subscription watches.
    public let recordType: Record.RecordType
    /// The condition a record must meet (the rules of queries apply).
    public let predicate: QueryPredicate
    private let state: Mutex<(options: Options, zoneID: RecordZone.ID?)>

    /// When the subscription fires.
    public var querySubscriptionOptions: Options {
        get { state.withLock { $0.options } }
        set { state.withLock { $0.options = newValue } }
    }

    /// The zone the subscription is limited to; `nil` for every zone of the database.
    public var zoneID: RecordZone.ID? {
        get { state.withLock { $0.zoneID } }
        set { state.withLock { $0.zoneID = newValue } }
    }

    /// Creates a query subscription with an identifier of your choice.
    public init(
        recordType: Record.RecordType, predicate: QueryPredicate, subscriptionID: Subscription.ID,
        options: Options = [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion]
    ) {
        self.recordType = recordType
        self.predicate = predicate
        self.state = Mutex((options, nil))
        super.init(subscriptionID: subscriptionID, type: .query)
    }

    /// Creates a query subscription with a generated identifier (a UUID).
    public convenience init(
        recordType: Record.RecordType, predicate: QueryPredicate,
        options: Options = [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion]
    ) {
        self.init(recordType: recordType, predicate: predicate, subscriptionID: UUID().uuidString, options: options)
    }
}

/// A subscription to every change in one zone (CloudKit's `CKRecordZoneSubscription`): one
/// notification per commit that changes records of the zone (of ``recordType`` when set).
/// Allowed in the private database, and in the shared database for a zone shared with the
/// user.
public final class RecordZoneSubscription: Subscription, @unchecked Sendable {
    /// The zone the subscription watches.
    public let zoneID: RecordZone.ID
    private let type: Mutex<Record.RecordType?>

    /// The record type the subscription is limited to; `nil` for every type.
    public var recordType: Record.RecordType? {
        get { type.withLock { $0 } }
        set { type.withLock { $0 = newValue } }
    }

    /// Creates a zone subscription.
    public init(zoneID: RecordZone.ID, subscriptionID: Subscription.ID) {
        self.zoneID = zoneID
        self.type = Mutex(nil)
        super.init(subscriptionID: subscriptionID, type: .recordZone)
    }
}

/// A subscription to every change in a database's custom zones (CloudKit's
/// `CKDatabaseSubscription`): one notification per commit that changes records in a custom
/// zone (of ``recordType`` when set). Allowed in the private and shared databases.
public final class DatabaseSubscription: Subscription, @unchecked Sendable {
    private let type: Mutex<Record.RecordType?>

    /// The record type the subscription is limited to; `nil` for every type.
    public var recordType: Record.RecordType? {
        get { type.withLock { $0 } }
        set { type.withLock { $0 = newValue } }
    }

    /// Creates a database subscription.
    public init(subscriptionID: Subscription.ID) {
        self.type = Mutex(nil)
        super.init(subscriptionID: subscriptionID, type: .database)
    }
}
