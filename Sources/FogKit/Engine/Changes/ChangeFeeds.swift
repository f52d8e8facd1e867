import FogStorage
import Foundation

/// One page of a zone's change feed.
struct ZoneChangePage: Sendable {
    var changed: [Record] = []
    var deleted: [(Record.ID, Record.RecordType)] = []
    var token: ServerChangeToken
    var clientChangeTokenData: Data?
    var moreComing: Bool
}

/// One page of a database's change feed.
struct DatabaseChangePage: Sendable {
    var changed: [RecordZone.ID] = []
    var deleted: [(RecordZone.ID, ZoneChangeKind)] = []
    var token: ServerChangeToken
    var moreComing: Bool
}

/// Reads the change logs as CloudKit's change feeds: a zone's record changes and a
/// database's zone events after a change token, page by page.
final class ChangeFeeds<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    let records: RecordStore<Store>
    let changes: ChangeLog<Store>
    let zones: ZoneDirectory<Store>

    init(core: EngineCore<Store>, records: RecordStore<Store>, changes: ChangeLog<Store>, zones: ZoneDirectory<Store>) {
        self.core = core
        self.records = records
        self.changes = changes
        self.zones = zones
    }

    /// The changes of a zone after `token` (from the start for `nil`), at most `limit`
    /// (0 for the default page size), read in one snapshot. Each changed record appears
    /// once, as it is now, at its latest entry (earlier, stale entries are skipped);
    /// deletions appear as tombstones.
    /// - Parameter tokenOnly: Return no changes, only the token of the zone's current change
    ///   point (what a fetch that read everything would end with).
    func zoneChanges(
        _ zoneID: RecordZone.ID, since token: ServerChangeToken?, desiredKeys: [String]?, limit: Int, context: DatabaseContext,
        tokenOnly: Bool = false
    ) throws -> ZoneChangePage {
        var start = try token.map { token throws(FogError) in try ChangeTokenContent(token, expected: .zone) }
        try access.check(.zoneChanges, in: context)
        _ = try context.injectFaults(.fetchZoneChanges, zones: [zoneID])
        try Self.checkLimit(limit)
        let limit = limit > 0 ? limit : EngineDefaults.changePageSize
        let wanted = desiredKeys.map(Set.init)
        return try read { txn, names in
            // In the shared database: the owner's zone, and what the user's shares of it cover.
            var coverage: SharedCoverage?
            let address: ZoneAddress
            let info: ZoneInfo?
            if context.scope == .shared, let user = context.user {
                let (found, shares) = try zones.sharedZone(zoneID, of: user, in: txn, names: &names)
                (address, info) = (
                    ZoneAddress(scope: Database.Scope.private.rawValue, owner: zoneID.ownerName, zoneName: zoneID.zoneName), found
                )
                coverage = SharedCoverage(shares)
                try checkFeed(zone: address, context: context)
            } else {
                address = try zones.address(of: zoneID, in: context)
                try checkFeed(zone: address, context: context)
                info = try zones.zoneInfo(at: address, in: txn)
            }
            if info == nil, !address.isDefault {
                throw zones.missingZoneError(zoneID, at: address, in: txn)
            }
            let current = try currentSequence(in: txn)
            // Read in the snapshot: a development reset changes it (from another process too).
            let incarnation = try core.incarnation(in: txn)
            let zone = info?.id ?? 0
            let created = info?.createdSequence ?? 0
            func token(_ sequence: Int64, _ row: Int64) -> ServerChangeToken {
                ChangeTokenContent.zone(incarnation: incarnation, zone: zone, created: created, sequence: sequence, row: row).token
            }
            if let token = start {
                guard token.incarnation == incarnation else {
                    throw FogError(
                        .changeTokenExpired, message: "the change token comes from another copy of the store; fetch again from a nil token")
                }
                guard token.sequence <= current else {
                    throw FogError(
                        .changeTokenExpired,
                        message: "the change token is newer than the store (a restored copy?); fetch again from a nil token")
                }
                if token.scope == 0, address.isDefault, created > token.sequence {
                    // The token was taken before the default zone existed: everything in
                    // the zone is new to it.
                    start = nil
                } else if token.scope != zone || token.zoneCreated != created {
                    if token.scope != 0, try txn.contains(bigEndianKey(token.scope), in: zones.zoneIDs) {
                        throw FogError(.invalidArguments, message: "the change token belongs to another zone than \(zoneID.zoneName)")
                    }
                    throw FogError(
                        .changeTokenExpired,
                        message:
                            "zone \(zoneID.zoneName) was deleted and created again since the change token; fetch again from a nil token")
                } else if let horizon = try changes.horizon(zone: zone, txn: txn),
                    (token.sequence, token.item) < (horizon.sequence, horizon.row)
                {
                    throw FogError(
                        .changeTokenExpired,
                        message: "deletions since the change token were pruned (tombstone retention); fetch again from a nil token")
                }
            }
            guard let info, !tokenOnly else { return ZoneChangePage(token: token(current, .max), moreComing: false) }

            let prefix = Layout.changeKey(zone: info.id, part: Layout.logPart)
            var range = ScanRange.prefix(prefix)
            if let start {
                (range.lower, range.lowerInclusive) = (prefix + Layout.position(sequence: start.sequence, row: start.item), false)
            }
            var page = ZoneChangePage(
                token: token(current, .max), clientChangeTokenData: try changes.clientChangeToken(zone: info.id, txn: txn),
                moreComing: false)
            var count = 0
            var last: (Int64, Int64)?
            var covered: [String: Bool] = [:]
            let table = FieldNameTable(
                zoneID: zoneID, assetDirectory: assetDirectory, selection: try FieldSelection(wanted, names: &names), cipher: core.cipher)
            var arena = FieldArenaWriter(expectedRecords: limit)
            // The public database's feed leaves out the records the caller may not read.
            var roles = context.scope == .public ? try PublicReadRoles(core: core, caller: context.caller, txn: txn, names: &names) : nil
            try txn.scan(changes.changeTable, range: range) { key, value in
                if count == limit {
                    page.moreComing = true
                    return false
                }
                guard key.starts(with: prefix) else { throw FormatError(message: "a key in zone \(zone)'s change log is damaged") }
                var reader = KeyReader(UnsafeRawBufferPointer(rebasing: key[prefix.count...]))
                let sequence = try reader.readInt64()
                let row = try reader.readInt64()
                var r = ByteReader(value)
                count += 1
                last = (sequence, row)
                switch try r.u8() {
                case Layout.changedEntry:
                    var left: (Record.ID, Record.RecordType)?
                    var stale = false
                    let made = try records.withRecord(row, in: txn) { buffer -> Record? in
                        let view = try RecordView(buffer, checking: table.selection)
                        // The entry of an earlier change: the record's later entry reports it.
                        guard view.changeSequence == sequence else {
                            stale = true
                            return nil
                        }
                        if let coverage, !(try isCovered(view, coverage, zone: zone, memo: &covered, txn: txn)) {
                            // A record that left a hierarchy shared with the user since the token is reported deleted.
                            if let start, try hasLeft(view.recordName, coverage, zone: zone, after: start, txn: txn) {
                                left = (Record.ID(recordName: view.recordName, zoneID: zoneID), try names.name(view.type))
                            }
                            return nil
                        }
                        // The public database's feed leaves out the records the caller may not read.
                        if roles != nil, try !roles!.mayRead(view, names: &names) { return nil }
                        return try view.makeRecord(id: nil, table: table, arena: &arena, names: &names)
                    }
                    // A stale entry (its record changed again, or is gone: its tombstone
                    // reports it) is skipped, and does not count against the page's limit.
                    guard let made, !stale else {
                        count -= 1
                        return true
                    }
                    // A record no share of the user covers, or that the caller may not read, is left out.
                    guard let record = made else {
                        if let left { page.deleted.append(left) }
                        return true
                    }
                    if let share = record as? Share, let user = context.user { share.makeCurrentUser(user) }
                    page.changed.append(record)
                case Layout.deletedEntry:
                    if let coverage {
                        // Only deletions of records a share of the user covered (the tombstone's mark).
                        let mark = try txn.value(
                            forKey: Layout.sharedDeletionKey(zone: zone, sequence: sequence, row: row), in: changes.changeTable)
                        guard let mark, coverage.shareNames.contains(String(decoding: mark, as: UTF8.self)) else { return true }
                    }
                    let typeID = try r.int64()
                    // A deletion is left out when the caller may read no record of its type.
                    if roles != nil, try !roles!.grants(ofType: typeID, names: &names).readsSome { return true }
                    let type = try names.name(typeID)
                    let name = try r.rawString(count: value.count - r.offset)
                    page.deleted.append((Record.ID(recordName: name, zoneID: zoneID), type))
                case let kind:
                    throw FormatError(message: "change log entry of kind \(kind)")
                }
                return true
            }
            if page.moreComing, let last { page.token = token(last.0, last.1) }
            return page
        }
    }

    /// The zone events of a database after `token`, at most `limit` (0 for the default).
    func databaseChanges(since token: ServerChangeToken?, limit: Int, context: DatabaseContext) throws -> DatabaseChangePage {
        let start = try token.map { token throws(FogError) in try ChangeTokenContent(token, expected: .database) }
        try access.check(.databaseChanges, in: context)
        _ = try context.injectFaults(.fetchDatabaseChanges, zones: [])
        try Self.checkLimit(limit)
        let everyZone = context.feeds == .everyZone
        if context.scope == .public, !everyZone {
            throw FogError(
                .invalidArguments,
                message: "the public database has no change feed in CloudKit; open the container with changeFeeds: .everyZone for one")
        }
        let limit = limit > 0 ? limit : EngineDefaults.changePageSize
        let scope = context.scope.rawValue
        // A user's private and shared databases each have their own feed (and tokens).
        let owner = context.scope == .public ? "" : context.user!
        return try read { txn, names in
            let current = try currentSequence(in: txn)
            let incarnation = try core.incarnation(in: txn)
            func token(_ sequence: Int64, _ zone: Int64) -> ServerChangeToken {
                ChangeTokenContent.database(incarnation: incarnation, scope: scope, owner: owner, sequence: sequence, zone: zone).token
            }
            if let start {
                guard start.incarnation == incarnation else {
                    throw FogError(
                        .changeTokenExpired, message: "the change token comes from another copy of the store; fetch again from a nil token")
                }
                guard start.sequence <= current else {
                    throw FogError(
                        .changeTokenExpired,
                        message: "the change token is newer than the store (a restored copy?); fetch again from a nil token")
                }
                guard start.scope == Int64(scope), start.owner == owner else {
                    throw FogError(.invalidArguments, message: "the change token belongs to another database")
                }
                if let horizon = try changes.databaseHorizon(scope: scope, owner: owner, txn: txn),
                    (start.sequence, start.item) < (horizon.sequence, horizon.zone)
                {
                    throw FogError(
                        .changeTokenExpired,
                        message: "zone deletions since the change token were pruned (tombstone retention); fetch again from a nil token")
                }
            }
            var page = DatabaseChangePage(token: token(current, .max), moreComing: false)
            if context.scope == .shared {
                try sharedDatabaseChanges(of: owner, after: start?.sequence, into: &page, txn: txn, names: &names)
                return page
            }
            let prefix = Layout.databaseLogPrefix(scope: scope, owner: owner)
            var range = ScanRange.prefix(prefix)
            if let start {
                (range.lower, range.lowerInclusive) = (prefix + Layout.position(sequence: start.sequence, row: start.item), false)
            }
            var count = 0
            var last: (Int64, Int64)?
            try txn.scan(changes.databaseChangeTable, range: range) { key, value in
                if count == limit {
                    page.moreComing = true
                    return false
                }
                guard key.starts(with: prefix) else { throw FormatError(message: "a key in the database change log is damaged") }
                var reader = KeyReader(UnsafeRawBufferPointer(rebasing: key[prefix.count...]))
                let sequence = try reader.readInt64()
                let zone = try reader.readInt64()
                var r = ByteReader(value)
                guard let kind = ZoneChangeKind(rawValue: try r.u8()) else { throw FormatError(message: "database change entry kind") }
                let name = try r.rawString(count: value.count - 1)
                count += 1
                last = (sequence, zone)
                // CloudKit's private database feed leaves out the default zone.
                guard everyZone || name != RecordZone.ID.defaultZoneName else { return true }
                let zoneID = RecordZone.ID(zoneName: name)
                if kind == .changed { page.changed.append(zoneID) } else { page.deleted.append((zoneID, kind)) }
                return true
            }
            if page.moreComing, let last { page.token = token(last.0, last.1) }
            return page
        }
    }

    /// The shared database's feed of `user`, in one page: each owner's zone the user accepted a
    /// share of whose last zone event (the owner's database log) comes after `after`, as
    /// changed while it is still shared with the user, and as deleted once it is not (the
    /// participant was removed, the share or the zone deleted; never from a `nil` token).
    private func sharedDatabaseChanges(
        of user: String, after: Int64?, into page: inout DatabaseChangePage, txn: Store.ReadTransaction, names: inout NameResolver<Store>
    ) throws {
        for (owner, zoneName) in try zones.hintedZones(of: user, in: txn) {
            let last = Layout.databaseLastKey(scope: Database.Scope.private.rawValue, owner: owner, zoneName: zoneName)
            guard
                let sequence = try txn.withValue(
                    forKey: last, in: changes.databaseChangeTable,
                    { value in
                        var reader = KeyReader(value)
                        return try reader.readInt64()
                    })
            else { continue }
            if let after, sequence <= after { continue }
            let zoneID = RecordZone.ID(zoneName: zoneName, ownerName: owner)
            if try zones.acceptedShares(of: user, owner: owner, zoneName: zoneName, in: txn, names: &names) != nil {
                page.changed.append(zoneID)
            } else if after != nil {
                page.deleted.append((zoneID, .deleted))
            }
        }
    }

    /// Whether `coverage` (a participant's shares of the zone) covers the record `view`.
    private func isCovered(
        _ view: RecordView, _ coverage: SharedCoverage, zone: Int64, memo: inout [String: Bool], txn: Store.ReadTransaction
    ) throws -> Bool {
        try coverage.covers(
            view.recordName, share: view.shareRange.map(view.string), parent: view.parentRange.map(view.string), memo: &memo
        ) {
            name in
            guard let row = try records.rowID(zone: zone, name: name, in: txn) else { return nil }
            return try records.withRecord(row, in: txn) { buffer in
                let ancestor = try RecordView(buffer, checking: FieldSelection(ids: []))
                return (ancestor.shareRange.map(ancestor.string), ancestor.parentRange.map(ancestor.string))
            }
        }
    }

    /// Whether the record `name`, which no share of the user covers now, left the hierarchy of
    /// one of them (`Layout.sharedMoveKey`) after the token `after`: at a later commit, or at
    /// the token's own commit when the token ends inside it (a page that stopped there; the
    /// deletion may then be reported twice, never missed).
    private func hasLeft(
        _ name: String, _ coverage: SharedCoverage, zone: Int64, after token: ChangeTokenContent, txn: Store.ReadTransaction
    ) throws -> Bool {
        guard let value = try txn.value(forKey: Layout.sharedMoveKey(zone: zone, name: name), in: changes.changeTable) else { return false }
        let move = try SharedMove(value)
        let after = move.sequence > token.sequence || (move.sequence == token.sequence && token.item != .max)
        return after && coverage.shareNames.contains(move.share)
    }

    /// Throws unless the zone has a change feed readers may use.
    private func checkFeed(zone address: ZoneAddress, context: DatabaseContext) throws(FogError) {
        guard context.feeds == .customZones else { return }
        if context.scope == .public {
            throw FogError(
                .invalidArguments,
                message:
                    "the public database has no zone change feeds in CloudKit; open the container with changeFeeds: .everyZone for them")
        }
        if address.isDefault {
            throw FogError(
                .invalidArguments,
                message:
                    "the default zone has no change feed in CloudKit (only custom zones have fetchChanges); open the container with changeFeeds: .everyZone for one"
            )
        }
    }

    private static func checkLimit(_ limit: Int) throws(FogError) {
        guard limit >= 0 else {
            throw FogError(.invalidArguments, message: "resultsLimit is \(limit); it must be positive, or 0 to let FogKit choose")
        }
    }
}
