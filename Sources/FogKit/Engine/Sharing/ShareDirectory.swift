import FogStorage
import Foundation
import Synchronization

/// Shares seen from outside their owner's private database: a share found by its URL (its
/// metadata) and accepted by a participant. Saving and deleting shares is the record
/// writer's (`ModifyRun+Shares.swift`); the share record's layout is `Share+Storage.swift`'s.
final class ShareDirectory<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    let records: RecordStore<Store>
    let indexes: IndexStore<Store>
    let changes: ChangeLog<Store>
    let zones: ZoneDirectory<Store>

    init(
        core: EngineCore<Store>, records: RecordStore<Store>, indexes: IndexStore<Store>, changes: ChangeLog<Store>,
        zones: ZoneDirectory<Store>
    ) {
        self.core = core
        self.records = records
        self.indexes = indexes
        self.changes = changes
        self.zones = zones
    }

    /// The caller's standing in `share`.
    static func standing(of user: String, in share: Share) -> ShareStanding {
        if share.owner.participantID == user { return .owner }
        if let participant = share.participants.dropFirst().first(where: { $0.participantID == user }) {
            return .participant(participant.acceptanceStatus)
        }
        return share.publicPermission == .none ? .outsider : .publicAccess
    }

    /// The share at `location` as `user` sees it (their participant as the current one), with
    /// `user`'s standing in it. `unknownItem` when there is no such share.
    func share(at location: ShareLocation, for user: String) throws -> (Share, ShareStanding) {
        let found = try read { txn, names -> StoredRecord? in
            guard let zone = try zones.zoneInfo(at: location.address, in: txn),
                let row = try records.rowID(zone: zone.id, name: location.recordName, in: txn)
            else { return nil }
            return try txn.withValue(forKey: bigEndianKey(row), in: records.table) { try RecordCodec.decode($0, names: &names) }
        }
        guard let found, found.recordType == Record.SystemType.share,
            let share = found.makeRecord(zoneID: location.zoneID, assetDirectory: assetDirectory) as? Share
        else {
            throw FogError(.unknownItem, message: "there is no share \(location.recordName) in zone \(location.zoneName) of its owner")
        }
        let standing = Self.standing(of: user, in: share)
        share.shareState.withLock { state in
            state.currentUser = ([state.owner] + state.participants).first { $0.participantID == user }
        }
        return (share, standing)
    }

    /// Accepts the share at `location` for `user`: a pending participant becomes accepted; on
    /// a share with a public permission, someone not invited joins as a public user. Asks
    /// `check` with the standing read inside the write. Returns the share as `user` sees it.
    func accept(
        at location: ShareLocation, for user: String, check: @escaping @Sendable (ShareStanding) throws -> Void
    ) async throws -> Share {
        try await write { [self] txn, names in try accept(at: location, for: user, check: check, txn: txn, names: &names) }
    }

    /// ``accept(at:for:check:)`` for a caller that may block its thread (an operation).
    func acceptAndWait(
        at location: ShareLocation, for user: String, check: @escaping @Sendable (ShareStanding) throws -> Void
    ) throws -> Share {
        try writeAndWait { [self] txn, names in try accept(at: location, for: user, check: check, txn: txn, names: &names) }
    }

    /// The root record of the share at `location` with the fields `desiredKeys` names (`nil`:
    /// all), its IDs naming the owner as zones of the shared database do; `nil` when it is
    /// gone. The caller has been let see the share's metadata.
    func rootRecord(_ name: String, at location: ShareLocation, desiredKeys: [String]?) throws -> Record? {
        let found = try read { txn, names -> StoredRecord? in
            guard let zone = try zones.zoneInfo(at: location.address, in: txn),
                let row = try records.rowID(zone: zone.id, name: name, in: txn)
            else { return nil }
            return try txn.withValue(forKey: bigEndianKey(row), in: records.table) {
                try RecordCodec.decode($0, names: &names, desiredKeys: desiredKeys.map(Set.init))
            }
        }
        return found?.makeRecord(zoneID: location.zoneID, assetDirectory: assetDirectory)
    }

    private func accept(
        at location: ShareLocation, for user: String, check: (ShareStanding) throws -> Void, txn: Store.WriteTransaction,
        names: inout NameWriter<Store>
    ) throws -> Share {
        guard let zone = try zones.zoneInfo(at: location.address, in: txn.readView),
            let row = try records.rowID(zone: zone.id, name: location.recordName, in: txn.readView),
            let old = try txn.withValue(
                forKey: bigEndianKey(row), in: records.table, { try RecordCodec.decode($0, names: &names.resolver) }),
            old.recordType == Record.SystemType.share,
            let share = old.makeRecord(zoneID: location.zoneID, assetDirectory: assetDirectory) as? Share
        else {
            throw FogError(.unknownItem, message: "there is no share \(location.recordName) in zone \(location.zoneName) of its owner")
        }
        let standing = Self.standing(of: user, in: share)
        try check(standing)
        var participants = share.participants
        switch standing {
        case .participant(.pending):
            participants.first { $0.participantID == user }?.acceptanceStatus = .accepted
        case .publicAccess:
            guard participants.count - 1 < Share.maximumParticipants else {
                throw FogError(
                    .tooManyParticipants, message: "share \(location.recordName) has \(Share.maximumParticipants) participants already")
            }
            let joined = Share.Participant(
                userIdentity: try identity(of: user, in: txn), role: .publicUser, permission: share.publicPermission,
                acceptanceStatus: .accepted)
            participants.append(joined)
        default:
            break  // The owner, or a participant who accepted already: nothing changes.
        }
        if standing != .owner {
            // The shared database finds the zone by this hint (`ZoneDirectory+Sharing.swift`).
            let hint = Layout.sharedZoneKey(
                participant: user, owner: location.owner, zoneName: location.zoneName, share: location.recordName)
            try txn.put([], forKey: hint, in: core.store.table(named: Layout.users))
        }
        if standing == .participant(.pending) || standing == .publicAccess {
            var new = old
            new.values[Share.participantsKey] = .bytes(Data(Share.encodeParticipants(participants)))
            let sequence = try nextCounter(Layout.metaSequence, in: txn)
            new.changeSequence = sequence
            try txn.put(RecordCodec.encode(new, names: &names), forKey: bigEndianKey(row), in: records.table)
            try indexes.updateIndexEntries(old: old, new: new, row: row, zone: zone.id, txn: txn, names: &names.resolver)
            if try changes.logSave(
                zone: zone.id, row: row, name: location.recordName, previousSequence: old.changeSequence, sequence: sequence, txn: txn)
            {
                try changes.noteStale(1, zone: zone.id, txn: txn)
            }
            try changes.logZone(.changed, address: location.address, zone: zone.id, sequence: sequence, txn: txn)
            share.shareState.withLock { state in
                state.participants = Array(participants.dropFirst())
            }
        }
        share.shareState.withLock { state in
            state.currentUser = ([state.owner] + state.participants).first { $0.participantID == user }
        }
        return share
    }

    /// The identity of `user` from the directory (or a bare one), inside a write.
    private func identity(of user: String, in txn: Store.WriteTransaction) throws -> UserIdentity {
        let table = core.store.table(named: Layout.users)
        if let bytes = try txn.value(forKey: Layout.userEntryKey(user), in: table) {
            return try UserDirectoryEntry.decode(bytes, userRecordName: user).userIdentity
        }
        let id = Record.ID(recordName: user)
        return UserIdentity(userRecordID: id, lookupInfo: .init(userRecordID: id), nameComponents: nil, hasiCloudAccount: true)
    }
}

