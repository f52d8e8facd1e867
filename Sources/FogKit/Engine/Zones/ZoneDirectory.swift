import FogStorage
import Foundation

/// A zone as the engine stores it.
struct ZoneInfo: Sendable, Hashable {
    let id: Int64
    let capabilities: RecordZone.Capabilities
    let createdSequence: Int64

    func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: 12)
        w.varint(id)
        w.varint(UInt64(capabilities.rawValue))
        w.varint(createdSequence)
        return w.bytes
    }

    static func decode(_ buffer: UnsafeRawBufferPointer) throws -> ZoneInfo {
        var r = ByteReader(buffer)
        return ZoneInfo(
            id: try r.int64(), capabilities: RecordZone.Capabilities(rawValue: UInt(try r.varint())),
            createdSequence: try r.int64())
    }
}

/// The outcome of a zone request, item by item, in request order.
typealias ZoneOutcome = (saves: [(RecordZone.ID, Result<RecordZone, FogError>)], deletes: [(RecordZone.ID, Result<Void, FogError>)])

/// Where a zone lives in the `zones` table.
struct ZoneAddress: Sendable, Hashable {
    let scope: Int
    let owner: String
    let zoneName: String

    var key: [UInt8] { Layout.zoneKey(scope: scope, owner: owner, zoneName: zoneName) }
    var isDefault: Bool { zoneName == RecordZone.ID.defaultZoneName }
}

