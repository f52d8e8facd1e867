import Foundation

extension Database {
    /// Zone events of a database feed (CloudKit's `CKDatabase.DatabaseChange`).
    public enum DatabaseChange {
        /// A zone that was created, or whose records changed.
        public struct Modification: Sendable, Hashable {
            /// The zone.
            public let zoneID: RecordZone.ID
        }

        /// A zone that went away.
        public struct Deletion: Sendable, Hashable {
            /// The zone.
            public let zoneID: RecordZone.ID
            /// Why it went away.
            public let reason: Reason

            /// Why a zone went away.
            public enum Reason: Sendable, Hashable {
                /// The zone was deleted.
                case deleted
                /// The user purged the zone's data (``Database/purgeRecordZone(withID:)``):
                /// delete the local copy and do not upload it again.
                case purged
                /// The user reset encrypted data; FogKit never reports it.
                case encryptedDataReset
            }
        }
    }

    /// Record events of a zone feed (CloudKit's `CKDatabase.RecordZoneChange`).
    public enum RecordZoneChange {
        /// A record created or changed since the token, as it is now.
        public struct Modification: Sendable {
            /// The record (with the desired keys only, when given).
            public let record: Record
        }

        /// A record deleted since the token.
        public struct Deletion: Sendable, Hashable {
            /// The deleted record's ID.
            public let recordID: Record.ID
            /// The deleted record's type.
            public let recordType: Record.RecordType
        }
    }

    /// One page of the zones that changed in this database since `changeToken` (`nil`
    /// for all of them).
    ///
    /// Each zone appears once, at its latest event. In the private database the default
    /// zone is left out, as in CloudKit, unless the container was opened with
    /// ``Container/ChangeFeeds/everyZone`` (which also gives the public database a feed).
    ///
    /// - Throws: ``FogError`` — `changeTokenExpired` for a token from another copy of the
    ///   store, or from before zone deletions that were pruned
    ///   (``Container/Configuration/tombstoneRetention``); `invalidArguments` for bytes that are not a database token, or the public
    ///   database without `.everyZone`.
    public func databaseChanges(
        since changeToken: ServerChangeToken?, resultsLimit: Int? = nil
    ) async throws -> (
        modifications: [DatabaseChange.Modification], deletions: [DatabaseChange.Deletion], changeToken: ServerChangeToken, moreComing: Bool
    ) {
        try checkOpen()
        let page = try engine.feeds.databaseChanges(since: changeToken, limit: resultsLimit ?? 0, context: context)
        return (
            page.changed.map { DatabaseChange.Modification(zoneID: $0) },
            page.deleted.map { DatabaseChange.Deletion(zoneID: $0.0, reason: $0.1 == .purged ? .purged : .deleted) },
            page.token, page.moreComing
        )
    }

    /// One page of the record changes in a zone since `changeToken` (`nil` for all).
    ///
    /// Each changed record appears once, as it is now; deleted records appear with their
    /// type. Pass the returned token to the next call; `moreComing` says whether more
    /// changes wait. By default only custom zones have feeds, as in CloudKit (see
    /// ``Container/ChangeFeeds``).
    ///
    /// - Throws: ``FogError`` — `changeTokenExpired` (start again from `nil`),
    ///   `zoneNotFound`, `invalidArguments` for a corrupt token or a zone without a feed.
    public func recordZoneChanges(
        inZoneWith zoneID: RecordZone.ID, since changeToken: ServerChangeToken?, desiredKeys: [Record.FieldKey]? = nil,
        resultsLimit: Int? = nil
    ) async throws -> (
        modificationResultsByID: [Record.ID: Result<RecordZoneChange.Modification, any Error>],
        deletions: [RecordZoneChange.Deletion], changeToken: ServerChangeToken, moreComing: Bool
    ) {
        try checkOpen()
        let page = try engine.feeds.zoneChanges(
            zoneID, since: changeToken, desiredKeys: desiredKeys, limit: resultsLimit ?? 0, context: context)
        var modifications: [Record.ID: Result<RecordZoneChange.Modification, any Error>] = [:]
        for record in page.changed { modifications[record.recordID] = .success(RecordZoneChange.Modification(record: record)) }
        return (
            modifications, page.deleted.map { RecordZoneChange.Deletion(recordID: $0.0, recordType: $0.1) }, page.token,
            page.moreComing
        )
    }

    /// The change token of a zone's current change point: what a fetch of the zone's changes
    /// that read them all would end with. CloudKit Web Services gives it as the `syncToken`
    /// of a zone dictionary; CloudKit's framework has no such call (a FogKit addition).
    ///
    /// - Throws: ``FogError`` — `zoneNotFound`, or `invalidArguments` for a zone without a
    ///   change feed.
    public func currentChangeToken(forZoneWith zoneID: RecordZone.ID) async throws -> ServerChangeToken {
        try checkOpen()
        return try engine.feeds.zoneChanges(zoneID, since: nil, desiredKeys: [], limit: 0, context: context, tokenOnly: true).token
    }

    /// Deletes a zone and its records as a user's "purge" of iCloud data does: the
    /// database feed reports it as purged, not deleted (a FogKit addition, to test how an
    /// app handles ``DatabaseChange/Deletion/Reason/purged``).
    ///
    /// - Throws: `zoneNotFound` when it does not exist; `invalidArguments` for the default
    ///   zone; `badDatabase` outside the private database.
    public func purgeRecordZone(withID zoneID: RecordZone.ID) async throws {
        try checkOpen()
        let result = try await engine.zones.modifyZones(saving: [], deleting: [zoneID], purging: true, context: context)
        try result.deletes[0].1.get()
    }
}
