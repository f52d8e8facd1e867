import FogStorage
import Foundation

/// One modify request inside its write transaction.
/// It groups the items by zone, plans each (checks against the stored state, asking the access
/// policy), and applies the plans through the record, index and change-log services.
struct ModifyRun<Store: KeyValueStore> {
    let writer: RecordWriter<Store>
    let txn: Store.WriteTransaction
    var names: NameWriter<Store>
    /// The index definitions of the record types this request wrote, read once. (A request
    /// writes few types, mostly one: an array searched in order costs less than a dictionary.)
    var indexDefinitions: [(recordType: String, indexes: TypeIndexes)] = []
    let context: DatabaseContext
    let user: String
    let policy: SavePolicy
    let now: Date
    let sequence: Int64
    let clientChangeTokenData: Data?
    /// How many records of the zone being applied were deleted, cascades included (its old
    /// tombstones are pruned when any was).
    var deletedInZone = 0
    /// How many change log entries of the zone being applied this request left stale
    /// (``ChangeLog/noteStale(_:zone:txn:)`` counts them, and compacts).
    var staleInZone = 0
    /// The rows and names of the zone being applied that this request deleted, cascades
    /// included: a later delete of one of them has nothing left to do, and succeeds.
    var deletedRows: Set<Int64> = []
    var deletedNames: Set<String> = []
    /// The field names of the records an update returns, per zone, and the memory their
    /// fields are copied into (as a fetch's are).
    var resultTable: FieldNameTable?
    var resultArena = FieldArenaWriter(expectedRecords: 1)
    /// The index fields of the record types this request updated, resolved once.
    var indexedFields: [String: [IndexedField]] = [:]
    /// The record types this request found in the catalog, or added to it (few: an array).
    var knownTypes: [String] = []
    /// The record types this request added to the catalog (development).
    var freshTypes: Set<String> = []
    /// The record types this request saved a record of (few: an array, asked once per save).
    var appliedTypes: [String] = []
    /// The record types whose just-in-time indexes must be built for the records stored
    /// before them, after the commit.
    var pendingBuilds: Set<String> = []
    /// The records of the zone being applied that the request saves: those applied so far,
    /// or, in an all-or-nothing zone, all of them (a new share's root must be among them).
    var savedInZone: Set<String> = []
    /// The saves of the zone being applied, by record name (a new share's root may be one).
    var clientsInZone: [String: ClientRecord] = [:]
    /// The records the zone being applied returns, by name (a new share sets its root's `share`).
    var resultsInZone: [String: Record] = [:]
    /// In the shared database: the owner's zone being applied (its id and owner) and the
    /// shares of it the user accepted (`ModifyRun+Shares.swift`).
    var sharedZone: (id: Int64, owner: String, shares: [AcceptedShare])?
    /// The share that covered each record this request deleted, by zone id and name (`nil`:
    /// none), and whether each
    /// zone holds a zone-wide share, for the shared-deletion marks (`ModifyRun+Shares.swift`).
    var deletedCoverage: [String: String?] = [:]
    var zoneWideShares: [Int64: Bool] = [:]
    /// The notifications the request produces; `nil` when the store has no subscription
    /// (`ModifyRun+Notifications.swift`).
    var notices: NotificationMatcher<Store>?
    /// The name of the zone being applied.
    var zoneNameBeingApplied = ""
    /// The bytes the request adds to (or removes from) each owner's storage
    /// (`Engine/Usage/StorageUsage.swift`), written and checked against the quota at the end.
    var usageDeltas = UsageDeltas()
    /// The change tag each delete that checks one expects, by its index among the deletes
    /// (``WebServices/RecordOperation/delete(_:recordChangeTag:)``); the others have none.
    var deleteTags: [Int: String] = [:]

    struct Item {
        enum Kind {
            /// A ``ClientRecord`` is a class: an item's copies share it.
            case save(ClientRecord)
            case delete(Record.ID)
        }
        let kind: Kind
        let index: Int
        var preError: FogError?
        var id: Record.ID {
            switch kind {
            case .save(let c): c.recordID
            case .delete(let id): id
            }
        }
    }

