import FogStorage
import Foundation

extension ModifyRun {
    /// Where the zone being applied is stored, as subscriptions see it: the public database,
    /// or the private database of the zone's owner (a write through the shared database
    /// changes its owner's zone).
    private var notificationScope: (scope: Int, owner: String) {
        if let sharedZone { return (Database.Scope.private.rawValue, sharedZone.owner) }
        return context.scope == .public ? (Database.Scope.public.rawValue, "") : (Database.Scope.private.rawValue, user)
    }

    /// Matches a saved record (`stored`, whose values a new record holds; an update's come
    /// from `encoded`) against the subscriptions.
    mutating func notifySave(_ stored: StoredRecord, encoded: [UInt8], created: Bool) throws {
        guard var matcher = notices else { return }
        // Taken out while it changes, so its arrays are not copied.
        notices = nil
        defer { notices = matcher }
        let (scope, owner) = notificationScope
        guard matcher.mayConcern(scope: scope, owner: owner, zoneName: zoneNameBeingApplied, recordType: stored.recordType) else {
            return
        }
        var resolver = names.resolver
        let record = created ? stored : try encoded.withUnsafeBytes { try RecordCodec.decode($0, names: &resolver) }
        try matcher.recordChanged(
            .init(
                scope: scope, owner: owner, zoneName: zoneNameBeingApplied, record: record,
                reason: created ? .recordCreated : .recordUpdated),
            now: now, txn: txn.readView, names: &resolver)
        names.resolver = resolver
    }

    /// Matches a record about to be deleted (a cascade's too) against the subscriptions.
    mutating func notifyDelete(_ record: StoredRecord) throws {
        guard var matcher = notices else { return }
        // Taken out while it changes, so its arrays are not copied.
        notices = nil
        defer { notices = matcher }
        let (scope, owner) = notificationScope
        guard matcher.mayConcern(scope: scope, owner: owner, zoneName: zoneNameBeingApplied, recordType: record.recordType) else {
            return
        }
        var resolver = names.resolver
        try matcher.recordChanged(
            .init(scope: scope, owner: owner, zoneName: zoneNameBeingApplied, record: record, reason: .recordDeleted),
            now: now, txn: txn.readView, names: &resolver)
        names.resolver = resolver
    }
}
