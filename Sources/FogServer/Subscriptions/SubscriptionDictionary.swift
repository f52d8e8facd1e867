import FogKit
import Foundation

/// A subscription dictionary of a request: `{subscriptionID, subscriptionType ("query" |
/// "zone"), query, zoneID, firesOn, firesOnce, notificationInfo, zoneWide}`.
struct SubscriptionDictionary: Decodable, Sendable {
    var subscriptionID: String?
    var subscriptionType: String?
    var query: QueryDictionary?
    var zoneID: WebServices.ZoneID?
    var firesOn: [String]?
    var firesOnce: Bool?
    var notificationInfo: NotificationInfoDictionary?
    var zoneWide: Bool?

    /// The notification info keys of CloudKit Web Services, and FogKit's other ones.
    struct NotificationInfoDictionary: Decodable, Sendable {
        var alertBody: String?
        var alertLocalizationKey: String?
        var alertLocalizationArgs: [String]?
        var alertActionLocalizationKey: String?
        var alertLaunchImage: String?
        var soundName: String?
        var shouldBadge: Bool?
        var shouldSendContentAvailable: Bool?
        var shouldSendMutableContent: Bool?
        var title: String?
        var titleLocalizationKey: String?
        var titleLocalizationArgs: [String]?
        var subtitle: String?
        var subtitleLocalizationKey: String?
        var subtitleLocalizationArgs: [String]?
        var desiredKeys: [String]?
        var category: String?
        var collapseIDKey: String?

        var info: Subscription.NotificationInfo {
            Subscription.NotificationInfo(
                alertBody: alertBody, alertLocalizationKey: alertLocalizationKey, alertLocalizationArgs: alertLocalizationArgs,
                title: title, titleLocalizationKey: titleLocalizationKey, titleLocalizationArgs: titleLocalizationArgs,
                subtitle: subtitle, subtitleLocalizationKey: subtitleLocalizationKey, subtitleLocalizationArgs: subtitleLocalizationArgs,
                alertActionLocalizationKey: alertActionLocalizationKey, alertLaunchImage: alertLaunchImage, soundName: soundName,
                desiredKeys: desiredKeys, shouldBadge: shouldBadge ?? false,
                shouldSendContentAvailable: shouldSendContentAvailable ?? false,
                shouldSendMutableContent: shouldSendMutableContent ?? false, category: category, collapseIDKey: collapseIDKey)
        }
    }

    /// FogKit's subscription for this dictionary, with `id` as its identifier.
    ///
    /// - `query`: a ``QuerySubscription``; `firesOn` (default: all three) and `firesOnce`
    ///   become its options; a `zoneID` limits it to that zone unless `zoneWide` is true.
    /// - `zone` with a `zoneID`: a ``RecordZoneSubscription``; without one and with
    ///   `zoneWide: true`: a ``DatabaseSubscription`` (every custom zone); without either,
    ///   the default zone.
    func subscription(id: String, call: EndpointCall, callerRecordName: String?, path: String) throws -> Subscription {
        let subscription: Subscription
        switch subscriptionType {
        case "query":
            guard let query else { throw ServerError(.badRequest, "\(path).query: a query subscription needs a query") }
            let zone = call.zoneID(zoneID, callerRecordName: callerRecordName)
            let predicate = try query.query(zone: zone).predicate
            var options: QuerySubscription.Options = []
            for event in firesOn ?? ["create", "update", "delete"] {
                switch event {
                case "create": options.insert(.firesOnRecordCreation)
                case "update": options.insert(.firesOnRecordUpdate)
                case "delete": options.insert(.firesOnRecordDeletion)
                default: throw ServerError(.badRequest, "\(path).firesOn: unknown event \"\(event)\"")
                }
            }
            if firesOnce == true { options.insert(.firesOnce) }
            let made = QuerySubscription(recordType: query.recordType, predicate: predicate, subscriptionID: id, options: options)
            if zoneID != nil, zoneWide != true { made.zoneID = zone }
            subscription = made
        case "zone":
            if zoneID == nil, zoneWide == true {
                subscription = DatabaseSubscription(subscriptionID: id)
            } else {
                subscription = RecordZoneSubscription(zoneID: call.zoneID(zoneID, callerRecordName: callerRecordName), subscriptionID: id)
            }
        case nil: throw ServerError(.badRequest, "\(path).subscriptionType is missing")
        case let other?: throw ServerError(.badRequest, "\(path).subscriptionType: unknown type \"\(other)\" (query or zone)")
        }
        subscription.notificationInfo = notificationInfo?.info
        return subscription
    }

