import FogStorage
import Foundation

/// One modify request inside its write transaction.
/// It groups the items by zone, plans each (checks against the stored state, asking the access
/// policy), and applies the plans through the record, index and change-log services.
struct ModifyRun<Store: KeyValueStore> {
    let writer: RecordWriter<Store>
    let txn: Store.WriteTransaction
    var names: NameWriter<Store>
    /// The index definitions of the record types this request wrote, read once.
    var indexDefinitions: [String: TypeIndexes] = [:]
    let context: DatabaseContext
    let user: String
    let policy: SavePolicy
    let now: Date
    let sequence: Int64
    let clientChangeTokenData: Data?
    /// How many records of the zone being applied were deleted, cascades included (its old
    /// tombstones are pruned when any was).
    private(set) var deletedInZone = 0
    /// The rows and names of the zone being applied that this request deleted, cascades
    /// included: a later delete of one of them has nothing left to do, and succeeds.
    private(set) var deletedRows: Set<Int64> = []
    private(set) var deletedNames: Set<String> = []
    /// The field names of the records an update returns, per zone, and the memory their
    /// fields are copied into (as a fetch's are).
    var resultTable: FieldNameTable?
    var resultArena = FieldArenaWriter(expectedRecords: 1)
    /// The index fields of the record types this request updated, resolved once.
    var indexedFields: [String: [IndexedField]] = [:]
    /// The record types this request found in the catalog, or added to it.
    var knownTypes: Set<String> = []
    /// The record types this request added to the catalog (development).
    var freshTypes: Set<String> = []
    /// The record types this request saved a record of.
    var appliedTypes: Set<String> = []
    /// The record types whose just-in-time indexes must be built for the records stored
    /// before them, after the commit.
    var pendingBuilds: Set<String> = []
    /// The records of the zone being applied that the request saves: those applied so far,
    /// or, in an all-or-nothing zone, all of them (a new share's root must be among them).
    private(set) var savedInZone: Set<String> = []
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
    var usageDeltas: [UsageOwner: Int64] = [:]

    private struct Item {
        enum Kind {
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
    private struct SavePlan {
        let client: ClientRecord
        /// The stored record an update changes, its fields still encoded.
        let existing: EncodedRecord?
        /// A new record's values.
        let values: [String: FieldValue]
        /// An update's written keys and their new values (`nil`: removed); the record's other
        /// fields stay as they are.
        let changes: FieldChanges
        let parent: String?
        let newFieldTypes: [(String, FieldType)]
        /// The `deleteSelf` targets before and after the save.
        let oldTargets: Set<String>
        let newTargets: Set<String>
    }

    private enum Plan {
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

        // Group by zone, keeping the request order inside each zone.
        var order: [RecordZone.ID] = []
        var groups: [RecordZone.ID: [Item]] = [:]
        for item in items {
            let zone = normalized(item.id.zoneID)
            if groups[zone] == nil { order.append(zone) }
            groups[zone, default: []].append(item)
        }

        var saveResults = [Result<Record, FogError>?](repeating: nil, count: clients.count)
        var deleteResults = [Result<Void, FogError>?](repeating: nil, count: deletes.count)
        func record(_ item: Item, _ error: FogError?, saved: Record? = nil) {
            switch item.kind {
            case .save: saveResults[item.index] = error.map { .failure($0) } ?? .success(saved!)
            case .delete: deleteResults[item.index] = error.map { .failure($0) } ?? .success(())
            }
        }

        for zoneID in order {
            let requested = groups[zoneID]!
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
                var plans: [(Item, Result<Plan, FogError>)] = []
                var pending = PendingPlans()
                for item in group {
                    plans.append(
                        (item, Result { () throws(FogError) in try plan(item, zone: zone, savedNames: savedNames, pending: &pending) }))
                }
                if plans.contains(where: { if case .failure = $0.1 { true } else { false } }) {
                    for (item, result) in plans {
                        if case .failure(let e) = result { record(item, e) } else { record(item, batchFailed(item)) }
                    }
                    continue
                }
                for (item, result) in plans {
                    let saved = try apply(try result.get(), zone: zone, zoneID: item.id.zoneID)
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
        }
        try commitUsage()
        return ModifyOutcome(
            saveResults: zip(clients, saveResults).map { ($0.recordID, $1!) },
            deleteResults: zip(deletes, deleteResults).map { ($0, $1!) }, pendingBuilds: pendingBuilds)
    }