    /// A save whose checks passed, ready to apply.
    /// A class: a plan is copied as a request's plans are gathered, checked and applied, and
    /// a struct's copy would retain each of its fields (and the client record's) every time.
    final class SavePlan {
        let client: ClientRecord
        /// The stored record an update changes, its fields still encoded.
        let existing: EncodedRecord?
        /// A new record's values (empty for an update, which writes `changes`).
        let values: [String: FieldValue]
        /// An update's written keys and their new values (`nil`: removed); the record's other
        /// fields stay as they are.
        let changes: FieldChanges
        let parent: String?
        let newFieldTypes: [(String, FieldType)]
        /// The `deleteSelf` targets before and after the save.
        let oldTargets: Set<String>
        let newTargets: Set<String>

        init(
            client: ClientRecord, existing: EncodedRecord?, values: [String: FieldValue], changes: FieldChanges, parent: String?,
            newFieldTypes: [(String, FieldType)], oldTargets: Set<String>, newTargets: Set<String>
        ) {
            self.client = client
            self.existing = existing
            self.values = values
            self.changes = changes
            self.parent = parent
            self.newFieldTypes = newFieldTypes
            self.oldTargets = oldTargets
            self.newTargets = newTargets
        }
    }

    enum Plan {
        case save(SavePlan)
        case delete(row: Int64, record: StoredRecord)
        /// A delete of a record that an earlier delete of the request deleted by cascade.
        case alreadyDeleted
        /// A participant's delete of a share in the shared database: they leave it.
        case leave(row: Int64, share: StoredRecord)
    }

