import FogStorage
import Foundation

/// The outcome of a modify request, item by item, in request order.
struct ModifyOutcome: Sendable {
    var saveResults: [(Record.ID, Result<Record, FogError>)] = []
    var deleteResults: [(Record.ID, Result<Void, FogError>)] = []
}

/// Saves and deletes records: a modify request is checked (``prepareModify``), then run in
/// one write transaction by a ``ModifyRun``.
final class RecordWriter<Store: KeyValueStore>: EngineService {
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

    /// Saves and deletes records with CloudKit's semantics: per-item results,
    /// atomic zones all-or-nothing when `atomic` is set, the save policy's
    /// conflict rules.
    func modify(
        saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID], policy: SavePolicy,
        atomic: Bool, limits: RequestLimits, context: DatabaseContext
    ) async throws -> ModifyOutcome {
        let request = try prepareModify(
            saving: recordsToSave, deleting: recordIDsToDelete, policy: policy, atomic: atomic, limits: limits,
            context: context)
        return try await request.removingFailedCopies { () async throws in
            try await write { [self] txn, names in try run(request, txn: txn, names: &names) }
        }
    }

    /// The blocking form of ``modify(saving:deleting:policy:atomic:limits:context:)``,
    /// for operations running on an `OperationQueue` thread.
    func modifyAndWait(
        saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID], policy: SavePolicy,
        atomic: Bool, limits: RequestLimits, context: DatabaseContext, clientChangeTokenData: Data? = nil
    ) throws -> ModifyOutcome {
        if let clientChangeTokenData {
            try Validation.blobSize(
                clientChangeTokenData, "clientChangeTokenData", limit: Validation.maximumClientChangeTokenDataSize)
        }
        var request = try prepareModify(
            saving: recordsToSave, deleting: recordIDsToDelete, policy: policy, atomic: atomic, limits: limits,
            context: context)
        request.clientChangeTokenData = clientChangeTokenData
        let prepared = request
        return try prepared.removingFailedCopiesAndWait {
            try writeAndWait { [self] txn, names in try run(prepared, txn: txn, names: &names) }
        }
    }

    /// A modify request after the checks that need no stored state.
    struct ModifyRequest: Sendable {
        let clients: [ClientRecord]
        let saveErrors: [Int: FogError]
        let deletes: [Record.ID]
        let deleteErrors: [Int: FogError]
        let context: DatabaseContext
        let user: String
        let policy: SavePolicy
        let atomic: Bool
        let now: Date
        /// Stored per zone for the change feeds (`ModifyRecordsOperation.clientChangeTokenData`).
        var clientChangeTokenData: Data?
        /// The asset files copied for each save (by index), removed again if the save fails.
        var assetCopies: [Int: [URL]] = [:]

        /// Runs the request's write and removes the asset copies of every save that did not
        /// succeed: all of them when the write throws.
        func removingFailedCopies(_ write: () async throws -> ModifyOutcome) async throws -> ModifyOutcome {
            let outcome: ModifyOutcome
            do {
                outcome = try await write()
            } catch {
                AssetFiles.remove(assetCopies.values.flatMap { $0 })
                throw error
            }
            removeCopies(failedIn: outcome)
            return outcome
        }

        /// The blocking form of ``removingFailedCopies(_:)``.
        func removingFailedCopiesAndWait(_ write: () throws -> ModifyOutcome) throws -> ModifyOutcome {
            let outcome: ModifyOutcome
            do {
                outcome = try write()
            } catch {
                AssetFiles.remove(assetCopies.values.flatMap { $0 })
                throw error
            }
            removeCopies(failedIn: outcome)
            return outcome
        }

        private func removeCopies(failedIn outcome: ModifyOutcome) {
            for (index, copies) in assetCopies where index < outcome.saveResults.count {
                if case .failure = outcome.saveResults[index].1 { AssetFiles.remove(copies) }
            }
        }
    }

    /// Checks what needs no stored state — the user, limits, names, keys, values,
    /// sizes, duplicates — and copies new assets into the store.
    func prepareModify(
        saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID], policy: SavePolicy,
        atomic: Bool, limits: RequestLimits, context: DatabaseContext
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
        // Every asset source is checked before anything is copied: a directory, a FIFO or a
        // device fails its save, and copies nothing.
        for i in clients.indices where preErrors[i] == nil {
            do { try checkAssetSources(clients[i]) } catch { preErrors[i] = error }
        }
        // Assets are copied into the store before the transaction; the copies of a save that
        // fails, here or in the transaction, are removed (`removingFailedCopies`).
        var copies: [Int: [URL]] = [:]
        for i in clients.indices where preErrors[i] == nil {
            do { copies[i] = try storeAssets(&clients[i]) } catch { preErrors[i] = error }
        }
        var request = ModifyRequest(
            clients: clients, saveErrors: preErrors, deletes: recordIDsToDelete, deleteErrors: deleteErrors,
            context: context, user: user, policy: policy, atomic: atomic, now: Date())
        request.assetCopies = copies.filter { !$0.value.isEmpty }
        return request
    }

    /// Applies a prepared request inside a write transaction.
    func run(_ request: ModifyRequest, txn: Store.WriteTransaction, names: inout NameWriter<Store>) throws -> ModifyOutcome {
        var run = ModifyRun(
            writer: self, txn: txn, names: names, context: request.context, user: request.user, policy: request.policy,
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

    /// Checks the source file of every asset the record would copy.
    private func checkAssetSources(_ client: ClientRecord) throws(FogError) {
        for (key, value) in client.values {
            switch value {
            case .asset(let a) where a.storedName == nil: try AssetFiles.checkSource(a, key: key)
            case .assetList(let list): for a in list where a.storedName == nil { try AssetFiles.checkSource(a, key: key) }
            default: break
            }
        }
    }

    /// Copies unsaved assets into the assets folder and points the values at the copies;
    /// returns the copies. If one copy fails, the others of the record are removed.
    private func storeAssets(_ client: inout ClientRecord) throws(FogError) -> [URL] {
        var copies: [URL] = []
        do throws(FogError) {
            for (key, value) in client.values {
                switch value {
                case .asset(let a) where a.storedName == nil:
                    let stored = try storeAsset(a, key: key)
                    copies.append(stored.fileURL!)
                    client.values[key] = .asset(stored)
                case .assetList(let list) where list.contains(where: { $0.storedName == nil }):
                    var stored: [Asset] = []
                    for a in list {
                        if a.storedName != nil {
                            stored.append(a)
                        } else {
                            let copy = try storeAsset(a, key: key)
                            copies.append(copy.fileURL!)
                            stored.append(copy)
                        }
                    }
                    client.values[key] = .assetList(stored)
                default: break
                }
            }
        } catch {
            AssetFiles.remove(copies)
            throw error
        }
        return copies
    }

    private func storeAsset(_ asset: Asset, key: String) throws(FogError) -> Asset {
        let name = UUID().uuidString.lowercased()
        let size = try AssetFiles.copy(asset, key: key, into: assetDirectory, name: name, flush: core.store.durability != .none)
        return Asset(storedName: name, size: size, directory: assetDirectory)
    }
}
