import Foundation

/// A subscription as the `subscriptions` table stores it (JSON), with its predicate as
/// canonical predicate text. The zone owner is always a user record name (never the owner
/// placeholder).
struct StoredSubscription: Codable, Sendable, Hashable {
    var kind: Int
    var id: String
    /// The user record name of the user who saved it (the one notified).
    var subscriber: String
    /// The database it was saved in (``Database/Scope`` raw value).
    var scope: Int
    var recordType: String?
    var predicate: String?
    var options: UInt
    var zoneName: String?
    var zoneOwner: String?
    var info: Subscription.NotificationInfo?

    var type: Subscription.SubscriptionType { Subscription.SubscriptionType(rawValue: kind) ?? .query }
    var queryOptions: QuerySubscription.Options { QuerySubscription.Options(rawValue: options) }
    var databaseScope: Database.Scope { Database.Scope(rawValue: scope) ?? .private }

    var key: [UInt8] { Layout.subscriptionKey(subscriber: subscriber, scope: scope, id: id) }

    func encoded() throws -> [UInt8] { Array(try JSONEncoder().encode(self)) }

    static func decode(_ buffer: UnsafeRawBufferPointer) throws -> StoredSubscription {
        do {
            return try JSONDecoder().decode(StoredSubscription.self, from: Data(buffer))
        } catch {
            throw FormatError(message: "a subscription entry cannot be decoded: \(error)")
        }
    }

    /// The zone ID a subscriber uses for the zone (`owner`'s zone `zoneName`): the owner
    /// placeholder for the subscriber's own zones.
    static func zoneID(zoneName: String, owner: String, subscriber: String) -> RecordZone.ID {
        RecordZone.ID(zoneName: zoneName, ownerName: owner == subscriber || owner.isEmpty ? CurrentUserDefaultName : owner)
    }

    /// The public form.
    func makeSubscription() -> Subscription {
        let made: Subscription
        switch type {
        case .query:
            let predicate = (try? QueryPredicate(format: predicate ?? "TRUEPREDICATE")) ?? QueryPredicate(value: true)
            let q = QuerySubscription(recordType: recordType ?? "", predicate: predicate, subscriptionID: id, options: queryOptions)
            if let zoneName, let zoneOwner { q.zoneID = Self.zoneID(zoneName: zoneName, owner: zoneOwner, subscriber: subscriber) }
            made = q
        case .recordZone:
            let z = RecordZoneSubscription(
                zoneID: Self.zoneID(
                    zoneName: zoneName ?? RecordZone.ID.defaultZoneName, owner: zoneOwner ?? subscriber, subscriber: subscriber),
                subscriptionID: id)
            z.recordType = recordType
            made = z
        case .database:
            let d = DatabaseSubscription(subscriptionID: id)
            d.recordType = recordType
            made = d
        }
        made.notificationInfo = info
        return made
    }
}

/// A value a query notification carries for a desired key: the kinds CloudKit allows there.
enum NotificationValue: Codable, Sendable, Hashable {
    case string(String)
    case int64(Int64)
    case double(Double)
    case date(Double)
    case location(Double, Double)
    case reference(String, String, String)

    init?(_ value: FieldValue) {
        switch value {
        case .string(let s): self = .string(s)
        case .int64(let n): self = .int64(n)
        case .double(let d): self = .double(d)
        case .date(let d): self = .date(d.timeIntervalSinceReferenceDate)
        case .location(let l): self = .location(l.latitude, l.longitude)
        case .reference(let r): self = .reference(r.recordID.recordName, r.recordID.zoneID.zoneName, r.recordID.zoneID.ownerName)
        default: return nil
        }
    }

    var fieldValue: FieldValue {
        switch self {
        case .string(let s): .string(s)
        case .int64(let n): .int64(n)
        case .double(let d): .double(d)
        case .date(let d): .date(Date(timeIntervalSinceReferenceDate: d))
        case .location(let lat, let lon): .location(Location(latitude: lat, longitude: lon))
        case .reference(let name, let zone, let owner):
            .reference(
                Record.Reference(
                    recordID: Record.ID(recordName: name, zoneID: RecordZone.ID(zoneName: zone, ownerName: owner)), action: .none))
        }
    }
}

/// A notification as the `notifications` table stores it (JSON).
struct StoredNotification: Codable, Sendable, Hashable {
    var type: Int
    var subscriptionID: String
    var scope: Int
    /// Seconds since 2001 of the commit.
    var date: Double
    var reason: Int?
    var recordName: String?
    var zoneName: String?
    /// The zone's owner as a user record name (`nil` in the public database).
    var zoneOwner: String?
    var fields: [String: NotificationValue]?

    func encoded() throws -> [UInt8] { Array(try JSONEncoder().encode(self)) }

    static func decode(_ buffer: UnsafeRawBufferPointer) throws -> StoredNotification {
        do {
            return try JSONDecoder().decode(StoredNotification.self, from: Data(buffer))
        } catch {
            throw FormatError(message: "a notification entry cannot be decoded: \(error)")
        }
    }

    /// The public form, for `subscriber`, at `position`.
    func makeNotification(position: Int64, subscriber: String, container: String?) -> CloudNotification {
        let scope = Database.Scope(rawValue: scope) ?? .private
        let base = (
            id: CloudNotification.ID(position: position), container: container, owner: subscriber, subscriptionID: subscriptionID,
            scope: scope, date: Date(timeIntervalSinceReferenceDate: date)
        )
        let zoneID = StoredSubscription.zoneID(
            zoneName: zoneName ?? RecordZone.ID.defaultZoneName, owner: zoneOwner ?? "", subscriber: subscriber)
        switch CloudNotification.NotificationType(rawValue: type) {
        case .query:
            return QueryNotification(
                base: base, reason: QueryNotification.Reason(rawValue: reason ?? 1) ?? .recordCreated,
                recordID: Record.ID(recordName: recordName ?? "", zoneID: zoneID), recordFields: fields?.mapValues(\.fieldValue))
        case .recordZone:
            return RecordZoneNotification(base: base, zoneID: zoneID)
        default:
            return DatabaseNotification(
                type: .database, id: base.id, container: container, owner: subscriber, subscriptionID: subscriptionID, scope: scope,
                date: base.date)
        }
    }
}