    mutating func execute(
        clients: [ClientRecord], saveErrors: [Int: FogError], deletes: [Record.ID], deleteErrors: [Int: FogError],
        atomic: Bool
    ) throws -> ModifyOutcome {
        resultArena = FieldArenaWriter(expectedRecords: clients.count)
        var items: [Item] = []
        for (i, c) in clients.enumerated() { items.append(Item(kind: .save(c), index: i, preError: saveErrors[i])) }
        for (i, id) in deletes.enumerated() { items.append(Item(kind: .delete(id), index: i, preError: deleteErrors[i])) }

        // Group by zone, in the order the zones first appear, keeping the request order inside
        // each zone. Most requests write one zone: the index of the groups by zone is built
        // only once a second zone appears.
        var groups: [(zone: RecordZone.ID, items: [Item])] = []
        var groupIndex: [RecordZone.ID: Int] = [:]
        for item in items {
            let zone = normalized(item.id.zoneID)
            if let last = groups.indices.last, groups[last].zone == zone {
                groups[last].items.append(item)
                continue
            }
            if groups.isEmpty {
                groups.append((zone, [item]))
                continue
            }
            // A second zone: from here on groups are found by zone.
            if groupIndex.isEmpty { groupIndex[groups[0].zone] = 0 }
            if let i = groupIndex[zone] {
                groups[i].items.append(item)
            } else {
                groupIndex[zone] = groups.count
                groups.append((zone, [item]))
            }
        }

        var saveResults = [Result<Record, FogError>?](repeating: nil, count: clients.count)
        var deleteResults = [Result<Void, FogError>?](repeating: nil, count: deletes.count)
        func record(_ item: Item, _ error: FogError?, saved: Record? = nil) {
            switch item.kind {
            case .save: saveResults[item.index] = error.map { .failure($0) } ?? .success(saved!)
            case .delete: deleteResults[item.index] = error.map { .failure($0) } ?? .success(())
            }
        }

        for (zoneID, requested) in groups {
            zoneNameBeingApplied = zoneID.zoneName
            let zone: ZoneInfo
            do {
                if context.scope == .shared {
                    // An owner's zone shared with the user (`ZoneDirectory+Sharing.swift`).
                    let (info, shares) = try writer.zones.sharedZone(zoneID, of: user, in: txn.readView, names: &names.resolver)
                    zone = info
                    sharedZone = (info.id, zoneID.ownerName, shares)
                } else {
                    zone = try writer.zones.zoneForWriting(zoneID, in: context, sequence: sequence, txn: txn)
                }
            } catch {
                let e = FogError.wrapping(error)
                for item in requested { record(item, item.preError ?? e) }
                continue
            }
            let allOrNothing = atomic && zone.capabilities.contains(.atomic)
            var applied = 0
            deletedInZone = 0
            staleInZone = 0
            deletedRows = []
            deletedNames = []
            // In an all-or-nothing zone a parent may be any record saved (and not
            // deleted) in the same request. Otherwise each save stands alone, so
            // parents are saved first and must exist when their children are planned.
            var savedNames: Set<String> = []
            if allOrNothing {
                let deletedNames = Set(
                    requested.compactMap { item -> String? in
                        if case .delete(let id) = item.kind { return id.recordName }
                        return nil
                    })
                savedNames = Set(
                    requested.compactMap { item -> String? in
                        if case .save(let c) = item.kind, item.preError == nil { return c.recordID.recordName }
                        return nil
                    }
                ).subtracting(deletedNames)
            }
            // Shares come after the other saves: a new share's root must be saved first.
            let group = try withStoredRecords(sharesLast(allOrNothing ? requested : parentsFirst(requested)), zone: zone)
            // The names, saves and results a share's checks look up (`ModifyRun+Shares.swift`):
            // kept only when the zone is another owner's or the request saves a share, so
            // other requests do not pay for them.
            let sharing =
                sharedZone != nil
                || requested.contains { item in
                    if case .save(let c) = item.kind { return c.recordType == Record.SystemType.share }
                    return false
                }
            savedInZone = sharing ? savedNames : []
            resultsInZone = [:]
            clientsInZone = [:]
            if sharing {
                for item in requested {
                    if case .save(let c) = item.kind, item.preError == nil { clientsInZone[c.recordID.recordName] = c }
                }
            }
            if atomic && group.contains(where: { $0.preError != nil }) {
                // A malformed item fails its whole zone when the request is atomic.
                for item in group { record(item, item.preError ?? batchFailed(item)) }
                continue
            }
            if allOrNothing {
                // The plans of the group's items, in order, while none fails; the errors of
                // those that fail, by position. (Not an array of `Result`s: the standard
                // library's generic `Result` copies and destroys each plan through its
                // metadata at run time.)
                var plans: [Plan] = []
                plans.reserveCapacity(group.count)
                var failures: [Int: FogError] = [:]
                var pending = PendingPlans()
                for (position, item) in group.enumerated() {
                    do throws(FogError) {
                        let p = try plan(item, zone: zone, savedNames: savedNames, pending: &pending)
                        if failures.isEmpty { plans.append(p) }
                    } catch {
                        failures[position] = error
                    }
                }
                if !failures.isEmpty {
                    for (position, item) in group.enumerated() { record(item, failures[position] ?? batchFailed(item)) }
                    continue
                }
                for (item, p) in zip(group, plans) {
                    let saved = try apply(p, zone: zone, zoneID: item.id.zoneID)
                    if sharing, let saved { resultsInZone[saved.recordID.recordName] = saved }
                    record(item, nil, saved: saved)
                    applied += 1
                }
            } else {
                for item in group {
                    if let e = item.preError {
                        record(item, e)
                        continue
                    }
                    var pending = PendingPlans()
                    do {
                        let p = try plan(item, zone: zone, savedNames: savedNames, pending: &pending)
                        let saved = try apply(p, zone: zone, zoneID: item.id.zoneID)
                        if sharing, let saved {
                            savedInZone.insert(saved.recordID.recordName)
                            resultsInZone[saved.recordID.recordName] = saved
                        }
                        record(item, nil, saved: saved)
                        applied += 1
                    } catch let e as FogError {
                        record(item, e)
                    }
                }
            }
            if applied > 0 { try noteZoneChanged(zoneID, zone: zone) }
            try writer.changes.noteStale(staleInZone, zone: zone.id, txn: txn)
        }
        try commitUsage()
        return ModifyOutcome(
            saveResults: zip(clients, saveResults).map { ($0.recordID, $1!) },
            deleteResults: zip(deletes, deleteResults).map { ($0, $1!) }, pendingBuilds: pendingBuilds)
    }

