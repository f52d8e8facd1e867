import FogStorage
import Foundation
import Synchronization

/// Saving and deleting shares (reference §10.1; `Docs/Sharing.md`): a share is a record of
/// type `cloudkit.share` in its owner's zone whose state lives in reserved fields
/// (`Share+Storage.swift`); a hierarchy share's root names it in its `share` system field.
extension ModifyRun {
    /// The reserved fields a share is stored with, after CloudKit's rules: shares live in
    /// their owner's private database; a new hierarchy share comes in the same request as its
    /// root, which no other share may already hold (nor an ancestor of it, nor the zone); a
    /// share's root never changes; its owner is the user who first saved it; participants the
    /// client adds are pending, and those who accepted stay accepted.
    mutating func planShare(_ client: ClientRecord, existing: EncodedRecord?, zone: ZoneInfo) throws(FogError) -> [String: FieldValue?] {
        let name = client.recordID.recordName
        guard context.scope == .private, let share = client.record as? Share else {
            throw FogError(.invalidArguments, message: "share \(name): shares are saved in their owner's private database")
        }
        let root = share.rootRecordID?.recordName
        let owner: Share.Participant
        var storedParticipants: [Share.Participant] = []
        let url: String
        if let existing {
            let old = try fogTry { try existing.decoded() }
            var storedRoot: String?
            if case .string(let r)? = old.values[Share.rootKey] { storedRoot = r }
            guard storedRoot == root else {
                throw FogError(
                    .invalidArguments, message: "share \(name): its root record cannot change (it is \(storedRoot ?? "the zone"))")
            }
            if case .bytes(let data)? = old.values[Share.participantsKey] {
                storedParticipants = try fogTry { try Share.decodeParticipants(Array(data)) }
            }
            if case .string(let u)? = old.values[Share.urlKey] {
                url = u
            } else {
                url = Share.url(owner: user, zoneName: client.recordID.zoneID.zoneName, recordName: name).absoluteString
            }
            if let storedOwner = storedParticipants.first(where: { $0.role == .owner }) {
                owner = storedOwner
            } else {
                owner = try ownerParticipant()
            }
        } else {
            if let root {
                guard zone.capabilities.contains(.sharing) else {
                    throw FogError(
                        .invalidArguments, message: "share \(name): zone \(client.recordID.zoneID.zoneName) cannot share records")
                }
                guard savedInZone.contains(root) else {
                    throw FogError(
                        .invalidArguments,
                        message:
                            "share \(name): a new share must be saved in the same request as its root record \(root), and the root must save"
                    )
                }
                try checkNotShared(root: root, by: name, zone: zone.id)
                try checkNoSharedDescendant(of: root, zone: zone.id)
            } else {
                guard zone.capabilities.contains(.zoneWideSharing) else {
                    throw FogError(
                        .invalidArguments, message: "share \(name): zone \(client.recordID.zoneID.zoneName) cannot be shared as a whole")
                }
                try checkZoneHasNoShares(zone.id, zoneName: client.recordID.zoneID.zoneName)
            }
            url = Share.url(owner: user, zoneName: client.recordID.zoneID.zoneName, recordName: name).absoluteString
            owner = try ownerParticipant()
        }
        // The client's participants, the owner and duplicates left out; acceptance is the store's.
        var participants: [Share.Participant] = []
        for p in share.participants.dropFirst() where p.participantID != owner.participantID && !participants.contains(p) {
            let copy = p.copy()
            let stored = storedParticipants.first { $0 == p }
            copy.acceptanceStatus = stored?.acceptanceStatus == .accepted ? .accepted : .pending
            participants.append(copy)
        }
        return [
            Share.rootKey: root.map { .string($0) },
            Share.publicPermissionKey: .int64(Int64(share.publicPermission.rawValue)),
            Share.participantsKey: .bytes(Data(Share.encodeParticipants([owner] + participants))),
            Share.urlKey: .string(url),
        ]
    }

