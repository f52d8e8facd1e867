import FogStorage
import Foundation

/// The outcome of a modify request, item by item, in request order.
struct ModifyOutcome: Sendable {
    var saveResults: [(Record.ID, Result<Record, FogError>)] = []
    var deleteResults: [(Record.ID, Result<Void, FogError>)] = []
    /// The record types whose just-in-time indexes wait to be built for older records.
    var pendingBuilds: Set<String> = []
    /// Whether the request wrote notifications (their listeners are woken after the commit).
    var notified = false
}

/// Saves and deletes records: a modify request is checked (``prepareModify``), then run in
/// one write transaction by a ``ModifyRun``.
final class RecordWriter<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    let records: RecordStore<Store>
    let indexes: IndexStore<Store>
    let catalog: SchemaCatalog<Store>
    let changes: ChangeLog<Store>
    let zones: ZoneDirectory<Store>
    /// Matches the changes against the subscriptions and writes their notifications.
    let subscriptions: SubscriptionStore<Store>

    init(
        core: EngineCore<Store>, records: RecordStore<Store>, indexes: IndexStore<Store>, catalog: SchemaCatalog<Store>,
        changes: ChangeLog<Store>, zones: ZoneDirectory<Store>, subscriptions: SubscriptionStore<Store>
    ) {
        self.subscriptions = subscriptions
        self.core = core
        self.records = records
        self.indexes = indexes
        self.catalog = catalog
        self.changes = changes
        self.zones = zones
    }

    /// Saves and deletes records with CloudKit's semantics: per-item results,
    /// atomic zones all-or-nothing when `atomic` is set, the save policy's
    /// conflict rules.
    ///
    /// - Parameters:
    ///   - saveRules: Each save's own rule, in the order of `recordsToSave` (Web Services
    ///     operations); `nil` for the request's `policy` throughout.
    ///   - deleteTags: The change tag that each delete at an index of `recordIDsToDelete`
    ///     must find stored; the deletes without one check none.
    func modify(
        saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID], policy: SavePolicy,
        atomic: Bool, limits: RequestLimits, context: DatabaseContext, saveRules: [SaveRule]? = nil,
        deleteTags: [Int: String] = [:]
    ) async throws -> ModifyOutcome {
        let request = try prepareModify(
            saving: recordsToSave, deleting: recordIDsToDelete, policy: policy, atomic: atomic, limits: limits,
            context: context, saveRules: saveRules, deleteTags: deleteTags)
        let outcome = try await request.removingFailedCopies { () async throws in
            try await write { [self] txn, names in try run(request, txn: txn, names: &names) }
        }
        if outcome.notified { subscriptions.signal.signal() }
        // The saves created fields just in time on a record type that had records: their
        // indexes are built now (until then development queries scan). A failure leaves the
        // build marked, for the next index change or `resumeIndexBuilds()` to complete.
        for type in outcome.pendingBuilds.sorted() { try? await indexes.buildIndexes(ofRecordType: type) }
        if let lost = request.lostReply { throw lost }
        return outcome
    }

    /// The blocking form of ``modify(saving:deleting:policy:atomic:limits:context:)``,
    /// for operations running on an `OperationQueue` thread.
    ///
    /// - Parameter alsoWrite: Called with the outcome inside the write transaction that
    ///   commits it, to write more in that transaction (a long-lived operation's outcome).
    func modifyAndWait(
        saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID], policy: SavePolicy,
        atomic: Bool, limits: RequestLimits, context: DatabaseContext, clientChangeTokenData: Data? = nil,
        alsoWrite: ((ModifyOutcome, Store.WriteTransaction) throws -> Void)? = nil
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
        let outcome = try prepared.removingFailedCopiesAndWait {
            try writeAndWait { [self] txn, names in
                let outcome = try run(prepared, txn: txn, names: &names)
                try alsoWrite?(outcome, txn)
                return outcome
            }
        }
        if outcome.notified { subscriptions.signal.signal() }
        // As in `modify`, without blocking the operation's thread on the build.
        if !outcome.pendingBuilds.isEmpty {
            let types = outcome.pendingBuilds.sorted()
            Task { [indexes] in for type in types { try? await indexes.buildIndexes(ofRecordType: type) } }
        }
        if let lost = prepared.lostReply { throw lost }
        return outcome
    }

    /// A modify request after the checks that need no stored state.
    struct ModifyRequest: Sendable {
        let clients: [ClientRecord]
        let saveErrors: [Int: FogError]
        let deletes: [Record.ID]
        let deleteErrors: [Int: FogError]
        /// The change tag each tag-checked delete expects, by delete index.
        var deleteTags: [Int: String] = [:]
        let context: DatabaseContext
        let user: String
        let policy: SavePolicy
        let atomic: Bool
        let now: Date
        /// Stored per zone for the change feeds (`ModifyRecordsOperation.clientChangeTokenData`).
        var clientChangeTokenData: Data?
        /// The names of the asset files copied for the request: collected after the write
        /// unless a record it committed references them.
        var assetCopies: [String] = []
        /// Held from before the copies until the write has ended (see ``AssetStore``).
        var assetLock: AssetLock?
        var assets: AssetStore<Store>?
        /// The error a fault plan reports once the write has committed (a lost reply).
        var lostReply: FogError?

        /// Runs the request's write, then releases the asset lock and collects the asset
        /// files that no record references: the copies of saves that failed (all of them when
        /// the write throws) and the files whose last reference the write removed.
        func removingFailedCopies(_ write: () async throws -> ModifyOutcome) async throws -> ModifyOutcome {
            defer { finishAssets() }
            return try await write()
        }

        /// The blocking form of ``removingFailedCopies(_:)``.
        func removingFailedCopiesAndWait(_ write: () throws -> ModifyOutcome) throws -> ModifyOutcome {
            defer { finishAssets() }
            return try write()
        }

        private func finishAssets() {
            assetLock?.release()
            guard let assets else { return }
            assets.note(assetCopies)
            assets.collect()
        }
    }

    /// Checks what needs no stored state — the user, limits, names, keys, values,
    /// sizes, duplicates — and copies new assets into the store.
    /// `saveRules` and `deleteTags` are ``modify(saving:deleting:policy:atomic:limits:context:saveRules:deleteTags:)``'s.
    func prepareModify(
        saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID], policy: SavePolicy,
        atomic: Bool, limits: RequestLimits, context: DatabaseContext, saveRules: [SaveRule]? = nil,
        deleteTags: [Int: String] = [:]
    ) throws(FogError) -> ModifyRequest {
        try access.check(recordsToSave.isEmpty ? .delete : .save, in: context)
        let injection = try context.injectFaults(
            .modifyRecords, zones: recordsToSave.map(\.recordID.zoneID) + recordIDsToDelete.map(\.zoneID),
            recordTypes: Set(recordsToSave.map(\.recordType)), writes: true)
        guard let user = context.user else { throw FogError(.internalError, message: "the access policy let nobody write") }
        let itemCount = recordsToSave.count + recordIDsToDelete.count
        guard itemCount <= limits.maximumItems else {
            throw FogError(.limitExceeded, message: "\(itemCount) items in one request; the limit is \(limits.maximumItems)")
        }
        let clients = recordsToSave.map(ClientRecord.init)
        var preErrors: [Int: FogError] = [:]
        // An ID may appear once per request: every occurrence of a repeated ID fails. (A
        // request of one item has nothing to count: most single saves. When every ID is
        // distinct, as in most requests, no item looks its ID up again.)
        var occurrences: [Record.ID: Int] = [:]
        if itemCount > 1 {
            occurrences = [Record.ID: Int](room: itemCount)
            for client in clients { occurrences[client.recordID, default: 0] += 1 }
            for id in recordIDsToDelete { occurrences[id, default: 0] += 1 }
        }
        let hasRepeats = occurrences.count < itemCount && itemCount > 1
        func repeated(_ id: Record.ID) -> FogError? {
            hasRepeats && (occurrences[id] ?? 0) > 1
                ? FogError(.invalidArguments, message: "record \(id.recordName) appears more than once in the request")
                : nil
        }
        var totalBytes = 0
        for (i, client) in clients.enumerated() {
            do throws(FogError) {
                if let error = repeated(client.recordID) { throw error }
                try validate(client)
                try sealEncryptedFields(clients[i], scope: context.scope)
                let size = RecordCodec.countedSize(of: clients[i].values)
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
        if let saveRules {
            for i in clients.indices {
                clients[i].rule = saveRules[i]
                if preErrors[i] == nil, saveRules[i].checksTag, clients[i].changeTag == nil {
                    preErrors[i] = FogError(
                        .invalidArguments,
                        message: "record \(clients[i].recordID.recordName): an update or replace needs the record's recordChangeTag")
                }
            }
        }
        var deleteErrors: [Int: FogError] = [:]
        for (i, id) in recordIDsToDelete.enumerated() {
            if let error = repeated(id) { deleteErrors[i] = error }
        }
        // Every asset source is checked before anything is copied: a directory, a FIFO or a
        // device fails its save, and copies nothing.
        for i in clients.indices where preErrors[i] == nil {
            do { try checkAssetSources(clients[i], limit: limits.maximumAssetSize) } catch { preErrors[i] = error }
        }
        // Assets are copied into the store before the transaction, under the shared asset lock
        // (held until the write ends, so that no collection removes a file between its copy,
        // or the check of a stored asset's file, and the commit); the copies no committed
        // record references are collected after the write (`removingFailedCopies`).
        let holdsAssets = clients.indices.contains { preErrors[$0] == nil && clients[$0].values.values.contains(where: \.holdsAsset) }
        let lock = holdsAssets ? AssetLock.shared(in: assetDirectory) : nil
        var copies: [String] = []
        for i in clients.indices where preErrors[i] == nil {
            do { try storeAssets(clients[i], limit: limits.maximumAssetSize, copies: &copies) } catch { preErrors[i] = error }
        }
        if let injection, let error = injection.itemError {
            for (i, client) in clients.enumerated() where preErrors[i] == nil {
                if injection.matches(zoneID: client.recordID.zoneID, recordType: client.recordType) { preErrors[i] = error }
            }
            for (i, id) in recordIDsToDelete.enumerated() where deleteErrors[i] == nil {
                if injection.matches(zoneID: id.zoneID, recordType: nil) { deleteErrors[i] = error }
            }
        }
        var request = ModifyRequest(
            clients: clients, saveErrors: preErrors, deletes: recordIDsToDelete, deleteErrors: deleteErrors,
            context: context, user: user, policy: policy, atomic: atomic, now: Date())
        request.deleteTags = deleteTags
        request.assetCopies = copies
        request.assetLock = lock
        request.assets = records.assets
        request.lostReply = injection?.lostReply
        return request
    }

    /// Applies a prepared request inside a write transaction.
    func run(_ request: ModifyRequest, txn: Store.WriteTransaction, names: inout NameWriter<Store>) throws -> ModifyOutcome {
        // A save changes no field declaration but the types it fixes (`NameWriter.define`).
        names.resolver.useCommittedFieldTypes()
        defer { names.resolver.stopUsingCommittedFieldTypes() }
        var run = ModifyRun(
            writer: self, txn: txn, names: names, context: request.context, user: request.user, policy: request.policy,
            now: request.now, sequence: try nextCounter(Layout.metaSequence, in: txn),
            clientChangeTokenData: request.clientChangeTokenData)
        run.notices = try subscriptions.matcher(context: request.context, txn: txn)
        run.deleteTags = request.deleteTags
        var outcome = try run.execute(
            clients: request.clients, saveErrors: request.saveErrors, deletes: request.deletes,
            deleteErrors: request.deleteErrors, atomic: request.atomic)
        if let notices = run.notices, !notices.pending.isEmpty || !notices.removed.isEmpty {
            try subscriptions.write(notices.pending, removing: notices.removed, now: request.now, retention: notices.retention, txn: txn)
            outcome.notified = !notices.pending.isEmpty
        }
        // Swapped, not assigned: the run's names are what the request leaves, and the caller's
        // older copy goes with the run (no copy made of either).
        swap(&names, &run.names)
        return outcome
    }

    private func validate(_ client: ClientRecord) throws(FogError) {
        try Validation.recordName(client.recordID.recordName)
        let isShare = client.recordType == Record.SystemType.share
        if isShare {
            try validateShare(client)
        } else {
            try Validation.recordType(client.recordType)
        }
        try Validation.zoneName(client.recordID.zoneID.zoneName, allowDefault: true)
        // A share's reserved keys come from the share itself; its system fields are its own.
        func isShareKey(_ key: String) -> Bool { isShare && (Share.internalKeys.contains(key) || Share.systemFieldKeys.contains(key)) }
        // An encrypted field's stored name is checked as the client's key it holds.
        func clientKey(_ key: String) -> String { Record.isEncryptedKey(key) ? Record.plainKey(ofEncrypted: key) : key }
        for key in client.changedKeys where !isShareKey(key) { try Validation.fieldKey(clientKey(key)) }
        for (key, value) in client.values {
            if !isShareKey(key) { try Validation.fieldKey(clientKey(key)) }
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

    /// Checks the encrypted fields of `client` (reference §3.7) and replaces their values by
    /// their sealed form (``FieldCipher/seal(_:field:)``), noting each one's type in
    /// ``ClientRecord/encryptedTypes``: not in the public database, not on a share, no assets
    /// or references, and no key set both as a plain and as an encrypted field.
    private func sealEncryptedFields(_ client: ClientRecord, scope: Database.Scope) throws(FogError) {
        guard client.values.keys.contains(where: Record.isEncryptedKey) else { return }
        let name = client.recordID.recordName
        var sealed: [String: FieldValue] = [:]
        for (key, value) in client.values where Record.isEncryptedKey(key) {
            let field = Record.plainKey(ofEncrypted: key)
            guard scope != .public else {
                throw FogError(
                    .invalidArguments,
                    message: "record \(name): encrypted values are not available in the public database (field '\(field)')")
            }
            guard client.recordType != Record.SystemType.share else {
                throw FogError(.invalidArguments, message: "share \(name): a share cannot hold encrypted values (field '\(field)')")
            }
            switch value {
            case .asset, .assetList, .reference, .referenceList:
                throw FogError(
                    .invalidArguments,
                    message:
                        "record \(name): encrypted field '\(field)' holds a \(value.fieldType.name) value; assets and references cannot be encrypted"
                )
            default: break
            }
            guard client.values[field] == nil else {
                throw FogError(
                    .invalidArguments, message: "record \(name): '\(field)' is set both as a plain field and as an encrypted field")
            }
            client.encryptedTypes[key] = value.fieldType
            sealed[key] = try core.cipher.seal(value, field: field)
        }
        for (key, value) in sealed { client.values[key] = value }
    }

    /// The rules a share meets on its own (reference §10.1): made as a ``Share``, in a
    /// custom zone, at most ``Share/maximumParticipants`` participants besides the owner, and
    /// no invited participants beside a public permission.
    private func validateShare(_ client: ClientRecord) throws(FogError) {
        let name = client.recordID.recordName
        guard let share = client.record as? Share else {
            throw FogError(
                .invalidArguments,
                message: "record \(name) has type cloudkit.share: make shares with Share(rootRecord:) or Share(recordZoneID:)")
        }
        guard !client.recordID.zoneID.isDefaultZone else {
            throw FogError(.invalidArguments, message: "share \(name): the default zone cannot be shared; share records of a custom zone")
        }
        let participants = share.participants.dropFirst()
        guard participants.count <= Share.maximumParticipants else {
            throw FogError(
                .tooManyParticipants,
                message: "share \(name) has \(participants.count) participants besides its owner; the limit is \(Share.maximumParticipants)"
            )
        }
        if share.publicPermission != .none, participants.contains(where: { $0.acceptanceStatus == .pending && $0.role != .publicUser }) {
            throw FogError(
                .invalidArguments,
                message:
                    "share \(name) has public permission \(share.publicPermission) and invited participants; a share has one or the other")
        }
    }

    /// Checks the source file of every asset the record would copy, and its size against `limit`.
    private func checkAssetSources(_ client: ClientRecord, limit: Int) throws(FogError) {
        for (key, value) in client.values {
            switch value {
            case .asset(let a) where a.storedName == nil: try AssetFiles.checkSource(a, key: key, limit: limit)
            case .assetList(let list):
                for a in list where a.storedName == nil { try AssetFiles.checkSource(a, key: key, limit: limit) }
            default: break
            }
        }
    }

    /// Copies unsaved assets into the assets folder and points the values at the copies,
    /// adding their names to `copies`. A stored asset whose file is not in this store (an
    /// asset of another container, or one collected since it was fetched) is copied again
    /// from its file URL.
    private func storeAssets(_ client: ClientRecord, limit: Int, copies: inout [String]) throws(FogError) {
        for (key, value) in client.values {
            switch value {
            case .asset(let a) where needsCopy(a):
                client.values[key] = .asset(try storeAsset(a, key: key, limit: limit, copies: &copies))
            case .assetList(let list) where list.contains(where: needsCopy):
                var stored: [Asset] = []
                for a in list {
                    stored.append(needsCopy(a) ? try storeAsset(a, key: key, limit: limit, copies: &copies) : a)
                }
                client.values[key] = .assetList(stored)
            default: break
            }
        }
    }

    private func needsCopy(_ asset: Asset) -> Bool {
        guard let name = asset.storedName else { return true }
        return !records.assets.hasFile(name)
    }

    private func storeAsset(_ asset: Asset, key: String, limit: Int, copies: inout [String]) throws(FogError) -> Asset {
        let (name, size) = try AssetFiles.store(
            asset, key: key, into: assetDirectory, limit: limit, flush: core.store.durability != .none)
        copies.append(name)
        return Asset(storedName: name, size: size, directory: assetDirectory)
    }
}

extension FieldValue {
    /// Whether the value is an asset or a list of assets.
    var holdsAsset: Bool {
        switch self {
        case .asset, .assetList: true
        default: false
        }
    }
}
