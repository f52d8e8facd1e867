import FogStorage
import Foundation

/// The notifications one modify request produces, gathered while its changes are applied
/// and written at its end, in the same transaction (``SubscriptionStore/write(_:removing:now:retention:txn:)``).
///
/// A query subscription produces one notification per matching record change; a zone or
/// database subscription one per request (per commit) whatever the number of records it
/// changed. Each candidate comes from the ``SubscriptionIndex`` (never a walk over every
/// subscription), is evaluated against the record, and is asked about by the access policy:
/// a subscriber is told only about records they may read.
struct NotificationMatcher<Store: KeyValueStore> {
    let service: SubscriptionStore<Store>
    let index: SubscriptionIndex
    let retention: TimeInterval
    private(set) var pending: [(subscriber: String, notification: StoredNotification)] = []
    /// Zone and database subscriptions that fired in this request (by key).
    private var firedOnce: Set<[UInt8]> = []
    /// `firesOnce` query subscriptions that fired: removed at the end.
    private(set) var removed: [[UInt8]] = []

    init(service: SubscriptionStore<Store>, index: SubscriptionIndex, retention: TimeInterval) {
        self.service = service
        self.index = index
        self.retention = retention
    }

    /// A record change to match.
    struct Change {
        /// Where the record is stored: public (1) or private (2, the owner's zone, also for a
        /// write through the shared database).
        let scope: Int
        /// The zone's owner (empty in the public database).
        let owner: String
        let zoneName: String
        let record: StoredRecord
        let reason: QueryNotification.Reason
    }

    /// Whether a change of a record of `recordType` in `owner`'s zone `zoneName` may fire
    /// anything (before the record is read in full).
    func mayConcern(scope: Int, owner: String, zoneName: String, recordType: String) -> Bool {
        index.mayConcern(scope: scope, owner: owner, zoneName: zoneName, recordType: recordType)
    }

    mutating func recordChanged(_ change: Change, now: Date, txn: Store.ReadTransaction, names: inout NameResolver<Store>) throws {
        let record = change.record
        let date = now.timeIntervalSinceReferenceDate
        // Query subscriptions.
        let evaluator = PredicateEvaluator(now: now, searchFields: nil)
        let fields = StoredRecordFields(record: record)
        for candidate in index.queryCandidates(
            scope: change.scope, owner: change.owner, recordType: record.recordType, value: record.value(forKey:))
        {
            let s = candidate.stored
            let options = s.queryOptions
            let wanted: QuerySubscription.Options =
                switch change.reason {
                case .recordCreated: .firesOnRecordCreation
                case .recordUpdated: .firesOnRecordUpdate
                case .recordDeleted: .firesOnRecordDeletion
                }
            guard options.contains(wanted) else { continue }
            if let zoneName = s.zoneName, zoneName != change.zoneName { continue }
            if options.contains(.firesOnce), removed.contains(s.key) { continue }
            guard let predicate = candidate.predicate, evaluator.matches(predicate, fields) else { continue }
            guard try mayRead(s, change, txn: txn, names: &names) else { continue }
            var recordFields: [String: NotificationValue]?
            if change.reason != .recordDeleted, let keys = s.info?.desiredKeys, !keys.isEmpty {
                var values: [String: NotificationValue] = [:]
                for key in keys { if let v = record.value(forKey: key).flatMap(NotificationValue.init) { values[key] = v } }
                recordFields = values
            }
            pending.append(
                (
                    s.subscriber,
                    StoredNotification(
                        type: CloudNotification.NotificationType.query.rawValue, subscriptionID: s.id, scope: s.scope, date: date,
                        reason: change.reason.rawValue, recordName: record.recordName, zoneName: change.zoneName,
                        zoneOwner: change.owner.isEmpty ? nil : change.owner, fields: recordFields)
                ))
            if options.contains(.firesOnce) { removed.append(s.key) }
        }
        guard change.scope != Database.Scope.public.rawValue else { return }
        // Zone subscriptions: the owner's (private) and its participants' (shared).
        for candidate in index.zones[SubscriptionIndex.ZoneKey(owner: change.owner, zoneName: change.zoneName)] ?? [] {
            let s = candidate.stored
            guard !firedOnce.contains(s.key), s.recordType == nil || s.recordType == record.recordType else { continue }
            guard try mayRead(s, change, txn: txn, names: &names) else { continue }
            firedOnce.insert(s.key)
            pending.append(
                (
                    s.subscriber,
                    StoredNotification(
                        type: CloudNotification.NotificationType.recordZone.rawValue, subscriptionID: s.id, scope: s.scope, date: date,
                        zoneName: change.zoneName, zoneOwner: change.owner)
                ))
        }
        // Database subscriptions fire for custom zones only, as CloudKit's do.
        guard change.zoneName != RecordZone.ID.defaultZoneName else { return }
        for candidate in (index.databases[change.owner] ?? []) + index.sharedDatabases {
            let s = candidate.stored
            guard !firedOnce.contains(s.key), s.recordType == nil || s.recordType == record.recordType else { continue }
            if s.scope == Database.Scope.shared.rawValue, s.subscriber == change.owner { continue }
            guard try mayRead(s, change, txn: txn, names: &names) else { continue }
            firedOnce.insert(s.key)
            pending.append(
                (
                    s.subscriber,
                    StoredNotification(
                        type: CloudNotification.NotificationType.database.rawValue, subscriptionID: s.id, scope: s.scope, date: date)
                ))
        }
    }

    /// Whether the subscriber of `s` may read the changed record, as the access policy decides.
    private func mayRead(
        _ s: StoredSubscription, _ change: Change, txn: Store.ReadTransaction, names: inout NameResolver<Store>
    ) throws -> Bool {
        let record = change.record
        var request = AccessRequest(
            caller: .user(s.subscriber), scope: s.databaseScope, zoneOwner: change.owner,
            zoneName: change.zoneName, recordType: record.recordType, recordName: record.recordName, creator: record.creator)
        var grants = PublicGrants.none
        switch s.databaseScope {
        case .public:
            let snapshot = try service.core.publicRoles.snapshot(core: service.core, txn: txn)
            grants = snapshot.grants(
                ofType: try names.id(record.recordType), named: record.recordType, caller: request.caller, justInTime: false)
        case .private:
            // A private database subscription concerns its owner's own zones only.
            guard s.subscriber == change.owner else { return false }
            request.zoneOwner = nil
        case .shared:
            // The subscriber must have accepted a share that covers the record (a removed
            // participant has none, so their subscriptions stop firing).
            let zoneID = RecordZone.ID(zoneName: change.zoneName, ownerName: change.owner)
            guard let (_, shares) = try? service.zones.sharedZone(zoneID, of: s.subscriber, in: txn, names: &names) else { return false }
            let covering = try service.reader.coveringShare(of: record, among: shares, zone: record.zone, in: txn, names: &names)
            request.shareStanding = covering == nil ? .outsider : .participant(.accepted)
        }
        return service.access.mayNotify(request, grants: grants)
    }
}

/// A decoded record as the predicate evaluator reads it.
struct StoredRecordFields: PredicateFields {
    let record: StoredRecord

    func value(forKey key: String) -> FieldValue? { record.value(forKey: key) }

    func values(named keys: [String]?) -> [FieldValue] {
        if let keys { return keys.compactMap { record.values[$0] } }
        return Array(record.values.values)
    }

    func compareString(forKey key: String, with constant: String) -> Int? { nil }
}