    /// The current user as a share's owner, with their directory entry's email and name.
    private func ownerParticipant() throws(FogError) -> Share.Participant {
        let users = writer.core.store.table(named: Layout.users)
        let entry = try fogTry { () throws -> UserDirectoryEntry? in
            guard let bytes = try txn.value(forKey: Layout.userEntryKey(user), in: users) else { return nil }
            return try UserDirectoryEntry.decode(bytes, userRecordName: user)
        }
        let id = Record.ID(recordName: user)
        let identity =
            entry?.userIdentity
            ?? UserIdentity(userRecordID: id, lookupInfo: .init(userRecordID: id), nameComponents: nil, hasiCloudAccount: true)
        return Share.Participant(userIdentity: identity, role: .owner, permission: .readWrite, acceptanceStatus: .accepted)
    }

    /// Throws ``FogError/Code/alreadyShared`` when `root`, or a record its `parent` chain
    /// reaches (as this request leaves them), is held by another share, or when the zone is
    /// shared as a whole.
    private mutating func checkNotShared(root: String, by shareName: String, zone: Int64) throws(FogError) {
        if try fogTry({ try writer.records.rowID(zone: zone, name: Share.zoneWideShareRecordName, in: txn.readView) }) != nil {
            throw FogError(.alreadyShared, message: "record \(root) cannot be shared: its zone is shared as a whole")
        }
        var current: String? = root
        var visited: Set<String> = []
        while let name = current, visited.insert(name).inserted {
            let stored = try fogTry { try loadDecoded(zone: zone, name: name)?.record }
            if let holder = stored?.share, holder != shareName {
                throw FogError(
                    .alreadyShared,
                    message: name == root
                        ? "record \(root) is already shared by share \(holder)"
                        : "record \(root) cannot be shared: its ancestor \(name) is shared by share \(holder)")
            }
            if let client = clientsInZone[name], stored == nil || client.parentChanged {
                current = client.parent?.recordID.recordName
            } else {
                current = stored?.parent
            }
        }
    }

    /// Throws ``FogError/Code/alreadyShared`` when a record below `root` (its `parent` chain, as
    /// this request leaves it, reaches `root`) is the root of another share. Reads every record
    /// header of the zone once: creating a share is rare, and no index leads from a record to
    /// its children.
    private mutating func checkNoSharedDescendant(of root: String, zone: Int64) throws(FogError) {
        var sharedRoots: [(name: String, share: String)] = []
        var resolver = names.resolver
        try fogTry {
            try txn.scan(writer.records.names, range: .prefix(Layout.namePrefix(zone: zone))) { _, value in
                let row = try readBigEndianKey(value)
                let stored = try txn.withValue(forKey: bigEndianKey(row), in: writer.records.table) {
                    try RecordCodec.decode($0, names: &resolver, desiredKeys: [])
                }
                if let stored, let share = stored.share, stored.recordName != root { sharedRoots.append((stored.recordName, share)) }
                return true
            }
        }
        for (name, share) in sharedRoots {
            var current: String? = name
            var visited: Set<String> = []
            while let node = current, visited.insert(node).inserted {
                if node == root {
                    throw FogError(
                        .alreadyShared, message: "record \(root) cannot be shared: record \(name) below it is shared by share \(share)")
                }
                if let client = clientsInZone[node] {
                    let stored = try fogTry { try loadDecoded(zone: zone, name: node)?.record }
                    current = stored == nil || client.parentChanged ? client.parent?.recordID.recordName : stored?.parent
                } else {
                    current = try fogTry { try loadDecoded(zone: zone, name: node)?.record.parent }
                }
            }
        }
    }

    /// Throws ``FogError/Code/alreadyShared`` when a record of the zone is shared or is a share.
    private func checkZoneHasNoShares(_ zone: Int64, zoneName: String) throws(FogError) {
        var holder: String?
        var resolver = names.resolver
        try fogTry {
            try txn.scan(writer.records.names, range: .prefix(Layout.namePrefix(zone: zone))) { _, value in
                let row = try readBigEndianKey(value)
                let stored = try txn.withValue(forKey: bigEndianKey(row), in: writer.records.table) {
                    try RecordCodec.decode($0, names: &resolver, desiredKeys: [])
                }
                if let stored, stored.share != nil || stored.recordType == Record.SystemType.share { holder = stored.recordName }
                return holder == nil
            }
        }
        if let holder {
            throw FogError(.alreadyShared, message: "zone \(zoneName) cannot be shared as a whole: record \(holder) is already shared")
        }
    }