    /// The dictionary a response gives for `subscription`.
    static func json(_ subscription: Subscription, output: RecordOutput) -> JSON {
        var members: [(String, JSON)] = [("subscriptionID", .string(subscription.subscriptionID))]
        switch subscription {
        case let query as QuerySubscription:
            members.append(("subscriptionType", .string("query")))
            // The predicate written back as filterBy, left out when no filter list expresses it.
            var queryMembers: [(String, JSON)] = [("recordType", .string(query.recordType))]
            if let filters = FilterByOutput(output: output).filters(query.predicate) {
                queryMembers.append(("filterBy", .array(filters)))
            }
            members.append(("query", .object(queryMembers)))
            if let zone = query.zoneID { members.append(("zoneID", output.zoneIDJSON(zone))) }
            let options = query.querySubscriptionOptions
            var firesOn: [JSON] = []
            if options.contains(.firesOnRecordCreation) { firesOn.append(.string("create")) }
            if options.contains(.firesOnRecordUpdate) { firesOn.append(.string("update")) }
            if options.contains(.firesOnRecordDeletion) { firesOn.append(.string("delete")) }
            members.append(("firesOn", .array(firesOn)))
            members.append(("firesOnce", .bool(options.contains(.firesOnce))))
            members.append(("zoneWide", .bool(query.zoneID == nil)))
        case let zone as RecordZoneSubscription:
            members.append(("subscriptionType", .string("zone")))
            members.append(("zoneID", output.zoneIDJSON(zone.zoneID)))
            members.append(("zoneWide", .bool(false)))
        default:
            members.append(("subscriptionType", .string("zone")))
            members.append(("zoneWide", .bool(true)))
        }
        if let info = subscription.notificationInfo { members.append(("notificationInfo", notificationInfo(info))) }
        return .object(members)
    }

    static func notificationInfo(_ info: Subscription.NotificationInfo) -> JSON {
        var members: [(String, JSON)] = []
        func text(_ key: String, _ value: String?) { if let value { members.append((key, .string(value))) } }
        func list(_ key: String, _ value: [String]?) { if let value { members.append((key, .array(value.map(JSON.string)))) } }
        text("alertBody", info.alertBody)
        text("alertLocalizationKey", info.alertLocalizationKey)
        list("alertLocalizationArgs", info.alertLocalizationArgs)
        text("alertActionLocalizationKey", info.alertActionLocalizationKey)
        text("alertLaunchImage", info.alertLaunchImage)
        text("soundName", info.soundName)
        members.append(("shouldBadge", .bool(info.shouldBadge)))
        members.append(("shouldSendContentAvailable", .bool(info.shouldSendContentAvailable)))
        if info.shouldSendMutableContent { members.append(("shouldSendMutableContent", .bool(true))) }
        text("title", info.title)
        text("titleLocalizationKey", info.titleLocalizationKey)
        list("titleLocalizationArgs", info.titleLocalizationArgs)
        text("subtitle", info.subtitle)
        text("subtitleLocalizationKey", info.subtitleLocalizationKey)
        list("subtitleLocalizationArgs", info.subtitleLocalizationArgs)
        list("desiredKeys", info.desiredKeys)
        text("category", info.category)
        text("collapseIDKey", info.collapseIDKey)
        return .object(members)
    }
}