/// The zones of every database: where each lives (``ZoneAddress``, from CloudKit's scope
/// rules), what is stored for it (``ZoneInfo``), and the zone requests (save, delete, fetch).
/// Deleting a zone asks the record, index and change-log services to drop its contents.
final class ZoneDirectory<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    let records: RecordStore<Store>
    let indexes: IndexStore<Store>
    let changes: ChangeLog<Store>
    /// Zone address → ``ZoneInfo``.
    let zones: Table
    /// Zone id → zone address.
    let zoneIDs: Table
    /// The zone read last in a read-only snapshot.
    let lastRead = LastZoneRead()

    init(core: EngineCore<Store>, records: RecordStore<Store>, indexes: IndexStore<Store>, changes: ChangeLog<Store>) {
        self.core = core
        self.records = records
        self.indexes = indexes
        self.changes = changes
        zones = core.store.table(named: Layout.zones)
        zoneIDs = core.store.table(named: Layout.zoneIDs)
    }

    /// Maps a client's zone ID to the stored zone, applying CloudKit's rules: the
    /// public database has only its default zone; a private database holds the
    /// current user's zones; the shared database holds zones shared with the user.
    func address(of zoneID: RecordZone.ID, in context: DatabaseContext) throws(FogError) -> ZoneAddress {
        switch context.scope {
        case .public:
            guard zoneID.isDefaultZone else {
                throw FogError(
                    .zoneNotFound,
                    message: "zone \(zoneID.zoneName) does not exist: the public database has only \(RecordZone.ID.defaultZoneName)")
            }
            return ZoneAddress(scope: Database.Scope.public.rawValue, owner: "", zoneName: RecordZone.ID.defaultZoneName)
        case .private:
            try access.check(.zoneRead, in: context)
            guard let user = context.user else {
                throw FogError(.internalError, message: "the access policy let nobody into a private database")
            }
            // A private database holds its owner's zones only: another owner's zone is not in it.
            guard zoneID.ownerName == CurrentUserDefaultName || zoneID.ownerName == user else {
                throw FogError(.zoneNotFound, message: "zone \(zoneID) does not exist in this user's private database")
            }
            return ZoneAddress(scope: Database.Scope.private.rawValue, owner: user, zoneName: zoneID.zoneName)
        case .shared:
            try access.check(.zoneRead, in: context)
            throw FogError(.zoneNotFound, message: "zone \(zoneID) is not shared with this user")
        }
    }

    /// The stored zone at `address`, or `nil` when it does not exist (a default
    /// zone nobody has written to yet has no stored entry).
    ///
    /// A read-only transaction of the snapshot the last zone was read in takes that read
    /// again (``LastZoneRead``).
    func zoneInfo(at address: ZoneAddress, in txn: Store.ReadTransaction) throws -> ZoneInfo? {
        let snapshot = txn.snapshotID
        if let snapshot, let known = lastRead.info(at: address, snapshot: snapshot) { return known }
        let info = try Layout.withZoneKey(scope: address.scope, owner: address.owner, zoneName: address.zoneName) { key in
            try txn.withValue(forKey: key, in: zones) { try ZoneInfo.decode($0) }
        }
        if let snapshot { lastRead.remember(info, at: address, snapshot: snapshot) }
        return info
    }

    /// The stored zone at `address`, creating it with `capabilities` when missing.
    func createZone(
        at address: ZoneAddress, capabilities: RecordZone.Capabilities, sequence: Int64, in txn: Store.WriteTransaction
    ) throws -> ZoneInfo {
        if let existing = try zoneInfo(at: address, in: txn.readView) { return existing }
        let info = ZoneInfo(id: try nextCounter(Layout.metaNextZoneID, in: txn), capabilities: capabilities, createdSequence: sequence)
        try txn.put(info.encoded(), forKey: address.key, in: zones)
        try txn.put(address.key, forKey: bigEndianKey(info.id), in: zoneIDs)
        return info
    }

    /// The zone for writing records: default zones come into being on first use.
    func zoneForWriting(
        _ zoneID: RecordZone.ID, in context: DatabaseContext, sequence: Int64, txn: Store.WriteTransaction
    ) throws -> ZoneInfo {
        let address = try address(of: zoneID, in: context)
        if let info = try zoneInfo(at: address, in: txn.readView) { return info }
        guard address.isDefault else {
            throw missingZoneError(zoneID, at: address, in: txn.readView, hint: "; save the zone first")
        }
        return try createZone(at: address, capabilities: [], sequence: sequence, in: txn)
    }

    /// The zone a client sees for a stored one.
    func makeZone(_ zoneID: RecordZone.ID, info: ZoneInfo?) -> RecordZone {
        RecordZone(zoneID: zoneID, capabilities: info?.capabilities ?? [])
    }

    // MARK: - Zone operations

    /// Saves zones and deletes zones, each item on its own.
    func modifyZones(
        saving zonesToSave: [RecordZone], deleting zoneIDsToDelete: [RecordZone.ID], purging: Bool = false, context: DatabaseContext
    ) async throws -> ZoneOutcome {
        let injection = try checkZoneRequest(saving: zonesToSave, deleting: zoneIDsToDelete, context: context)
        let saveIDs = zonesToSave.map(\.zoneID)
        // A deleted zone's asset files lose their references: collected after the write.
        defer { records.assets.collect() }
        let outcome = try await write { [self] txn, _ in
            try runZones(saving: saveIDs, deleting: zoneIDsToDelete, purging: purging, context: context, txn: txn)
        }
        if let lost = injection?.lostReply { throw lost }
        return outcome
    }

    /// The blocking form of ``modifyZones(saving:deleting:context:)``, for operations.
    func modifyZonesAndWait(
        saving zonesToSave: [RecordZone], deleting zoneIDsToDelete: [RecordZone.ID], context: DatabaseContext
    ) throws -> ZoneOutcome {
        let injection = try checkZoneRequest(saving: zonesToSave, deleting: zoneIDsToDelete, context: context)
        let saveIDs = zonesToSave.map(\.zoneID)
        defer { records.assets.collect() }
        let outcome = try writeAndWait { [self] txn, _ in
            try runZones(saving: saveIDs, deleting: zoneIDsToDelete, purging: false, context: context, txn: txn)
        }
        if let lost = injection?.lostReply { throw lost }
        return outcome
    }

    private func checkZoneRequest(
        saving zonesToSave: [RecordZone], deleting zoneIDsToDelete: [RecordZone.ID], context: DatabaseContext
    ) throws(FogError) -> FaultInjector.Injection? {
        try access.check(.zoneModify, in: context)
        try access.check(
            .zoneModify, AccessRequest(caller: context.caller, scope: context.scope, zoneName: zonesToSave.first?.zoneID.zoneName))
        if let first = zoneIDsToDelete.first {
            try access.check(.zoneDelete, AccessRequest(caller: context.caller, scope: context.scope, zoneName: first.zoneName))
        }
        return try context.injectFaults(.modifyZones, zones: zonesToSave.map(\.zoneID) + zoneIDsToDelete, writes: true)
    }

    private func runZones(
        saving saveIDs: [RecordZone.ID], deleting deleteIDs: [RecordZone.ID], purging: Bool, context: DatabaseContext,
        txn: Store.WriteTransaction
    ) throws -> ZoneOutcome {
        let sequence = try nextCounter(Layout.metaSequence, in: txn)
        let now = Date()
        var deleted: ZoneAddress?
        var deletedCount = 0
        var saves: [(RecordZone.ID, Result<RecordZone, FogError>)] = []
        for zoneID in saveIDs {
            saves.append(
                (
                    zoneID,
                    Result { () throws(FogError) -> RecordZone in
                        try Validation.zoneName(zoneID.zoneName, allowDefault: true)
                        let address = try address(of: zoneID, in: context)
                        let capabilities: RecordZone.Capabilities = address.isDefault ? [] : .customZone
                        let info = try fogTry { () throws -> ZoneInfo in
                            let info = try createZone(at: address, capabilities: capabilities, sequence: sequence, in: txn)
                            if info.createdSequence == sequence {
                                try changes.logZone(.changed, address: address, zone: info.id, sequence: sequence, txn: txn)
                            }
                            return info
                        }
                        return makeZone(zoneID, info: info)
                    }
                ))
        }
        var deletes: [(RecordZone.ID, Result<Void, FogError>)] = []
        for zoneID in deleteIDs {
            deletes.append(
                (
                    zoneID,
                    Result { () throws(FogError) -> Void in
                        let address = try address(of: zoneID, in: context)
                        guard !address.isDefault else {
                            throw FogError(.invalidArguments, message: "the default zone cannot be deleted")
                        }
                        try fogTry {
                            guard let info = try zoneInfo(at: address, in: txn.readView) else {
                                throw FogError(.zoneNotFound, message: "zone \(zoneID.zoneName) does not exist")
                            }
                            let usage = try deleteZoneContents(info, in: txn)
                            try StorageUsage.add(-usage, to: UsageOwner(address), meta: core.meta, txn: txn)
                            try txn.delete(address.key, in: zones)
                            try txn.delete(bigEndianKey(info.id), in: zoneIDs)
                            try changes.logZone(
                                purging ? .purged : .deleted, address: address, zone: info.id, sequence: sequence, now: now, txn: txn)
                            deleted = address
                            deletedCount += 1
                        }
                    }
                ))
        }
        if let deleted, context.tombstoneRetention.isFinite {
            try changes.pruneZoneDeletions(
                scope: deleted.scope, owner: deleted.owner, before: now.addingTimeInterval(-context.tombstoneRetention),
                limit: max(EngineDefaults.pruneBatchSize, 2 * deletedCount), txn: txn)
        }
        return (saves, deletes)
    }

    /// Removes every record of a zone, with its index entries and change log; returns the
    /// bytes its records counted in their owner's storage.
    func deleteZoneContents(_ info: ZoneInfo, in txn: Store.WriteTransaction) throws -> Int64 {
        let usage = try records.deleteAll(zone: info.id, in: txn)
        try indexes.deleteAll(zone: info.id, in: txn)
        try changes.deleteAll(zone: info.id, in: txn)
        return usage
    }

    /// Fetches zones by ID.
    func fetchZones(_ zoneIDs: [RecordZone.ID], context: DatabaseContext) throws -> [(RecordZone.ID, Result<RecordZone, FogError>)] {
        if context.scope == .shared, let user = context.user {
            try access.check(.zoneRead, in: context)
            _ = try context.injectFaults(.fetchZones, zones: zoneIDs)
            // The zones shared with the user (`ZoneDirectory+Sharing.swift`).
            return try read { txn, names in
                zoneIDs.map { zoneID in
                    (
                        zoneID,
                        Result { () throws(FogError) in
                            let (info, _) = try fogTry { try sharedZone(zoneID, of: user, in: txn, names: &names) }
                            return makeZone(zoneID, info: info)
                        }
                    )
                }
            }
        }
        return try read { txn, _ in
            zoneIDs.map { zoneID in
                (
                    zoneID,
                    Result { () throws(FogError) -> RecordZone in
                        let address = try address(of: zoneID, in: context)
                        let info = try fogTry { try zoneInfo(at: address, in: txn) }
                        guard info != nil || address.isDefault else {
                            throw missingZoneError(zoneID, at: address, in: txn)
                        }
                        return makeZone(zoneID, info: info)
                    }
                )
            }
        }
    }

    /// Every zone of the database: the default zone first, then custom zones by name.
    func allZones(context: DatabaseContext) throws -> [RecordZone] {
        try access.check(.zoneRead, in: context)
        _ = try context.injectFaults(.fetchZones, zones: [])
        switch context.scope {
        case .public: return [RecordZone.default()]
        case .shared:
            guard let user = context.user else {
                throw FogError(.internalError, message: "the access policy let nobody into a shared database")
            }
            return try read { txn, names in
                try sharedZones(of: user, in: txn, names: &names).map { makeZone($0.0, info: $0.1) }
            }
        case .private:
            guard let user = context.user else {
                throw FogError(.internalError, message: "the access policy let nobody into a private database")
            }
            let prefix = Layout.zonePrefix(scope: Database.Scope.private.rawValue, owner: user)
            return try read { txn, _ in
                var result = [RecordZone.default()]
                try txn.scan(zones, range: .prefix(prefix)) { key, value in
                    var reader = KeyReader(Array(key))
                    _ = try reader.readInt64()
                    _ = try reader.readString()
                    let name = try reader.readString()
                    if name != RecordZone.ID.defaultZoneName {
                        result.append(
                            RecordZone(zoneID: RecordZone.ID(zoneName: name), capabilities: try ZoneInfo.decode(value).capabilities))
                    }
                    return true
                }
                return result
            }
        }
    }
}
