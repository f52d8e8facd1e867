import FogStorage
import Foundation

/// Subscriptions and notifications: saving, deleting and fetching a user's subscriptions
/// (with CloudKit's per-database rules and the predicate rules of queries), the matcher a
/// modify request uses to produce notifications in its own transaction
/// (``NotificationMatcher``), and the notifications' reading and acknowledgement for
/// listeners. `Docs/Subscriptions.md` describes the model.
final class SubscriptionStore<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    let zones: ZoneDirectory<Store>
    let queries: QueryExecutor<Store>
    let reader: RecordReader<Store>
    /// (subscriber, scope, ID) → ``StoredSubscription``.
    let table: Table
    /// Notifications, listener positions and horizons (`Layout+Subscriptions.swift`).
    let notifications: Table

    init(core: EngineCore<Store>, zones: ZoneDirectory<Store>, queries: QueryExecutor<Store>, reader: RecordReader<Store>) {
        self.core = core
        self.zones = zones
        self.queries = queries
        self.reader = reader
        table = core.store.table(named: Layout.subscriptions)
        notifications = core.store.table(named: Layout.notifications)
    }

    /// Wakes the listeners of the store after a commit that wrote notifications.
    var signal: NotificationSignal { core.shared.notificationSignal }

    // MARK: - Subscriptions

    /// Saves and deletes subscriptions of the context's user, item by item, in one write
    /// transaction. A saved ID replaces the subscription of that ID.
    func modify(
        saving: [Subscription], deleting: [Subscription.ID], context: DatabaseContext
    ) async throws -> (saves: [(Subscription.ID, Result<Subscription, FogError>)], deletes: [(Subscription.ID, Result<Void, FogError>)]) {
        let user = try checkUser(context)
        let snapshots = saving.map(SubscriptionSnapshot.init)
        return try await write { [self] txn, names in
            try apply(saving: snapshots, deleting: deleting, user: user, context: context, txn: txn, names: &names)
        }
    }

    /// The blocking form of ``modify(saving:deleting:context:)``, for operations.
    func modifyAndWait(
        saving: [Subscription], deleting: [Subscription.ID], context: DatabaseContext
    ) throws -> (saves: [(Subscription.ID, Result<Subscription, FogError>)], deletes: [(Subscription.ID, Result<Void, FogError>)]) {
        let user = try checkUser(context)
        let snapshots = saving.map(SubscriptionSnapshot.init)
        return try writeAndWait { [self] txn, names in
            try apply(saving: snapshots, deleting: deleting, user: user, context: context, txn: txn, names: &names)
        }
    }

    private func checkUser(_ context: DatabaseContext) throws -> String {
        try access.check(.manageSubscriptions, in: context)
        guard let user = context.user else { throw FogError(.internalError, message: "the access policy let nobody subscribe") }
        return user
    }

    private func apply(
        saving: [SubscriptionSnapshot], deleting: [Subscription.ID], user: String, context: DatabaseContext,
        txn: Store.WriteTransaction, names: inout NameWriter<Store>
    ) throws -> (saves: [(Subscription.ID, Result<Subscription, FogError>)], deletes: [(Subscription.ID, Result<Void, FogError>)]) {
        var saves: [(Subscription.ID, Result<Subscription, FogError>)] = []
        var deletes: [(Subscription.ID, Result<Void, FogError>)] = []
        var changed = false
        for snapshot in saving {
            do {
                let stored = try validate(snapshot, user: user, context: context, txn: txn, names: &names.resolver)
                try txn.put(try stored.encoded(), forKey: stored.key, in: table)
                changed = true
                saves.append((snapshot.id, .success(stored.makeSubscription())))
            } catch let error as FogError {
                saves.append((snapshot.id, .failure(error)))
            }
        }
        for id in deleting {
            let key = Layout.subscriptionKey(subscriber: user, scope: context.scope.rawValue, id: id)
            if try txn.delete(key, in: table) {
                changed = true
                deletes.append((id, .success(())))
            } else {
                deletes.append(
                    (id, .failure(FogError(.unknownItem, message: "subscription \(id) does not exist in the \(context.scope) database"))))
            }
        }
        if changed { try stamp(txn) }
        return (saves, deletes)
    }

    /// Marks the subscriptions as changed: the in-memory index is rebuilt at the next write.
    func stamp(_ txn: Store.WriteTransaction) throws {
        try txn.put(Layout.newIncarnation(), forKey: Layout.metaSubscriptionStamp, in: core.meta)
    }

    /// CloudKit's rules for a subscription in the context's database (§9.2): which kinds each
    /// database allows, at least one firing option, a predicate that fits the schema (the
    /// rules of queries), an existing zone.
    private func validate(
        _ s: SubscriptionSnapshot, user: String, context: DatabaseContext, txn: Store.WriteTransaction,
        names: inout NameResolver<Store>
    ) throws(FogError) -> StoredSubscription {
        guard !s.id.isEmpty, s.id.utf8.count <= 255 else {
            throw FogError(.invalidArguments, message: "a subscription ID must be 1 to 255 bytes long")
        }
        let scope = context.scope
        var stored = StoredSubscription(
            kind: s.type.rawValue, id: s.id, subscriber: user, scope: scope.rawValue, recordType: s.recordType, predicate: nil,
            options: s.options.rawValue, zoneName: nil, zoneOwner: nil, info: s.info)
        if let type = s.recordType { try Validation.recordType(type) }
        switch s.type {
        case .query:
            guard scope != .shared else {
                throw FogError(
                    .invalidArguments, message: "query subscriptions are not supported in the shared database (subscription \(s.id))")
            }
            let firing: QuerySubscription.Options = [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion]
            guard !s.options.intersection(firing).isEmpty else {
                throw FogError(
                    .invalidArguments,
                    message:
                        "query subscription \(s.id) has none of firesOnRecordCreation, firesOnRecordUpdate, firesOnRecordDeletion")
            }
            try checkPredicate(s, context: context, txn: txn.readView, names: &names)
            stored.predicate = s.predicate?.node.formatted
            if let zoneID = s.zoneID {
                try checkZoneExists(zoneID, context: context, txn: txn.readView, names: &names)
                stored.zoneName = zoneID.zoneName
                stored.zoneOwner = scope == .public ? "" : user
            }
        case .recordZone:
            guard scope != .public, let zoneID = s.zoneID else {
                throw FogError(
                    .invalidArguments, message: "record zone subscriptions are not supported in the public database (subscription \(s.id))")
            }
            if scope == .shared {
                _ = try fogTry { try zones.sharedZone(zoneID, of: user, in: txn.readView, names: &names) }
                stored.zoneOwner = zoneID.ownerName
            } else {
                guard !zoneID.isDefaultZone else {
                    throw FogError(
                        .invalidArguments,
                        message: "record zone subscription \(s.id): the default zone has no change feed (fetchChanges); use a custom zone")
                }
                try checkZoneExists(zoneID, context: context, txn: txn.readView, names: &names)
                stored.zoneOwner = user
            }
            stored.zoneName = zoneID.zoneName
        case .database:
            guard scope != .public else {
                throw FogError(
                    .invalidArguments, message: "database subscriptions are not supported in the public database (subscription \(s.id))")
            }
        }
        return stored
    }

    private func checkZoneExists(
        _ zoneID: RecordZone.ID, context: DatabaseContext, txn: Store.ReadTransaction, names: inout NameResolver<Store>
    ) throws(FogError) {
        let address = try zones.address(of: zoneID, in: context)
        guard try fogTry({ try zones.zoneInfo(at: address, in: txn) }) != nil || address.isDefault else {
            throw FogError(.zoneNotFound, message: "zone \(zoneID.zoneName) does not exist")
        }
    }

    /// The predicate rules of queries: the predicate must fit the fields' types; in
    /// production the record type must exist and every field it reads must be indexed as the
    /// condition needs. A violation is `invalidArguments`.
    private func checkPredicate(
        _ s: SubscriptionSnapshot, context: DatabaseContext, txn: Store.ReadTransaction, names: inout NameResolver<Store>
    ) throws(FogError) {
        guard let recordType = s.recordType, let predicate = s.predicate else {
            throw FogError(.invalidArguments, message: "query subscription \(s.id) needs a record type and a predicate")
        }
        let query = Query(recordType: recordType, predicate: predicate)
        let prepared: PreparedQuery
        do {
            prepared = try queries.prepare(query, fixedOrder: nil, zone: nil, desiredKeys: nil, now: Date(), txn: txn, names: &names)
        } catch let error as FogError {
            throw FogError(.invalidArguments, message: "query subscription \(s.id): \(error.message)")
        } catch {
            throw FogError.wrapping(error)
        }
        guard context.schemaMode == .production else { return }
        let known = try fogTry {
            guard let typeID = prepared.typeID else { return false }
            return try txn.withValue(forKey: Layout.recordTypeKey(typeID), in: core.schema) { $0.isEmpty } ?? false
        }
        guard known else {
            throw FogError(.invalidArguments, message: "query subscription \(s.id): did not find record type \(recordType)")
        }
        if let missing = prepared.missing.first {
            throw FogError(
                .invalidArguments, message: "query subscription \(s.id): field '\(missing.field)' is not marked \(missing.word)")
        }
    }

    /// Fetches subscriptions of the context's user by ID (`unknownItem` for a missing one).
    func fetch(_ ids: [Subscription.ID], context: DatabaseContext) throws -> [(Subscription.ID, Result<Subscription, FogError>)] {
        let user = try checkUser(context)
        return try read { txn, _ in
            try ids.map { id in
                let key = Layout.subscriptionKey(subscriber: user, scope: context.scope.rawValue, id: id)
                guard let stored = try txn.withValue(forKey: key, in: table, { try StoredSubscription.decode($0) }) else {
                    return (
                        id, .failure(FogError(.unknownItem, message: "subscription \(id) does not exist in the \(context.scope) database"))
                    )
                }
                return (id, .success(stored.makeSubscription()))
            }
        }
    }

    /// Every subscription of the context's user in its database, by ID.
    func all(context: DatabaseContext) throws -> [Subscription] {
        let user = try checkUser(context)
        return try read { txn, _ in
            var found: [Subscription] = []
            try txn.scan(table, range: .prefix(Layout.subscriptionPrefix(subscriber: user, scope: context.scope.rawValue))) { _, value in
                found.append(try StoredSubscription.decode(value).makeSubscription())
                return true
            }
            return found
        }
    }

    // MARK: - Matching, inside a modify request's transaction

    /// The matcher for a modify request, or `nil` when the store has no subscription (then a
    /// write pays one `meta` read for subscriptions, and nothing else).
    func matcher(context: DatabaseContext, txn: Store.WriteTransaction) throws -> NotificationMatcher<Store>? {
        guard let stamp = try txn.value(forKey: Layout.metaSubscriptionStamp, in: core.meta) else { return nil }
        let index = try core.shared.subscriptions.index(stamp: stamp) {
            var all: [StoredSubscription] = []
            try txn.scan(table) { _, value in
                all.append(try StoredSubscription.decode(value))
                return true
            }
            return SubscriptionIndex(all)
        }
        guard !index.isEmpty else { return nil }
        return NotificationMatcher(service: self, index: index, retention: context.notificationRetention)
    }

    /// Writes the notifications a request produced, removes its fired `firesOnce`
    /// subscriptions, and prunes the subscribers' notifications older than `retention`.
    func write(
        _ pending: [(subscriber: String, notification: StoredNotification)], removing fired: [[UInt8]], now: Date,
        retention: TimeInterval, txn: Store.WriteTransaction
    ) throws {
        for (subscriber, notification) in pending {
            let position = try nextCounter(Layout.metaNextNotification, in: txn)
            try txn.put(
                try notification.encoded(), forKey: Layout.notificationKey(subscriber: subscriber, position: position), in: notifications)
        }
        for key in fired { _ = try txn.delete(key, in: table) }
        if !fired.isEmpty { try stamp(txn) }
        guard retention.isFinite else { return }
        let cutoff = now.timeIntervalSinceReferenceDate - retention
        for subscriber in Set(pending.map(\.subscriber)) {
            try prune(subscriber: subscriber, before: cutoff, limit: EngineDefaults.pruneBatchSize, txn: txn)
        }
    }

    /// Deletes up to `limit` of the oldest notifications of `subscriber` committed before
    /// `cutoff`, and moves the horizon past them.
    private func prune(subscriber: String, before cutoff: Double, limit: Int, txn: Store.WriteTransaction) throws {
        var expired: [([UInt8], Int64)] = []
        try txn.scan(notifications, range: .prefix(Layout.notificationPrefix(subscriber: subscriber))) { key, value in
            guard expired.count < limit, try StoredNotification.decode(value).date < cutoff else { return false }
            var reader = KeyReader(Array(key))
            _ = try reader.readString()
            _ = try reader.readString()
            expired.append((Array(key), try reader.readInt64()))
            return true
        }
        guard let last = expired.last else { return }
        for (key, _) in expired { _ = try txn.delete(key, in: notifications) }
        try txn.put(bigEndianKey(last.1), forKey: Layout.notificationHorizonKey(subscriber: subscriber), in: notifications)
    }

    // MARK: - Listeners

    /// The position the listener acknowledged last (0: none yet).
    func acknowledgedPosition(listener: String, subscriber: String) throws -> Int64 {
        try read { txn, _ in
            try txn.withValue(forKey: Layout.listenerKey(subscriber: subscriber, listener: listener), in: notifications) {
                try readBigEndianKey($0)
            } ?? 0
        }
    }

    /// Notifications of `subscriber` after `position`, at most `limit`, in commit order.
    ///
    /// - Throws: ``FogError/Code/changeTokenExpired`` when notifications after `position`
    ///   are gone, or would be, because they are older than `retention` (only for a position
    ///   a listener acknowledged: `fresh` listeners start with the oldest one retained).
    func notifications(
        of subscriber: String, after position: Int64, fresh: Bool, limit: Int, retention: TimeInterval, now: Date, listener: String
    ) throws -> [(Int64, StoredNotification)] {
        try read { txn, _ in
            let horizon =
                try txn.withValue(forKey: Layout.notificationHorizonKey(subscriber: subscriber), in: notifications) {
                    try readBigEndianKey($0)
                } ?? 0
            if !fresh, position < horizon {
                throw Self.expired(listener: listener, position: position)
            }
            let cutoff = retention.isFinite ? now.timeIntervalSinceReferenceDate - retention : -Double.infinity
            var found: [(Int64, StoredNotification)] = []
            let range = ScanRange(
                lower: Layout.notificationKey(subscriber: subscriber, position: position), lowerInclusive: false,
                upper: ScanRange.successor(ofPrefix: Layout.notificationPrefix(subscriber: subscriber)))
            try txn.scan(notifications, range: range) { key, value in
                var reader = KeyReader(Array(key))
                _ = try reader.readString()
                _ = try reader.readString()
                let at = try reader.readInt64()
                let notification = try StoredNotification.decode(value)
                if notification.date < cutoff {
                    if !fresh && found.isEmpty { throw Self.expired(listener: listener, position: position) }
                    return true
                }
                found.append((at, notification))
                return found.count < limit
            }
            return found
        }
    }

    private static func expired(listener: String, position: Int64) -> FogError {
        FogError(
            .changeTokenExpired,
            message:
                "listener '\(listener)' last acknowledged notification \(position); notifications after it are older than the "
                + "container's notificationRetention and were dropped. Reset the listener (resetNotificationListener) to go on "
                + "from the newest one.")
    }

    /// Records that `listener` acknowledged every notification up to `position` (a position
    /// below the stored one changes nothing).
    func acknowledge(position: Int64, listener: String, subscriber: String) async throws {
        try await write { [self] txn, _ in
            let key = Layout.listenerKey(subscriber: subscriber, listener: listener)
            let current = try txn.withValue(forKey: key, in: notifications) { try readBigEndianKey($0) } ?? 0
            if position > current { try txn.put(bigEndianKey(position), forKey: key, in: notifications) }
        }
    }

    /// Moves `listener` to the newest notification of `subscriber`, skipping any it missed.
    func resetListener(_ listener: String, subscriber: String) async throws {
        try await write { [self] txn, _ in
            var newest: Int64 = 0
            try txn.scan(notifications, range: .prefix(Layout.notificationPrefix(subscriber: subscriber)), reverse: true) { key, _ in
                var reader = KeyReader(Array(key))
                _ = try reader.readString()
                _ = try reader.readString()
                newest = try reader.readInt64()
                return false
            }
            try txn.put(bigEndianKey(newest), forKey: Layout.listenerKey(subscriber: subscriber, listener: listener), in: notifications)
        }
    }
}

/// What a modify request needs of a ``Subscription`` class instance, read once outside the
/// transaction (the instance is mutable).
struct SubscriptionSnapshot: Sendable {
    let id: String
    let type: Subscription.SubscriptionType
    let recordType: String?
    let predicate: QueryPredicate?
    let options: QuerySubscription.Options
    let zoneID: RecordZone.ID?
    let info: Subscription.NotificationInfo?

    init(_ s: Subscription) {
        id = s.subscriptionID
        type = s.subscriptionType
        info = s.notificationInfo
        switch s {
        case let q as QuerySubscription:
            (recordType, predicate, options, zoneID) = (q.recordType, q.predicate, q.querySubscriptionOptions, q.zoneID)
        case let z as RecordZoneSubscription:
            (recordType, predicate, options, zoneID) = (z.recordType, nil, [], z.zoneID)
        case let d as DatabaseSubscription:
            (recordType, predicate, options, zoneID) = (d.recordType, nil, [], nil)
        default:
            (recordType, predicate, options, zoneID) = (nil, nil, [], nil)
        }
    }
}