    /// Sets the `share` of `root` (saved earlier in this request) to the new share, in the
    /// store and in the record the request returns for it.
    mutating func linkShare(_ shareName: String, toRoot root: String, zone: ZoneInfo, zoneID: RecordZone.ID) throws {
        try setShare(shareName, onRecordNamed: root, zone: zone.id)
        resultsInZone[root]?.state.withLock {
            $0.system.share = Record.Reference(recordID: Record.ID(recordName: shareName, zoneID: zoneID), action: .none)
        }
    }

    /// What deleting `record` does to sharing: a deleted share's root no longer names it (when
    /// the root stays); a deleted root takes its share along (added to `pending`).
    mutating func unlinkShare(of record: StoredRecord, zone: Int64, pending: inout [(row: Int64, target: String?)]) throws {
        if record.recordType == Record.SystemType.share, case .string(let root)? = record.values[Share.rootKey],
            !deletedNames.contains(root)
        {
            try setShare(nil, onRecordNamed: root, zone: zone)
        }
        if let shareName = record.share, !deletedNames.contains(shareName),
            let (row, share) = try loadDecoded(zone: zone, name: shareName), share.recordType == Record.SystemType.share,
            case .string(record.recordName)? = share.values[Share.rootKey]
        {
            pending.append((row, nil))
        }
    }

    /// Writes `shareName` (or none) into the `share` system field of the record `name`, if it
    /// exists. A record this request did not save yet gets a new change tag (and a change log
    /// entry); its fields, dates and index entries stay as they are.
    private mutating func setShare(_ shareName: String?, onRecordNamed name: String, zone: Int64) throws {
        guard let (row, found) = try loadDecoded(zone: zone, name: name), found.share != shareName else { return }
        var stored = found
        stored.share = shareName
        if stored.changeSequence != sequence {
            try logSave(zone: zone, row: row, name: name, previousSequence: stored.changeSequence)
            stored.changeSequence = sequence
        }
        let bytes = try RecordCodec.encode(stored, names: &names)
        try txn.put(bytes, forKey: bigEndianKey(row), in: writer.records.table)
    }
}

extension ModifyRun {
    /// Fills in `request` for a write in the shared database: whether an accepted share
    /// covers `record` as stored and, for a save, `client` as saved (a new record through its
    /// parent), the permission (read-write only when every covering share gives it), and
    /// whether the record is the root of its share.
    func describeSharedAccess(of record: StoredRecord?, client: ClientRecord?, into request: inout AccessRequest) throws(FogError) {
        guard let sharedZone else { return }
        var covering: [AcceptedShare?] = []
        if let record {
            covering.append(try coveringShare(of: record.recordName, share: record.share, parent: record.parent, zone: sharedZone))
        }
        if let client, record == nil || client.parentChanged {
            covering.append(
                try coveringShare(
                    of: client.recordID.recordName, share: record?.share, parent: client.parent?.recordID.recordName, zone: sharedZone))
        }
        let shares = covering.compactMap { $0 }
        let covered = !covering.isEmpty && shares.count == covering.count
        request.shareStanding = covered ? .participant(.accepted) : .outsider
        request.sharePermission = covered && shares.allSatisfy { $0.permission == .readWrite } ? .readWrite : .readOnly
        if let record, let share = record.share {
            request.isShareRoot = sharedZone.shares.contains { $0.name == share && $0.root == record.recordName }
        }
    }

