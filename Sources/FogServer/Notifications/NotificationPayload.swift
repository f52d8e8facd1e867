import FogKit
import Foundation

/// A notification as CloudKit JS parses a web push: `aps` (the alert of the subscription's
/// notification info) and `ck` with `nid`, `cid` and either `qry` (a query subscription:
/// `zid`, `zoid`, `sid`, `dbs`, `rid`, `fo` 1 created / 2 updated / 3 deleted, `af` the
/// desired fields' values) or `fet` (a zone or database subscription: `zid`, `zoid`, `sid`,
/// `dbs`). `dbs` is 1 public, 2 private, 3 shared.
enum NotificationPayload {
    static func json(_ notification: CloudNotification, container: Container) async -> JSON {
        let owner = notification.subscriptionOwnerUserRecordID?.recordName
        func zone(_ id: RecordZone.ID) -> [(String, JSON)] {
            let zoneOwner = id.ownerName == CurrentUserDefaultName ? (owner ?? CurrentUserDefaultName) : id.ownerName
            return [("zid", .string(id.zoneName)), ("zoid", .string(zoneOwner))]
        }
        let scope = notification.databaseScope
        var ck: [(String, JSON)] = [
            ("nid", .string(notification.notificationID.map { String($0.position) } ?? UUID().uuidString)),
            ("cid", .string(notification.containerIdentifier ?? "")),
        ]
        let common: [(String, JSON)] = [("sid", .string(notification.subscriptionID ?? "")), ("dbs", .int(dbs(scope)))]
        switch notification {
        case let query as QueryNotification:
            var members = (query.recordID.map { zone($0.zoneID) } ?? []) + common
            if let rid = query.recordID?.recordName { members.append(("rid", .string(rid))) }
            members.append(("fo", .int(Int64(query.queryNotificationReason.rawValue))))
            if let fields = query.recordFields, !fields.isEmpty {
                var af: [(String, JSON)] = []
                for key in fields.keys.sorted() {
                    guard let value = fields[key], let raw = rawValue(value) else { continue }
                    af.append((key, raw))
                }
                members.append(("af", .object(af)))
            }
            ck.append(("qry", .object(members)))
        case let zoneNotification as RecordZoneNotification:
            ck.append(("fet", .object((zoneNotification.recordZoneID.map(zone) ?? []) + common)))
        default:
            ck.append(("fet", .object(common)))
        }
        var aps: [(String, JSON)] = []
        if let id = notification.subscriptionID,
            let info = try? await container.database(with: scope).subscription(for: id).notificationInfo
        {
            aps = self.aps(info)
        }
        return .object([("aps", .object(aps)), ("ck", .object(ck))])
    }

    /// The scope's number, which is FogKit's raw value (CloudKit's).
    static func dbs(_ scope: Database.Scope) -> Int64 { Int64(scope.rawValue) }

    static func aps(_ info: Subscription.NotificationInfo) -> [(String, JSON)] {
        var alert: [(String, JSON)] = []
        if let body = info.alertBody { alert.append(("body", .string(body))) }
        if let key = info.alertLocalizationKey { alert.append(("loc-key", .string(key))) }
        if let args = info.alertLocalizationArgs { alert.append(("loc-args", .array(args.map(JSON.string)))) }
        if let key = info.alertActionLocalizationKey { alert.append(("action-loc-key", .string(key))) }
        if let image = info.alertLaunchImage { alert.append(("launch-image", .string(image))) }
        if let title = info.title { alert.append(("title", .string(title))) }
        if let subtitle = info.subtitle { alert.append(("subtitle", .string(subtitle))) }
        var aps: [(String, JSON)] = []
        if !alert.isEmpty { aps.append(("alert", .object(alert))) }
        if let sound = info.soundName { aps.append(("sound", .string(sound))) }
        if info.shouldBadge { aps.append(("badge", .int(1))) }
        if let category = info.category { aps.append(("category", .string(category))) }
        if info.shouldSendContentAvailable { aps.append(("content-available", .int(1))) }
        return aps
    }

    /// A field's value in its Web Services JSON form, without the type.
    static func rawValue(_ value: FieldValue) -> JSON? {
        guard let dictionary = try? WebServices.FieldValueDictionary(value), let inner = dictionary.value,
            let data = try? JSONEncoder().encode(inner)
        else { return nil }
        return .raw(Array(data))
    }
}
