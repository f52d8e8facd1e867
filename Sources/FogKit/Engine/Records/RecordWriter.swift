import FogStorage
import Foundation

/// The outcome of a modify request, item by item, in request order.
struct ModifyOutcome: Sendable {
    var saveResults: [(Record.ID, Result<Record, FogError>)] = []
    var deleteResults: [(Record.ID, Result<Void, FogError>)] = []
}

/// CloudKit's per-request limits.
public struct OperationLimits: Sendable, Hashable {
    /// The most records to save and delete in one request (CloudKit: 400).
    public var maximumItems: Int
    /// The most bytes of record data in one request, assets excluded (CloudKit: 2 MB).
    public var maximumBytes: Int

    /// Creates limits.
    public init(maximumItems: Int, maximumBytes: Int) {
        self.maximumItems = maximumItems
        self.maximumBytes = maximumBytes
    }

    /// CloudKit's limits: 400 items and 2 MB per request.
    public static let cloudKit = OperationLimits(maximumItems: 400, maximumBytes: 2_000_000)
    /// Relaxed limits for bulk loads: 100,000 items and 1 GB per request.
    public static let bulkLoad = OperationLimits(maximumItems: 100_000, maximumBytes: 1_000_000_000)
}

extension Engine {
    /// Saves and deletes records with CloudKit's semantics: per-item results,
    /// atomic zones all-or-nothing when `atomic` is set, the save policy's
    /// conflict rules.
    func modify(
        saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID], policy: RecordSavePolicy,
        atomic: Bool, limits: OperationLimits, context: DatabaseContext
    ) async throws -> ModifyOutcome {
        let request = try prepareModify(
            saving: recordsToSave, deleting: recordIDsToDelete, policy: policy, atomic: atomic, limits: limits,
            context: context)
        return try await write { [self] txn, names in try run(request, txn: txn, names: &names) }
    }

    /// The blocking form of ``modify(saving:deleting:policy:atomic:limits:context:)``,
    /// for operations running on an `OperationQueue` thread.
    func modifyAndWait(
        saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID], policy: RecordSavePolicy,
        atomic: Bool, limits: OperationLimits, context: DatabaseContext, clientChangeTokenData: Data? = nil
    ) throws -> ModifyOutcome {
        var request = try prepareModify(
            saving: recordsToSave, deleting: recordIDsToDelete, policy: policy, atomic: atomic, limits: limits,
            context: context)
        request.clientChangeTokenData = clientChangeTokenData
        return try writeAndWait { [self] txn, names in try run(request, txn: txn, names: &names) }
    }

    /// A modify request after the checks that need no stored state.
    struct ModifyRequest: Sendable {
        let clients: [ClientRecord]
        let saveErrors: [Int: FogError]
        let deletes: [Record.ID]
        let deleteErrors: [Int: FogError]
        let context: DatabaseContext
        let user: String
        let policy: RecordSavePolicy
        let atomic: Bool
        let now: Date
        /// Stored per zone for the change feeds (`ModifyRecordsOperation.clientChangeTokenData`).
        var clientChangeTokenData: Data?
    }

    /// Checks what needs no stored state — the user, limits, names, keys, values,
    /// sizes, duplicates — and copies new assets into the store.
    func prepareModify(
        saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID], policy: RecordSavePolicy,
        atomic: Bool, limits: OperationLimits, context: DatabaseContext
    ) throws(FogError) -> ModifyRequest {
        try access.check(recordsToSave.isEmpty ? .delete : .save, in: context)
        guard let user = context.user else { throw FogError(.internalError, message: "the access policy let nobody write") }
        let itemCount = recordsToSave.count + recordIDsToDelete.count
        guard itemCount <= limits.maximumItems else {
            throw FogError(.limitExceeded, message: "\(itemCount) items in one request; the limit is \(limits.maximumItems)")
        }
        var clients = recordsToSave.map(ClientRecord.init)
        var preErrors: [Int: FogError] = [:]
        // An ID may appear once per request: every occurrence of a repeated ID fails.
        var occurrences: [Record.ID: Int] = [:]
        for client in clients { occurrences[client.recordID, default: 0] += 1 }
        for id in recordIDsToDelete { occurrences[id, default: 0] += 1 }
        func repeated(_ id: Record.ID) -> FogError? {
            (occurrences[id] ?? 0) > 1
                ? FogError(.invalidArguments, message: "record \(id.recordName) appears more than once in the request")
                : nil
        }
        var totalBytes = 0
        for (i, client) in clients.enumerated() {
            do throws(FogError) {
                if let error = repeated(client.recordID) { throw error }
                try validate(client)
                let size = RecordCodec.countedSize(of: client.values)
                totalBytes += size
                guard size <= Validation.maximumRecordSize else {
                    throw FogError(
                        .limitExceeded,
                        message:
                            "record \(client.recordID.recordName) holds \(size) bytes; the limit is \(Validation.maximumRecordSize) (assets excluded)"
                    )
                }
            } catch {
                preErrors[i] = error
            }
        }
        guard totalBytes <= limits.maximumBytes else {
            throw FogError(
                .limitExceeded, message: "the request holds \(totalBytes) bytes of record data; the limit is \(limits.maximumBytes)")
        }
        var deleteErrors: [Int: FogError] = [:]
        for (i, id) in recordIDsToDelete.enumerated() {
            if let error = repeated(id) { deleteErrors[i] = error }
        }
        // Assets are copied into the store before the transaction; a failed save
        // leaves an unreferenced copy, which is harmless.
        for i in clients.indices where preErrors[i] == nil {
            do { try storeAssets(&clients[i]) } catch { preErrors[i] = error }
        }
        return ModifyRequest(
            clients: clients, saveErrors: preErrors, deletes: recordIDsToDelete, deleteErrors: deleteErrors,
            context: context, user: user, policy: policy, atomic: atomic, now: Date())
    }

    /// Applies a prepared request inside a write transaction.
    func run(_ request: ModifyRequest, txn: Store.WriteTransaction, names: inout NameWriter<Store>) throws -> ModifyOutcome {
        var run = ModifyRun(
            engine: self, txn: txn, names: names, context: request.context, user: request.user, policy: request.policy,
            now: request.now, sequence: try nextCounter(Layout.metaSequence, in: txn),
            clientChangeTokenData: request.clientChangeTokenData)
        let outcome = try run.execute(
            clients: request.clients, saveErrors: request.saveErrors, deletes: request.deletes,
            deleteErrors: request.deleteErrors, atomic: request.atomic)
        names = run.names
        return outcome
    }

    private func validate(_ client: ClientRecord) throws(FogError) {
        try Validation.recordName(client.recordID.recordName)
        try Validation.recordType(client.recordType)
        try Validation.zoneName(client.recordID.zoneID.zoneName, allowDefault: true)
        for key in client.changedKeys { try Validation.fieldKey(key) }
        for (key, value) in client.values {
            try Validation.fieldKey(key)
            try Validation.value(value, key: key, zoneID: client.recordID.zoneID)
        }
        if let parent = client.parent {
            guard parent.action == .none else {
                throw FogError(.invalidArguments, message: "the parent reference of \(client.recordID.recordName) must use action none")
            }
            guard Validation.sameZone(parent.recordID.zoneID, client.recordID.zoneID) else {
                throw FogError(.invalidArguments, message: "the parent of \(client.recordID.recordName) must be in the same zone")
            }
            guard parent.recordID.recordName != client.recordID.recordName else {
                throw FogError(.invalidArguments, message: "record \(client.recordID.recordName) cannot be its own parent")
            }
        }
    }

    /// Copies unsaved assets into the assets folder and points the values at the copies.
    private func storeAssets(_ client: inout ClientRecord) throws(FogError) {
        for (key, value) in client.values {
            switch value {
            case .asset(let a) where a.storedName == nil:
                client.values[key] = .asset(try storeAsset(a, key: key))
            case .assetList(let list) where list.contains(where: { $0.storedName == nil }):
                var stored: [Asset] = []
                for a in list { stored.append(a.storedName == nil ? try storeAsset(a, key: key) : a) }
                client.values[key] = .assetList(stored)
            default: break
            }
        }
    }

    /// Flushes a copied asset and the folder entry naming it to disk, so a durable
    /// commit never points at a file the system has not written yet.
    private static func flush(_ file: URL) throws {
        let handle = try FileHandle(forUpdating: file)
        try handle.synchronize()
        try handle.close()
        if let folder = FileHandle(forReadingAtPath: file.deletingLastPathComponent().path) {
            try? folder.synchronize()
            try? folder.close()
        }
    }

    private func storeAsset(_ asset: Asset, key: String) throws(FogError) -> Asset {
        guard let url = asset.fileURL, FileManager.default.fileExists(atPath: url.path) else {
            throw FogError(.assetFileNotFound, message: "field '\(key)': asset file \(asset.fileURL?.path ?? "nil") does not exist")
        }
        let name = UUID().uuidString.lowercased()
        let destination = assetDirectory.appendingPathComponent(name)
        do {
            try FileManager.default.copyItem(at: url, to: destination)
            if durability != .none { try Self.flush(destination) }
            let size = (try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)?.int64Value ?? 0
            return Asset(storedName: name, size: size, directory: assetDirectory)
        } catch {
            throw FogError(
                .assetNotAvailable, message: "field '\(key)': cannot read asset file \(url.path): \(error)", underlyingError: error)
        }
    }
}