    /// The saves of `group` reordered so that a record whose parent is saved in the
    /// same group comes after its parent (cycles keep their order); deletes last.
    private func parentsFirst(_ group: [Item]) -> [Item] {
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
    private func sharesLast(_ group: [Item]) -> [Item] {
        func isShare(_ item: Item) -> Bool {
            if case .save(let c) = item.kind { return c.recordType == Record.SystemType.share }
            return false
        }
        guard group.contains(where: isShare) else { return group }
        return group.filter { !isShare($0) } + group.filter(isShare)
    }

    /// Records in the change logs that a zone changed in this request: the database log
    /// entry, the client's change token data, and the pruning of old tombstones.
    private mutating func noteZoneChanged(_ zoneID: RecordZone.ID, zone: ZoneInfo) throws {
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
    private func withStoredRecords(_ items: [Item], zone: ZoneInfo) throws -> [Item] {
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

    private func batchFailed(_ item: Item) -> FogError {
        FogError(
            .batchRequestFailed, message: "record \(item.id.recordName) was not changed because another change in its atomic zone failed")
    }

    /// Zone IDs with the owner placeholder resolved, for grouping.
    private func normalized(_ zoneID: RecordZone.ID) -> RecordZone.ID {
        zoneID.ownerName == user ? RecordZone.ID(zoneName: zoneID.zoneName) : zoneID
    }

    // MARK: - Planning (reads only)

    /// What the plans of one all-or-nothing group add before any of them is applied.
    private struct PendingPlans {
        struct FieldKey: Hashable {
            let recordType: String
            let field: String
        }
        var fieldTypes: [FieldKey: FieldType] = [:]
        var deleteSelfReferences: [String: Int] = [:]
    }

    private mutating func plan(_ item: Item, zone: ZoneInfo, savedNames: Set<String>, pending: inout PendingPlans) throws(FogError) -> Plan
    {
        if let e = item.preError { throw e }
        switch item.kind {
        case .delete(let id):
            guard let existing = try fogTry({ try loadDecoded(zone: zone.id, name: id.recordName) }) else {
                if deletedNames.contains(id.recordName) { return .alreadyDeleted }
                throw FogError(
                    .unknownItem,
                    message: sharedZone == nil
                        ? "record \(id.recordName) does not exist in zone \(id.zoneID.zoneName)" : AccessPolicy.notShared(id.recordName))
            }
            if let sharedZone, existing.record.recordType == Record.SystemType.share {
                // A participant "deleting" a share leaves it (`ModifyRun+Shares.swift`).
                try writer.access.check(
                    .leaveShare,
                    AccessRequest(
                        caller: .user(user), recordName: id.recordName,
                        shareStanding: sharedZone.shares.contains { $0.name == id.recordName } ? .participant(.accepted) : .outsider))
                return .leave(row: existing.row, share: existing.record)
            }
            try writer.access.check(.delete, try request(for: existing.record), grants: try publicGrants(existing.record.recordType))
            try checkCascade(from: existing.row, existing.record, zone: zone.id)
            return .delete(row: existing.row, record: existing.record)
        case .save(let client):
            return .save(try planSave(client, zone: zone, savedNames: savedNames, pending: &pending))
        }
    }

    private mutating func planSave(
        _ client: ClientRecord, zone: ZoneInfo, savedNames: Set<String>, pending: inout PendingPlans
    ) throws(FogError) -> SavePlan {
        let name = client.recordID.recordName
        let existing = try fogTry { try load(zone: zone.id, name: name) }
        if sharedZone != nil {
            // In the shared database the policy speaks first: a conflict error would hand out
            // a record the user may not see (its `serverRecord`).
            try writer.access.check(
                .save, try request(for: existing?.header, recordType: client.recordType, recordName: name, client: client))
        }
        if existing == nil && name.hasPrefix("_") {
            throw FogError(
                .invalidArguments, message: "record name '\(name)' starts with '_', which is reserved for records the system creates")
        }
        if existing == nil && client.recordType == Record.SystemType.userRecord {
            throw FogError(.invalidArguments, message: "user records (type Users) are created by the system, not by clients")
        }
        switch policy {
        case .ifServerRecordUnchanged:
            if let existing, client.changeTag == nil {
                throw FogError(
                    .serverRecordChanged, message: "record to insert already exists: \(name)",
                    serverRecord: try serverRecord(existing, zoneID: client.recordID.zoneID), clientRecord: client.record)
            }
            if let existing, client.changeTag != existing.header.changeTag {
                throw FogError(
                    .serverRecordChanged,
                    message: "record \(name) changed since it was fetched (tag \(client.changeTag!) is not \(existing.header.changeTag))",
                    serverRecord: try serverRecord(existing, zoneID: client.recordID.zoneID), clientRecord: client.record,
                    ancestorRecord: client.ancestor())
            }
            if existing == nil, client.changeTag != nil {
                throw FogError(
                    .unknownItem, message: sharedZone == nil ? "record to update not found: \(name)" : AccessPolicy.notShared(name))
            }
        case .changedKeys, .allKeys:
            break
        }
        try writer.access.check(.save, try request(for: existing?.header, recordType: client.recordType, recordName: name, client: client))
        if let existing, existing.header.recordType != client.recordType {
            throw FogError(.invalidArguments, message: "record \(name) is a \(existing.header.recordType), not a \(client.recordType)")
        }

        // The values to store: a new record's, or the keys an update writes (the stored
        // record's other fields are kept as they are encoded).
        var values: [String: FieldValue] = [:]
        var changes = FieldChanges()
        if existing != nil {
            for key in client.changedKeys { changes.set(key, client.values[key]) }
            if policy == .allKeys { for (key, value) in client.values { changes.set(key, value) } }
            for case (let key, let value?) in changes.entries { values[key] = value }
        } else {
            values = client.values
        }
        if client.recordType == Record.SystemType.share {
            // The share's state as the store keeps it (`ModifyRun+Shares.swift`).
            for (key, value) in try planShare(client, existing: existing, zone: zone) {
                if existing != nil { changes.set(key, value) }
                values[key] = value
            }
        }

        // Each field's type is fixed by its first write (the fields an update keeps were
        // checked when they were written, and a fixed type never changes). In production the
        // record type and every field must be in the schema already.
        // Share records (`cloudkit.share`) are the system's: their type and fields are in
        // every environment, outside the catalog.
        let production = context.schemaMode == .production && client.recordType != Record.SystemType.share
        if production, existing == nil { try checkKnownType(client.recordType) }
        if context.scope == .public {
            // After the production check (an unknown type is `unknownItem`); in development
            // a type missing from the catalog is checked with the grants it gets when created.
            try writer.access.checkRoles(
                .save, request(for: existing?.header, recordType: client.recordType, recordName: name),
                grants: try publicGrants(client.recordType, saving: true))
        }
        var newTypes: [(String, FieldType)] = []
        for key in values.keys.sorted() {
            // An encrypted field is typed by the value it seals (its stored value is bytes).
            let encrypted = Record.isEncryptedKey(key)
            let shown = encrypted ? Record.plainKey(ofEncrypted: key) : key
            let type = encrypted ? (client.encryptedTypes[key] ?? values[key]!.fieldType) : values[key]!.fieldType
            let pendingKey = PendingPlans.FieldKey(recordType: client.recordType, field: key)
            var fixed = pending.fieldTypes[pendingKey]
            if fixed == nil { fixed = try fogTry { try names.fieldType(recordType: client.recordType, field: key) } }
            if let fixed {
                guard fixed == type else {
                    throw FogError(
                        .invalidArguments,
                        message:
                            "field '\(shown)' of record type \(client.recordType) holds \(fixed.name) values; cannot save a \(type.name) in record \(name)"
                    )
                }
            } else {
                // A key names either a plain or an encrypted field of a record type, never both
                // (the schema keeps an encrypted field under its stored name).
                let other = encrypted ? Record.plainKey(ofEncrypted: key) : Record.encryptedKey(key)
                if let otherDeclared = try fogTry({ try declaration(recordType: client.recordType, field: other) }),
                    !otherDeclared.isRetired
                {
                    throw FogError(
                        .invalidArguments,
                        message: encrypted
                            ? "field '\(other)' of record type \(client.recordType) is a plain field; cannot save it through encryptedValues in record \(name)"
                            : "field '\(key)' of record type \(client.recordType) is an encrypted field; save it through encryptedValues in record \(name)"
                    )
                }
                // A field the schema declares `NUMBER` without a representation yet takes
                // the first number saved; a field the schema lacks is created (development).
                if let declared = try fogTry({ try declaration(recordType: client.recordType, field: key) }) {
                    guard declared.accepts(type) else {
                        throw FogError(
                            .invalidArguments,
                            message:
                                "field '\(shown)' of record type \(client.recordType) is declared \(declared.dataType); cannot save a \(type.name) in record \(name)"
                        )
                    }
                } else if production {
                    throw FogError(
                        .invalidArguments,
                        message:
                            "Cannot create new field '\(shown)' in production schema: record type \(client.recordType) has no such field (record \(name))"
                    )
                }
                newTypes.append((key, type))
            }
        }

        let size = RecordCodec.countedSize(of: values) + (existing?.countedSize(keptBeside: changes) ?? 0)
        guard size <= Validation.maximumRecordSize else {
            throw FogError(
                .limitExceeded,
                message: "record \(name) would hold \(size) bytes; the limit is \(Validation.maximumRecordSize) (assets excluded)")
        }

        // The parent must exist, or be saved in the same request.
        let parent: String?
        if existing == nil || client.parentChanged {
            parent = client.parent?.recordID.recordName
            if let parent, !savedNames.contains(parent) {
                guard try fogTry({ try writer.records.rowID(zone: zone.id, name: parent, in: txn.readView) }) != nil else {
                    throw FogError(.referenceViolation, message: "the parent of \(name), \(parent), does not exist")
                }
            }
        } else {
            parent = existing!.header.parent
        }

        // Cascading references are limited per target (counting those planned in the group).
        let oldTargets: Set<String>
        let newTargets: Set<String>
        if let existing {
            var references = try fogTry { try existing.referenceValues() }
            oldTargets = deleteSelfTargets(references)
            for (key, value) in changes.entries { references[key] = value }
            newTargets = deleteSelfTargets(references)
        } else {
            oldTargets = []
            newTargets = deleteSelfTargets(values)
        }
        let addedTargets = newTargets.subtracting(oldTargets)
        for target in addedTargets {
            let stored = try fogTry {
                try writer.records.countRefs(zone: zone.id, target: target, limit: Validation.maximumDeleteSelfReferences, in: txn.readView)
            }
            let count = stored + (pending.deleteSelfReferences[target] ?? 0)
            guard count < Validation.maximumDeleteSelfReferences else {
                throw FogError(
                    .limitExceeded,
                    message:
                        "record \(target) already has \(count) deleteSelf references; the limit is \(Validation.maximumDeleteSelfReferences)"
                )
            }
        }
        for target in addedTargets { pending.deleteSelfReferences[target, default: 0] += 1 }
        for (key, type) in newTypes { pending.fieldTypes[PendingPlans.FieldKey(recordType: client.recordType, field: key)] = type }
        return SavePlan(
            client: client, existing: existing, values: values, changes: changes, parent: parent, newFieldTypes: newTypes,
            oldTargets: oldTargets, newTargets: newTargets)
    }

    /// What the access policy is asked about a stored record (or a new one, for `nil`); for a
    /// save, `client` is the record as saved. In the shared database the request says whether
    /// an accepted share covers the record (before and after a save) and with what permission.
    private func request(
        for record: StoredRecord?, recordType: String? = nil, recordName: String? = nil, cascadeOrigin: String? = nil,
        client: ClientRecord? = nil
    ) throws(FogError) -> AccessRequest {
        var request = AccessRequest(
            caller: .user(user), scope: context.scope, zoneOwner: context.scope == .public ? "" : user,
            recordType: record?.recordType ?? recordType, recordName: record?.recordName ?? recordName, creator: record?.creator,
            cascadeOrigin: cascadeOrigin)
        if let sharedZone {
            request.zoneOwner = sharedZone.owner
            try describeSharedAccess(of: record, client: client, into: &request)
        }
        return request
    }

    /// What the security roles grant the caller on record type `recordType` in the public
    /// database (``PublicGrants/none`` in the others, where roles do not apply). A type the
    /// catalog lacks has no grants, except for a save in development, which creates it
    /// just in time with CloudKit's defaults (``createJustInTime(_:newFields:)``) before writing.
    private func publicGrants(_ recordType: String, saving: Bool = false) throws(FogError) -> PublicGrants {
        guard context.scope == .public else { return .none }
        return try fogTry {
            var resolver = names.resolver
            let snapshot = try writer.core.publicRoles.snapshot(core: writer.core, txn: txn.readView)
            return snapshot.grants(
                ofType: try resolver.id(recordType), named: recordType, caller: .user(user),
                justInTime: saving && context.schemaMode == .development)
        }
    }

    /// Asks the access policy about every record that deleting `record` would delete
    /// through `deleteSelf` references (as ``deleteRow(_:_:zone:)`` will), so a
    /// delete fails as a whole, before anything is written, when one of them may not be
    /// deleted by the caller.
    private func checkCascade(from row: Int64, _ record: StoredRecord, zone: Int64) throws(FogError) {
        var visited: Set<Int64> = [row]
        var pending = [record.recordName]
        while let target = pending.popLast() {
            var sources: [Int64] = []
            try fogTry {
                try txn.scan(writer.records.refs, range: .prefix(Layout.refPrefix(zone: zone, target: target))) { key, _ in
                    var reader = KeyReader(Array(key))
                    _ = try reader.readInt64()
                    _ = try reader.readString()
                    sources.append(try reader.readInt64())
                    return true
                }
            }
            for source in sources where visited.insert(source).inserted {
                var resolver = names.resolver
                let stored = try fogTry {
                    try txn.withValue(forKey: bigEndianKey(source), in: writer.records.table) {
                        try RecordCodec.decode($0, names: &resolver, desiredKeys: [])
                    }
                }
                guard let stored else { continue }
                try writer.access.check(
                    .cascadeDelete, try request(for: stored, cascadeOrigin: record.recordName), grants: try publicGrants(stored.recordType))
                pending.append(stored.recordName)
            }
        }
    }

    /// The stored record `name`, its fields still encoded; `nil` when absent.
    private mutating func load(zone: Int64, name: String) throws -> EncodedRecord? {
        guard let row = try writer.records.rowID(zone: zone, name: name, in: txn.readView) else { return nil }
        guard
            let record = try txn.withValue(
                forKey: bigEndianKey(row), in: writer.records.table, { try EncodedRecord(row: row, $0, names: &names.resolver) })
        else {
            throw FormatError(message: "record \(name) names row \(row), which is missing")
        }
        return record
    }

    /// The stored record `name`, decoded; `nil` when absent.
    func loadDecoded(zone: Int64, name: String) throws -> (row: Int64, record: StoredRecord)? {
        guard let row = try writer.records.rowID(zone: zone, name: name, in: txn.readView) else { return nil }
        var resolver = names.resolver
        guard
            let record = try txn.withValue(
                forKey: bigEndianKey(row), in: writer.records.table, { try RecordCodec.decode($0, names: &resolver) })
        else {
            throw FormatError(message: "record \(name) names row \(row), which is missing")
        }
        return (row, record)
    }

    private func makeRecord(_ stored: StoredRecord, zoneID: RecordZone.ID) throws(FogError) -> Record {
        guard stored.values.keys.contains(where: Record.isEncryptedKey) else {
            return stored.makeRecord(zoneID: zoneID, assetDirectory: writer.assetDirectory)
        }
        // The client gets its encrypted fields decrypted, as a fetch returns them.
        var decrypted = stored
        try writer.core.cipher.openAll(&decrypted.values, recordName: stored.recordName)
        return decrypted.makeRecord(zoneID: zoneID, assetDirectory: writer.assetDirectory)
    }

    /// The stored record as a conflict error returns it.
    private func serverRecord(_ existing: EncodedRecord, zoneID: RecordZone.ID) throws(FogError) -> Record {
        try makeRecord(try fogTry { try existing.decoded() }, zoneID: zoneID)
    }

    /// The record an update returns, from its new encoding: its fields stay encoded until
    /// read, as a fetched record's do.
    private mutating func makeRecord(encoded bytes: [UInt8], id: Record.ID) throws -> Record {
        if resultTable?.zoneID != id.zoneID {
            resultTable = FieldNameTable(
                zoneID: id.zoneID, assetDirectory: writer.assetDirectory, selection: .all, cipher: writer.core.cipher)
        }
        let table = resultTable!
        return try bytes.withUnsafeBytes { buffer in
            try RecordView(buffer, checking: .all).makeRecord(id: id, table: table, arena: &resultArena, names: &names.resolver)
        }
    }

    // MARK: - Applying (writes)

    private mutating func apply(_ plan: Plan, zone: ZoneInfo, zoneID: RecordZone.ID) throws -> Record? {
        switch plan {
        case .delete(let row, let record):
            // An all-or-nothing group plans every delete before applying any: the cascade of
            // an earlier one may have deleted this record already.
            try deleteRow(row, record, zone: zone.id)
            return nil
        case .alreadyDeleted:
            return nil
        case .leave(let row, let share):
            try leaveShare(row: row, share, zone: zone)
            return nil
        case .save(let p):
            if context.schemaMode == .development, p.client.recordType != Record.SystemType.share {
                try createJustInTime(p.client.recordType, newFields: p.newFieldTypes)
            }
            for (key, type) in p.newFieldTypes {
                try names.define(recordType: p.client.recordType, field: key, as: type)
            }
            defer { appliedTypes.insert(p.client.recordType) }
            let row = try p.existing?.row ?? writer.nextCounter(Layout.metaNextRowID, in: txn)
            let old = p.existing?.header
            // An update's `stored` holds no values: its fields are the kept ones and `changes`.
            let stored = StoredRecord(
                recordType: p.client.recordType, recordName: p.client.recordID.recordName, zone: zone.id,
                values: p.existing == nil ? p.values : [:], parent: p.parent, share: old?.share,
                creationDate: old?.creationDate ?? now, modificationDate: now,
                creator: old?.creator ?? user, modifier: user, changeSequence: sequence)
            let bytes: [UInt8]
            if let existing = p.existing {
                bytes = try RecordCodec.encode(stored, keeping: existing, changes: p.changes, names: &names)
            } else {
                bytes = try RecordCodec.encode(stored, names: &names)
            }
            let oldUsage = try p.existing.map { try StorageUsage.measure(encoded: $0.bytes) } ?? 0
            usageDeltas[usageOwner, default: 0] += try StorageUsage.measure(encoded: bytes) - oldUsage
            // A new row id is above every other, so the record appends to the table's last
            // page, which a B-tree store then fills instead of splitting it in half.
            try txn.put(count: bytes.count, forKey: bigEndianKey(row), in: writer.records.table, append: p.existing == nil) {
                $0.copyBytes(from: bytes)
            }
            if p.existing == nil {
                try txn.put(
                    bigEndianKey(row), forKey: Layout.nameKey(zone: zone.id, recordName: stored.recordName), in: writer.records.names)
                // A hint for later fetches by ID, which check it against their snapshot (so an
                // aborted transaction's hint is harmless).
                writer.records.rowHints.remember(row, for: RowHints.hash(zone: zone.id, name: stored.recordName))
            }
            try writer.records.assets.countSave(existing: p.existing, values: p.values, changes: p.changes, txn: txn)
            if let existing = p.existing {
                try updateIndexEntries(of: existing, changes: p.changes, new: stored, row: row, zone: zone.id)
            } else {
                try updateIndexEntries(old: nil, new: stored, row: row, zone: zone.id)
            }
            try writer.changes.logSave(
                zone: zone.id, row: row, name: stored.recordName, previousSequence: old?.changeSequence, sequence: sequence, txn: txn)
            if notices != nil { try notifySave(stored, encoded: bytes, created: p.existing == nil) }
            for target in p.oldTargets.subtracting(p.newTargets) {
                try txn.delete(Layout.refKey(zone: zone.id, target: target, source: row), in: writer.records.refs)
            }
            for target in p.newTargets.subtracting(p.oldTargets) {
                try txn.put([], forKey: Layout.refKey(zone: zone.id, target: target, source: row), in: writer.records.refs)
            }
            if let old, old.parent != p.parent, context.scope != .public {
                try noteParentChange(of: stored.recordName, share: old.share, oldParent: old.parent, newParent: p.parent, zone: zone.id)
            }
            if p.existing == nil, p.client.recordType == Record.SystemType.share, case .string(let root)? = p.values[Share.rootKey] {
                try linkShare(stored.recordName, toRoot: root, zone: zone, zoneID: zoneID)
            }
            if p.existing != nil { return try makeRecord(encoded: bytes, id: p.client.recordID) }
            return try makeRecord(stored, zoneID: zoneID)
        }
    }

    /// Deletes a record and, transitively, the records that reference it with `deleteSelf`.
    /// The rows deleted in the zone (``deletedRows``) end the walk, so a cycle ends. The walk
    /// keeps its own list of rows to visit (no recursion), so a chain of any length is
    /// deleted, and it reads only the referrers' `refs` entries and records.
    private mutating func deleteRow(_ row: Int64, _ record: StoredRecord, zone: Int64) throws {
        // Rows to delete, each with the target whose cascade reached it (`nil`: the first).
        var pending: [(row: Int64, target: String?)] = [(row, nil)]
        var first: StoredRecord? = record
        while let (row, target) = pending.popLast() {
            guard !deletedRows.contains(row) else { continue }
            let record: StoredRecord
            if let given = first {
                record = given
                first = nil
            } else {
                var resolver = names.resolver
                guard
                    let stored = try txn.withValue(
                        forKey: bigEndianKey(row), in: writer.records.table, { try RecordCodec.decode($0, names: &resolver) })
                else {
                    if let target { try txn.delete(Layout.refKey(zone: zone, target: target, source: row), in: writer.records.refs) }
                    continue
                }
                record = stored
            }
            deletedRows.insert(row)
            deletedNames.insert(record.recordName)
            if notices != nil { try notifyDelete(record) }
            let usage = try txn.withValue(forKey: bigEndianKey(row), in: writer.records.table) { try StorageUsage.measure(encoded: $0) }
            usageDeltas[usageOwner, default: 0] -= usage ?? 0
            try txn.delete(bigEndianKey(row), in: writer.records.table)
            try txn.delete(Layout.nameKey(zone: zone, recordName: record.recordName), in: writer.records.names)
            try updateIndexEntries(old: record, new: nil, row: row, zone: zone)
            try writer.records.assets.release(record.values, txn: txn)
            guard let type = try names.resolver.id(record.recordType) else {
                throw FormatError(message: "record \(record.recordName) has a record type with no name id")
            }
            try writer.changes.logDelete(
                zone: zone, row: row, name: record.recordName, type: type, previousSequence: record.changeSequence, sequence: sequence,
                now: now, txn: txn)
            deletedInZone += 1
            if context.scope != .public {
                try markSharedDeletion(of: record, zone: zone, sequence: sequence, row: row)
            }
            try unlinkShare(of: record, zone: zone, pending: &pending)
            for target in deleteSelfTargets(record.values) {
                try txn.delete(Layout.refKey(zone: zone, target: target, source: row), in: writer.records.refs)
            }
            try txn.scan(writer.records.refs, range: .prefix(Layout.refPrefix(zone: zone, target: record.recordName))) { key, _ in
                var reader = KeyReader(Array(key))
                _ = try reader.readInt64()
                _ = try reader.readString()
                let source = try reader.readInt64()
                if !deletedRows.contains(source) { pending.append((source, record.recordName)) }
                return true
            }
        }
    }

    private func deleteSelfTargets(_ values: [String: FieldValue]) -> Set<String> {
        values.deleteSelfTargets
    }
}