/// Where a share lives: its owner, zone and record name.
struct ShareLocation: Sendable, Hashable {
    let owner: String
    let zoneName: String
    let recordName: String

    var zoneID: RecordZone.ID { RecordZone.ID(zoneName: zoneName, ownerName: owner) }
    var address: ZoneAddress { ZoneAddress(scope: Database.Scope.private.rawValue, owner: owner, zoneName: zoneName) }

    /// The location a share URL names (``Share/url(owner:zoneName:recordName:)``).
    init(url: URL) throws(FogError) {
        let text = url.absoluteString
        let prefix = "fogkit:share/"
        let parts = text.hasPrefix(prefix) ? text.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false) : []
        guard parts.count == 3, let owner = parts[0].removingPercentEncoding, let zone = parts[1].removingPercentEncoding,
            let record = parts[2].removingPercentEncoding, !owner.isEmpty, !zone.isEmpty, !record.isEmpty
        else {
            throw FogError(.invalidArguments, message: "\(text) is not a share URL of a FogKit store (fogkit:share/owner/zone/record)")
        }
        self.init(owner: owner, zoneName: zone, recordName: record)
    }

    init(owner: String, zoneName: String, recordName: String) {
        self.owner = owner
        self.zoneName = zoneName
        self.recordName = recordName
    }
}