/// One modify request inside its write transaction.
struct ModifyRun<Store: KeyValueStore> {
    let engine: Engine<Store>
    let txn: Store.WriteTransaction
    var names: NameWriter<Store>
    /// The index definitions of the record types this request wrote, read once.
    var indexDefinitions: [String: TypeIndexes] = [:]
    let context: DatabaseContext
    let user: String
    let policy: RecordSavePolicy
    let now: Date
    let sequence: Int64
    let clientChangeTokenData: Data?
    /// Whether the zone being applied had a record deleted (its old tombstones are pruned).
    private(set) var deletedInZone = false

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
        let existing: (row: Int64, record: StoredRecord)?
        let values: [String: FieldValue]
        let parent: String?
        let newFieldTypes: [(String, FieldType)]
    }

    private enum Plan {
        case save(SavePlan)
        case delete(row: Int64, record: StoredRecord)
    }

    mutating func execute(
        clients: [ClientRecord], saveErrors: [Int: FogError], deletes: [Record.ID], deleteErrors: [Int: FogError],
        atomic: Bool
    ) throws -> ModifyOutcome {
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
            let zone: ZoneInfo
            do {
                zone = try engine.zoneForWriting(zoneID, in: context, sequence: sequence, txn: txn)
            } catch {
                let e = FogError.wrapping(error)
                for item in requested { record(item, item.preError ?? e) }
                continue
            }
            let allOrNothing = atomic && zone.capabilities.contains(.atomic)
            var applied = 0
            deletedInZone = false
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
            let group = allOrNothing ? requested : parentsFirst(requested)
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
                        record(item, nil, saved: try apply(p, zone: zone, zoneID: item.id.zoneID))
                        applied += 1
                    } catch let e as FogError {
                        record(item, e)
                    }
                }
            }
            if applied > 0 { try noteZoneChanged(zoneID, zone: zone) }
        }
        return ModifyOutcome(
            saveResults: zip(clients, saveResults).map { ($0.recordID, $1!) },
            deleteResults: zip(deletes, deleteResults).map { ($0, $1!) })
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

    /// Records in the change logs that a zone changed in this request: the database log
    /// entry, the client's change token data, and the pruning of old tombstones.
    private mutating func noteZoneChanged(_ zoneID: RecordZone.ID, zone: ZoneInfo) throws {
        let address = try engine.address(of: zoneID, in: context)
        try engine.logZone(.changed, address: address, zone: zone.id, sequence: sequence, txn: txn)
        if let clientChangeTokenData { try engine.storeClientChangeToken(clientChangeTokenData, zone: zone.id, txn: txn) }
        if deletedInZone, context.tombstoneRetention.isFinite {
            try engine.pruneTombstones(zone: zone.id, before: now.addingTimeInterval(-context.tombstoneRetention), txn: txn)
        }
        deletedInZone = false
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
        var fieldTypes: [String: FieldType] = [:]
        var deleteSelfReferences: [String: Int] = [:]
    }

    private mutating func plan(_ item: Item, zone: ZoneInfo, savedNames: Set<String>, pending: inout PendingPlans) throws(FogError) -> Plan
    {
        if let e = item.preError { throw e }
        switch item.kind {
        case .delete(let id):
            guard let existing = try fogTry({ try load(zone: zone.id, name: id.recordName) }) else {
                throw FogError(.unknownItem, message: "record \(id.recordName) does not exist in zone \(id.zoneID.zoneName)")
            }
            try engine.access.check(.delete, request(for: existing.record))
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
                    serverRecord: makeRecord(existing.record, zoneID: client.recordID.zoneID), clientRecord: client.record)
            }
            if let existing, client.changeTag != existing.record.changeTag {
                throw FogError(
                    .serverRecordChanged,
                    message: "record \(name) changed since it was fetched (tag \(client.changeTag!) is not \(existing.record.changeTag))",
                    serverRecord: makeRecord(existing.record, zoneID: client.recordID.zoneID), clientRecord: client.record,
                    ancestorRecord: client.ancestor())
            }
            if existing == nil, client.changeTag != nil {
                throw FogError(.unknownItem, message: "record to update not found: \(name)")
            }
        case .changedKeys, .allKeys:
            break
        }
        try engine.access.check(.save, request(for: existing?.record, recordType: client.recordType, recordName: name))
        if let existing, existing.record.recordType != client.recordType {
            throw FogError(.invalidArguments, message: "record \(name) is a \(existing.record.recordType), not a \(client.recordType)")
        }

        // The values to store.
        var values: [String: FieldValue]
        if let existing {
            values = existing.record.values
            var keys = client.changedKeys
            if policy == .allKeys { keys += client.values.keys }
            for key in keys { values[key] = client.values[key] }
        } else {
            values = client.values
        }

        // Each field's type is fixed by its first write.
        var newTypes: [(String, FieldType)] = []
        for key in values.keys.sorted() {
            let type = values[key]!.fieldType
            var fixed = pending.fieldTypes[key]
            if fixed == nil { fixed = try fogTry { try names.fieldType(recordType: client.recordType, field: key) } }
            if let fixed {
                guard fixed == type else {
                    throw FogError(
                        .invalidArguments,
                        message:
                            "field '\(key)' of record type \(client.recordType) holds \(fixed.name) values; cannot save a \(type.name) in record \(name)"
                    )
                }
            } else {
                newTypes.append((key, type))
            }
        }

        let size = RecordCodec.countedSize(of: values)
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
                guard try fogTry({ try engine.rowID(zone: zone.id, name: parent, in: txn.readView) }) != nil else {
                    throw FogError(.referenceViolation, message: "the parent of \(name), \(parent), does not exist")
                }
            }
        } else {
            parent = existing!.record.parent
        }

        // Cascading references are limited per target (counting those planned in the group).
        let oldTargets = existing.map { deleteSelfTargets($0.record.values) } ?? []
        let addedTargets = deleteSelfTargets(values).subtracting(oldTargets)
        for target in addedTargets {
            let stored = try fogTry {
                try engine.countRefs(zone: zone.id, target: target, limit: Validation.maximumDeleteSelfReferences, in: txn.readView)
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
        for (key, type) in newTypes { pending.fieldTypes[key] = type }
        return SavePlan(client: client, existing: existing, values: values, parent: parent, newFieldTypes: newTypes)
    }

    /// What the access policy is asked about a stored record (or a new one, for `nil`).
    private func request(
        for record: StoredRecord?, recordType: String? = nil, recordName: String? = nil, cascadeOrigin: String? = nil
    ) -> AccessRequest {
        AccessRequest(
            caller: .user(user), scope: context.scope, zoneOwner: context.scope == .public ? "" : user,
            recordType: record?.recordType ?? recordType, recordName: record?.recordName ?? recordName, creator: record?.creator,
            cascadeOrigin: cascadeOrigin)
    }

    /// Asks the access policy about every record that deleting `record` would delete
    /// through `deleteSelf` references (as ``deleteRow(_:_:zone:visited:)`` will), so a
    /// delete fails as a whole, before anything is written, when one of them may not be
    /// deleted by the caller.
    private func checkCascade(from row: Int64, _ record: StoredRecord, zone: Int64) throws(FogError) {
        var visited: Set<Int64> = [row]
        var pending = [record.recordName]
        while let target = pending.popLast() {
            var sources: [Int64] = []
            try fogTry {
                try txn.scan(engine.refs, range: .prefix(Layout.refPrefix(zone: zone, target: target))) { key, _ in
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
                    try txn.withValue(forKey: bigEndianKey(source), in: engine.records) {
                        try RecordCodec.decode($0, names: &resolver, desiredKeys: [])
                    }
                }
                guard let stored else { continue }
                try engine.access.check(.cascadeDelete, request(for: stored, cascadeOrigin: record.recordName))
                pending.append(stored.recordName)
            }
        }
    }

    private func load(zone: Int64, name: String) throws -> (row: Int64, record: StoredRecord)? {
        guard let row = try engine.rowID(zone: zone, name: name, in: txn.readView) else { return nil }
        var resolver = names.resolver
        guard
            let record = try txn.withValue(forKey: bigEndianKey(row), in: engine.records, { try RecordCodec.decode($0, names: &resolver) })
        else {
            throw FormatError(message: "record \(name) names row \(row), which is missing")
        }
        return (row, record)
    }

    private func makeRecord(_ stored: StoredRecord, zoneID: RecordZone.ID) -> Record {
        stored.makeRecord(zoneID: zoneID, assetDirectory: engine.assetDirectory)
    }

    // MARK: - Applying (writes)

    private mutating func apply(_ plan: Plan, zone: ZoneInfo, zoneID: RecordZone.ID) throws -> Record? {
        switch plan {
        case .delete(let row, let record):
            var visited: Set<Int64> = []
            try deleteRow(row, record, zone: zone.id, visited: &visited)
            return nil
        case .save(let p):
            for (key, type) in p.newFieldTypes {
                try names.define(recordType: p.client.recordType, field: key, as: type)
            }
            let row = try p.existing?.row ?? engine.nextCounter(Layout.metaNextRowID, in: txn)
            let stored = StoredRecord(
                recordType: p.client.recordType, recordName: p.client.recordID.recordName, zone: zone.id,
                values: p.values, parent: p.parent, share: p.existing?.record.share,
                creationDate: p.existing?.record.creationDate ?? now, modificationDate: now,
                creator: p.existing?.record.creator ?? user, modifier: user, changeSequence: sequence)
            let bytes = try RecordCodec.encode(stored, names: &names)
            // A new row id is above every other, so the record appends to the table's last
            // page, which a B-tree store (LMDB) then fills instead of splitting it in half.
            try txn.put(count: bytes.count, forKey: bigEndianKey(row), in: engine.records, append: p.existing == nil) {
                $0.copyBytes(from: bytes)
            }
            if p.existing == nil {
                try txn.put(bigEndianKey(row), forKey: Layout.nameKey(zone: zone.id, recordName: stored.recordName), in: engine.recordNames)
            }
            try updateIndexEntries(old: p.existing?.record, new: stored, row: row, zone: zone.id)
            try engine.logSave(
                zone: zone.id, row: row, name: stored.recordName, previousSequence: p.existing?.record.changeSequence, sequence: sequence,
                txn: txn)
            let oldTargets = p.existing.map { deleteSelfTargets($0.record.values) } ?? []
            let newTargets = deleteSelfTargets(p.values)
            for target in oldTargets.subtracting(newTargets) {
                try txn.delete(Layout.refKey(zone: zone.id, target: target, source: row), in: engine.refs)
            }
            for target in newTargets.subtracting(oldTargets) {
                try txn.put([], forKey: Layout.refKey(zone: zone.id, target: target, source: row), in: engine.refs)
            }
            return makeRecord(stored, zoneID: zoneID)
        }
    }

    /// Brings a record's index entries from `old` to `new`, reading each record type's index
    /// definitions once per request (no request changes them).
    private mutating func updateIndexEntries(old: StoredRecord?, new: StoredRecord?, row: Int64, zone: Int64) throws {
        guard let recordType = new?.recordType ?? old?.recordType, let type = try names.resolver.id(recordType) else { return }
        let indexes: TypeIndexes
        if let known = indexDefinitions[recordType] {
            indexes = known
        } else {
            indexes = try engine.indexCatalog.indexes(of: recordType, engine: engine, txn: txn.readView, names: &names.resolver)
            indexDefinitions[recordType] = indexes
        }
        try engine.updateIndexEntries(
            old: old, new: new, row: row, zone: zone, type: type, oldIndexes: indexes, newIndexes: indexes, txn: txn, names: &names.resolver
        )
    }

    /// Deletes a record and, transitively, the records that reference it with `deleteSelf`.
    private mutating func deleteRow(_ row: Int64, _ record: StoredRecord, zone: Int64, visited: inout Set<Int64>) throws {
        guard visited.insert(row).inserted else { return }
        try txn.delete(bigEndianKey(row), in: engine.records)
        try txn.delete(Layout.nameKey(zone: zone, recordName: record.recordName), in: engine.recordNames)
        try updateIndexEntries(old: record, new: nil, row: row, zone: zone)
        guard let type = try names.resolver.id(record.recordType) else {
            throw FormatError(message: "record \(record.recordName) has a record type with no name id")
        }
        try engine.logDelete(
            zone: zone, row: row, name: record.recordName, type: type, previousSequence: record.changeSequence, sequence: sequence,
            now: now, txn: txn)
        deletedInZone = true
        for target in deleteSelfTargets(record.values) {
            try txn.delete(Layout.refKey(zone: zone, target: target, source: row), in: engine.refs)
        }
        var sources: [Int64] = []
        try txn.scan(engine.refs, range: .prefix(Layout.refPrefix(zone: zone, target: record.recordName))) { key, _ in
            var reader = KeyReader(Array(key))
            _ = try reader.readInt64()
            _ = try reader.readString()
            sources.append(try reader.readInt64())
            return true
        }
        for source in sources where !visited.contains(source) {
            var resolver = names.resolver
            guard
                let stored = try txn.withValue(
                    forKey: bigEndianKey(source), in: engine.records, { try RecordCodec.decode($0, names: &resolver) })
            else {
                try txn.delete(Layout.refKey(zone: zone, target: record.recordName, source: source), in: engine.refs)
                continue
            }
            try deleteRow(source, stored, zone: zone, visited: &visited)
        }
    }

    private func deleteSelfTargets(_ values: [String: FieldValue]) -> Set<String> {
        Engine<Store>.deleteSelfTargets(of: values)
    }
}

extension Engine {
    /// The names of the records that `values` reference with `deleteSelf`.
    static func deleteSelfTargets(of values: [String: FieldValue]) -> Set<String> {
        var targets: Set<String> = []
        for value in values.values {
            switch value {
            case .reference(let r) where r.action == .deleteSelf: targets.insert(r.recordID.recordName)
            case .referenceList(let list):
                for r in list where r.action == .deleteSelf { targets.insert(r.recordID.recordName) }
            default: break
            }
        }
        return targets
    }
}

extension Engine {
    /// The row id of a record, or `nil` when absent.
    @inline(__always)
    func rowID(zone: Int64, name: String, in txn: Store.ReadTransaction) throws -> Int64? {
        try txn.withValue(forKey: Layout.nameKey(zone: zone, recordName: name), in: recordNames) { try readBigEndianKey($0) }
    }

    /// How many records reference `target` with `deleteSelf`, counting up to `limit`.
    func countRefs(zone: Int64, target: String, limit: Int, in txn: Store.ReadTransaction) throws -> Int {
        var count = 0
        try txn.scan(refs, range: .prefix(Layout.refPrefix(zone: zone, target: target))) { _, _ in
            count += 1
            return count < limit
        }
        return count
    }
}