    /// The saves of `group` reordered so that a record whose parent is saved in the
    /// same group comes after its parent (cycles keep their order); deletes last.
    func parentsFirst(_ group: [Item]) -> [Item] {
        let hasParents = group.contains { item in
            if case .save(let c) = item.kind { return c.parent != nil }
            return false
        }
        guard hasParents else { return group }
        var pending = group.filter { if case .save = $0.kind { true } else { false } }
        let deletes = group.filter { if case .delete = $0.kind { true } else { false } }
        var ordered: [Item] = []
        while !pending.isEmpty {
            let waiting = Set(pending.map(\.id.recordName))
            let ready = pending.filter { item in
                guard case .save(let c) = item.kind, let parent = c.parent?.recordID.recordName else { return true }
                return !waiting.contains(parent) || parent == c.recordID.recordName
            }
            if ready.isEmpty {
                ordered += pending
                break
            }
            let readyIndices = Set(ready.map(\.index))
            ordered += ready
            pending.removeAll { readyIndices.contains($0.index) }
        }
        return ordered + deletes
    }

    /// `group` with the saves of shares moved after every other item, in their order.
    func sharesLast(_ group: [Item]) -> [Item] {
        func isShare(_ item: Item) -> Bool {
            if case .save(let c) = item.kind { return c.recordType == Record.SystemType.share }
            return false
        }
        guard group.contains(where: isShare) else { return group }
        return group.filter { !isShare($0) } + group.filter(isShare)
    }

    /// Records in the change logs that a zone changed in this request: the database log
    /// entry, the client's change token data, and the pruning of old tombstones.
    mutating func noteZoneChanged(_ zoneID: RecordZone.ID, zone: ZoneInfo) throws {
        // A shared zone is its owner's: the change shows in the owner's private database feed.
        let address =
            context.scope == .shared
            ? ZoneAddress(scope: Database.Scope.private.rawValue, owner: zoneID.ownerName, zoneName: zoneID.zoneName)
            : try writer.zones.address(of: zoneID, in: context)
        try writer.changes.logZone(.changed, address: address, zone: zone.id, sequence: sequence, txn: txn)
        if let clientChangeTokenData { try writer.changes.storeClientChangeToken(clientChangeTokenData, zone: zone.id, txn: txn) }
        if deletedInZone > 0, context.tombstoneRetention.isFinite {
            // At least twice the tombstones this request adds, so that requests deleting more
            // than a batch each (cascades) cannot let the backlog grow.
            try writer.changes.pruneTombstones(
                zone: zone.id, before: now.addingTimeInterval(-context.tombstoneRetention),
                limit: max(EngineDefaults.pruneBatchSize, 2 * deletedInZone), txn: txn)
        }
        deletedInZone = 0
    }

    /// Items whose conflict a fault plan injected (``FaultPlan``) carry the stored record as
    /// a real conflict does; the others are returned as they are.
    func withStoredRecords(_ items: [Item], zone: ZoneInfo) throws -> [Item] {
        func injectedConflict(_ item: Item) -> Bool {
            item.preError.map { $0.code == .serverRecordChanged && $0.serverRecord == nil } ?? false
        }
        guard items.contains(where: injectedConflict) else { return items }
        return try items.map { item in
            guard injectedConflict(item), let e = item.preError, case .save(let c) = item.kind,
                let existing = try loadDecoded(zone: zone.id, name: c.recordID.recordName)
            else { return item }
            var item = item
            item.preError = FogError(
                .serverRecordChanged, message: e.message, serverRecord: try makeRecord(existing.record, zoneID: c.recordID.zoneID),
                clientRecord: c.record)
            return item
        }
    }

    func batchFailed(_ item: Item) -> FogError {
        FogError(
            .batchRequestFailed, message: "record \(item.id.recordName) was not changed because another change in its atomic zone failed")
    }

    /// Zone IDs with the owner placeholder resolved, for grouping.
    func normalized(_ zoneID: RecordZone.ID) -> RecordZone.ID {
        zoneID.ownerName == user ? RecordZone.ID(zoneName: zoneID.zoneName) : zoneID
    }
}
