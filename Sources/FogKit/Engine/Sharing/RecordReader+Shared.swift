import FogStorage
import Foundation
import Synchronization

extension RecordReader {
    /// Fetches records of the shared database by ID: each from the owner's zone it names,
    /// when the zone is shared with the user (`zoneNotFound` otherwise) and the record is
    /// shared with them, which the access policy decides from whether an accepted share
    /// covers it: a zone-wide share, a hierarchy share whose root the record's `parent` chain
    /// reaches, or the share record itself. A record no accepted share covers is `unknownItem`,
    /// as one that does not exist: the owner's other records stay invisible.
    func fetchShared(
        _ ids: some Collection<Record.ID>, wanted: Set<String>?, context: DatabaseContext,
        _ deliver: (Record.ID, Result<Record, FogError>) -> Void
    ) throws {
        guard let user = context.user else {
            throw FogError(.internalError, message: "the access policy let nobody into a shared database")
        }
        try read { txn, names in
            let selection = try FieldSelection(wanted, names: &names)
            var zonesSeen: [RecordZone.ID: Result<(ZoneInfo, [AcceptedShare]), FogError>] = [:]
            var tables = FetchNameTables(
                shared: sharedTable, selection: selection, assetDirectory: assetDirectory, cipher: core.cipher)
            var arena = FieldArenaWriter(expectedRecords: ids.count)
            for id in ids {
                let zone: Result<(ZoneInfo, [AcceptedShare]), FogError>
                if let seen = zonesSeen[id.zoneID] {
                    zone = seen
                } else {
                    zone = Result { () throws(FogError) in try fogTry { try zones.sharedZone(id.zoneID, of: user, in: txn, names: &names) }
                    }
                    zonesSeen[id.zoneID] = zone
                }
                guard case .success(let (info, shares)) = zone else {
                    if case .failure(let e) = zone { deliver(id, .failure(e)) }
                    continue
                }
                guard let row = try records.rowID(zone: info.id, name: id.recordName, in: txn),
                    let stored = try records.withRecord(row, in: txn, { try RecordCodec.decode($0, names: &names, desiredKeys: []) })
                else {
                    deliver(
                        id,
                        .failure(FogError(.unknownItem, message: AccessPolicy.notShared(id.recordName))))
                    continue
                }
                let covering = try coveringShare(of: stored, among: shares, zone: info.id, in: txn, names: &names)
                do throws(FogError) {
                    try access.check(
                        .fetch,
                        AccessRequest(
                            caller: context.caller, scope: .shared, zoneOwner: id.zoneID.ownerName, zoneName: id.zoneID.zoneName,
                            recordType: stored.recordType, recordName: id.recordName, creator: stored.creator,
                            shareStanding: covering == nil ? .outsider : .participant(.accepted)))
                } catch {
                    deliver(id, .failure(error))
                    continue
                }
                let record = try records.withRecord(row, in: txn) { buffer in
                    let view = try RecordView(buffer, checking: selection)
                    return try view.makeRecord(id: id, table: tables.table(for: view, zoneID: id.zoneID), arena: &arena, names: &names)
                }
                guard let record else { continue }
                if let share = record as? Share {
                    share.shareState.withLock { state in
                        state.currentUser = ([state.owner] + state.participants).first { $0.participantID == user }
                    }
                }
                deliver(id, .success(record))
            }
            tables.publish()
        }
    }

    /// The accepted share that covers `record`: a zone-wide one, the share record itself, or
    /// a hierarchy share whose root `record`'s `parent` chain reaches (the root names the
    /// share in its `share` field). `nil` when none does.
    func coveringShare(
        of record: StoredRecord, among shares: [AcceptedShare], zone: Int64, in txn: Store.ReadTransaction,
        names: inout NameResolver<Store>
    ) throws -> AcceptedShare? {
        if let zoneWide = shares.first(where: { $0.root == nil }) { return zoneWide }
        if let itself = shares.first(where: { $0.name == record.recordName }) { return itself }
        var current: StoredRecord? = record
        var visited: Set<String> = []
        while let node = current, visited.insert(node.recordName).inserted {
            if let shareName = node.share, let share = shares.first(where: { $0.name == shareName && $0.root == node.recordName }) {
                return share
            }
            guard let parent = node.parent, let row = try records.rowID(zone: zone, name: parent, in: txn) else { return nil }
            current = try records.withRecord(row, in: txn) { try RecordCodec.decode($0, names: &names, desiredKeys: []) }
        }
        return nil
    }
}