    /// The accepted share that covers the record `name` whose `share` and `parent` are given:
    /// a zone-wide share, or the hierarchy share whose root the `parent` chain reaches (as
    /// this request leaves it). Share records are covered by none (participants do not write
    /// them).
    private func coveringShare(
        of name: String, share: String?, parent: String?, zone: (id: Int64, owner: String, shares: [AcceptedShare])
    ) throws(FogError) -> AcceptedShare? {
        if zone.shares.contains(where: { $0.name == name }) { return nil }
        if let zoneWide = zone.shares.first(where: { $0.root == nil }) { return zoneWide }
        var (current, share, parent) = (name, share, parent)
        var visited: Set<String> = []
        while visited.insert(current).inserted {
            if let share, let found = zone.shares.first(where: { $0.name == share && $0.root == current }) { return found }
            guard let next = parent else { return nil }
            let stored = try fogTry { try loadDecoded(zone: zone.id, name: next)?.record }
            if let client = clientsInZone[next], stored == nil || client.parentChanged {
                (current, share, parent) = (next, stored?.share, client.parent?.recordID.recordName)
            } else if let stored {
                (current, share, parent) = (next, stored.share, stored.parent)
            } else {
                return nil
            }
        }
        return nil
    }
}

extension ModifyRun {
    /// Marks the tombstone of `record` (just deleted at `sequence`, `row`) with the share that
    /// covered it, if any: the zone's zone-wide share, or the hierarchy share whose root its
    /// `parent` chain reaches (through the records this request deleted before it, by what
    /// they were covered by). See `Layout.sharedDeletionKey`.
    mutating func markSharedDeletion(of record: StoredRecord, zone: Int64, sequence: Int64, row: Int64) throws {
        var covering: String?
        let zoneWide: Bool
        if let known = zoneWideShares[zone] {
            zoneWide = known
        } else {
            zoneWide = try writer.records.rowID(zone: zone, name: Share.zoneWideShareRecordName, in: txn.readView) != nil
            zoneWideShares[zone] = zoneWide
        }
        if zoneWide || record.recordName == Share.zoneWideShareRecordName {
            covering = Share.zoneWideShareRecordName
        } else {
            var node: (name: String, share: String?, parent: String?)? = (record.recordName, record.share, record.parent)
            var visited: Set<String> = []
            while let current = node, visited.insert(current.name).inserted {
                if let share = current.share {
                    covering = share
                    break
                }
                guard let parent = current.parent else { break }
                if let known = deletedCoverage["\(zone) \(parent)"] {
                    covering = known
                    break
                }
                node = try loadDecoded(zone: zone, name: parent).map { (parent, $0.record.share, $0.record.parent) }
            }
        }
        // A record that left a shared hierarchy earlier: its deletion is for that share's participants.
        if let left = try takeMoveMark(of: record.recordName, zone: zone), covering == nil { covering = left }
        deletedCoverage["\(zone) \(record.recordName)"] = .some(covering)
        if let covering {
            try txn.put(
                Array(covering.utf8), forKey: Layout.sharedDeletionKey(zone: zone, sequence: sequence, row: row),
                in: writer.changes.changeTable)
        }
    }
}

extension ModifyRun {
    /// The user leaves the share `share` (stored at `row`): they are no longer among its
    /// participants, so its records leave their shared database at once. The share record
    /// changes in the owner's zone (a new change tag, in the owner's feeds).
    mutating func leaveShare(row: Int64, _ share: StoredRecord, zone: ZoneInfo) throws {
        guard case .bytes(let data)? = share.values[Share.participantsKey] else { return }
        let remaining = try Share.decodeParticipants(Array(data)).filter { $0.participantID != user }
        var changed = share
        changed.values[Share.participantsKey] = .bytes(Data(Share.encodeParticipants(remaining)))
        changed.changeSequence = sequence
        try txn.put(RecordCodec.encode(changed, names: &names), forKey: bigEndianKey(row), in: writer.records.table)
        try writer.indexes.updateIndexEntries(old: share, new: changed, row: row, zone: zone.id, txn: txn, names: &names.resolver)
        try logSave(zone: zone.id, row: row, name: share.recordName, previousSequence: share.changeSequence)
    }
}
