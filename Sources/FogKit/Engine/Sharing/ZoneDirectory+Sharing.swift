import FogStorage
import Foundation

/// A share a participant accepted, as the shared database reads it.
struct AcceptedShare: Sendable, Hashable {
    /// The share record's name.
    let name: String
    /// The root record's name; `nil` for a zone-wide share.
    let root: String?
    /// What the participant may do.
    let permission: Share.ParticipantPermission
}

/// The zones of a participant's shared database: the owners' zones that hold a share the
/// participant accepted.
///
/// Accepting a share writes a hint in `users`, `FF` ("s", participant, owner, zone, share)
/// (`Layout.sharedZoneKey`). A hint is only a pointer: every use reads the share record it
/// names and keeps it only while the share exists and lists the participant as accepted, so
/// removing a participant or deleting a share (or its zone) revokes access at once, with no
/// hint to clean up.
extension ZoneDirectory {
    /// The shares `user` accepted in `owner`'s zone `zoneName`, verified, and the zone.
    /// `nil` when the zone does not exist or holds no such share.
    func acceptedShares(
        of user: String, owner: String, zoneName: String, in txn: Store.ReadTransaction, names: inout NameResolver<Store>
    ) throws -> (ZoneInfo, [AcceptedShare])? {
        let usersTable = core.store.table(named: Layout.users)
        var hinted: [String] = []
        try txn.scan(usersTable, range: .prefix(Layout.sharedZonePrefix(participant: user, owner: owner, zoneName: zoneName))) { key, _ in
            var reader = KeyReader(Array(key.dropFirst()))
            for _ in 0..<4 { _ = try reader.readString() }
            hinted.append(try reader.readString())
            return true
        }
        guard !hinted.isEmpty,
            let info = try zoneInfo(at: ZoneAddress(scope: Database.Scope.private.rawValue, owner: owner, zoneName: zoneName), in: txn)
        else { return nil }
        var accepted: [AcceptedShare] = []
        for name in hinted {
            guard let row = try records.rowID(zone: info.id, name: name, in: txn),
                let stored = try records.withRecord(row, in: txn, { try RecordCodec.decode($0, names: &names) }),
                stored.recordType == Record.SystemType.share, case .bytes(let data)? = stored.values[Share.participantsKey]
            else { continue }
            let participants = try Share.decodeParticipants(Array(data))
            guard let me = participants.first(where: { $0.participantID == user }), me.role != .owner,
                me.acceptanceStatus == .accepted
            else { continue }
            var root: String?
            if case .string(let r)? = stored.values[Share.rootKey] { root = r }
            accepted.append(AcceptedShare(name: name, root: root, permission: me.permission))
        }
        return accepted.isEmpty ? nil : (info, accepted)
    }

    /// Every owner's zone `user` ever accepted a share of (by the hints), shared or not now.
    func hintedZones(of user: String, in txn: Store.ReadTransaction) throws -> [(owner: String, zone: String)] {
        let usersTable = core.store.table(named: Layout.users)
        var candidates: [(owner: String, zone: String)] = []
        try txn.scan(usersTable, range: .prefix(Layout.sharedZonePrefix(participant: user))) { key, _ in
            var reader = KeyReader(Array(key.dropFirst()))
            _ = try reader.readString()
            _ = try reader.readString()
            let owner = try reader.readString()
            let zone = try reader.readString()
            if candidates.last.map({ $0 != (owner, zone) }) ?? true { candidates.append((owner, zone)) }
            return true
        }
        return candidates
    }

    /// The zones shared with `user`, by owner and zone name, with their stored info.
    func sharedZones(of user: String, in txn: Store.ReadTransaction, names: inout NameResolver<Store>) throws -> [(RecordZone.ID, ZoneInfo)]
    {
        var result: [(RecordZone.ID, ZoneInfo)] = []
        for (owner, zone) in try hintedZones(of: user, in: txn) {
            if let (info, _) = try acceptedShares(of: user, owner: owner, zoneName: zone, in: txn, names: &names) {
                result.append((RecordZone.ID(zoneName: zone, ownerName: owner), info))
            }
        }
        return result
    }

    /// The zone `zoneID` of the shared database of `user`: the owner's zone and the shares of
    /// it `user` accepted. `zoneNotFound` when it is not shared with `user` (a zone ID must name
    /// its owner: the owner placeholder names the user's own zones, which are not shared with them).
    func sharedZone(
        _ zoneID: RecordZone.ID, of user: String, in txn: Store.ReadTransaction, names: inout NameResolver<Store>
    ) throws -> (ZoneInfo, [AcceptedShare]) {
        guard zoneID.ownerName != CurrentUserDefaultName, zoneID.ownerName != user,
            let found = try acceptedShares(of: user, owner: zoneID.ownerName, zoneName: zoneID.zoneName, in: txn, names: &names)
        else {
            throw FogError(.zoneNotFound, message: "zone \(zoneID.zoneName) of \(zoneID.ownerName) is not shared with this user")
        }
        return found
    }
}

extension Layout {
    /// `users`: `FF` ("s", participant, owner, zone name, share name) → empty: a hint that the
    /// participant accepted the share (see `ZoneDirectory+Sharing.swift`).
    static func sharedZoneKey(participant: String, owner: String, zoneName: String, share: String) -> [UInt8] {
        var w = KeyWriter(capacity: 16 + participant.utf8.count + owner.utf8.count + zoneName.utf8.count + share.utf8.count)
        w.appendRawByte(directoryKeyPrefix)
        w.append("s")
        w.append(participant)
        w.append(owner)
        w.append(zoneName)
        w.append(share)
        return w.bytes
    }

    /// The prefix of the hints of one participant, optionally of one owner's zone.
    static func sharedZonePrefix(participant: String, owner: String? = nil, zoneName: String? = nil) -> [UInt8] {
        var w = KeyWriter(capacity: 16 + participant.utf8.count)
        w.appendRawByte(directoryKeyPrefix)
        w.append("s")
        w.append(participant)
        if let owner {
            w.append(owner)
            if let zoneName { w.append(zoneName) }
        }
        return w.bytes
    }
}

extension Layout {
    /// `changes`: the part of a zone's keys that marks tombstones of shared records.
    static let sharedDeletionPart: Int64 = 5

    /// `changes`: (zone, 5, sequence, row) → the name of the share that covered the record
    /// deleted at that log position (a zone-wide share, or the hierarchy share its `parent`
    /// chain reached), so that a participant's zone change feed reports the deletion without
    /// naming deleted records that were not shared with them. Removed with the tombstone.
    static func sharedDeletionKey(zone: Int64, sequence: Int64, row: Int64) -> [UInt8] {
        changeKey(zone: zone, part: sharedDeletionPart) {
            $0.append(sequence)
            $0.append(row)
        }
    }

    /// `changes`: the part of a zone's keys that marks records moved out of a shared hierarchy.
    static let sharedMovePart: Int64 = 6

    /// `changes`: (zone, 6, record name) → (sequence, share name): the record left the
    /// hierarchy of that share (its `parent`, or an ancestor's, changed) at that position, so
    /// that the share's participants' zone change feeds report it as deleted. Written over when
    /// it leaves a share again; removed when the record is deleted (its tombstone is then
    /// marked with the share, see ``sharedDeletionKey(zone:sequence:row:)``) or the zone.
    static func sharedMoveKey(zone: Int64, name: String) -> [UInt8] {
        changeKey(zone: zone, part: sharedMovePart) { $0.append(name) }
    }
}
