import FogStorage
import Foundation

extension ZoneDirectory {
    /// The error for a request that reaches a zone that does not exist at `address`:
    /// `userDeletedZone` when the zone's last event in its database's change log is a purge
    /// (a user's deletion of their data, ``Database/purgeRecordZone(withID:)``), as CloudKit
    /// answers any later use of a zone the user deleted in Settings until the app saves it
    /// again (reference §4.5, §7.2); `zoneNotFound` otherwise (never created, deleted through
    /// the API, or purged so long ago that the event was pruned with the deletions).
    ///
    /// One read of the zone's last-event entry and one of the event itself: no scan.
    func missingZoneError(
        _ zoneID: RecordZone.ID, at address: ZoneAddress, in txn: some StorageReadTransaction, hint: String = ""
    )
        -> FogError
    {
        let purged = (try? lastEventIsPurge(at: address, in: txn)) ?? false
        if purged {
            return FogError(
                .userDeletedZone,
                message:
                    "zone \(zoneID.zoneName) was deleted by the user (purged); delete the local copy of its data, or save the zone again")
        }
        return FogError(.zoneNotFound, message: "zone \(zoneID.zoneName) does not exist\(hint)")
    }

    /// Whether the latest event the database change log holds for the zone at `address` is
    /// a purge.
    private func lastEventIsPurge(at address: ZoneAddress, in txn: some StorageReadTransaction) throws -> Bool {
        let table = changes.databaseChangeTable
        let last = Layout.databaseLastKey(scope: address.scope, owner: address.owner, zoneName: address.zoneName)
        guard let position = try txn.value(forKey: last, in: table) else { return false }
        let key = Layout.databaseLogPrefix(scope: address.scope, owner: address.owner) + position
        return try txn.withValue(forKey: key, in: table) { $0.first == ZoneChangeKind.purged.rawValue } ?? false
    }
}
