import FogStorage
import Foundation
import Synchronization

/// Fetches records by ID (CloudKit's fetch-records requests).
final class RecordReader<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    let records: RecordStore<Store>
    let zones: ZoneDirectory<Store>
    /// The name table of the last fetch of every field, which later fetches of every field in
    /// the same zone share while their records hold no other name (``FetchNameTables``).
    let sharedTable = SharedNameTable()

    init(core: EngineCore<Store>, records: RecordStore<Store>, zones: ZoneDirectory<Store>) {
        self.core = core
        self.records = records
        self.zones = zones
    }

    /// Fetches records by ID in one snapshot; `desiredKeys` limits the fields
    /// decoded (`nil` for all, empty for none).
    func fetch(_ ids: [Record.ID], desiredKeys: [String]?, context: DatabaseContext) throws -> [(Record.ID, Result<Record, FogError>)] {
        var results: [(Record.ID, Result<Record, FogError>)] = []
        results.reserveCapacity(ids.count)
        try fetch(ids, desiredKeys: desiredKeys, context: context) { results.append(($0, $1)) }
        return results
    }

    /// Fetches one record with every field: ``fetch(_:desiredKeys:context:)`` for one ID,
    /// without the collection, the zone cache or the delivery closure a request of many takes.
    func fetch(_ id: Record.ID, context: DatabaseContext) throws -> Result<Record, FogError> {
        try access.check(.fetch, in: context)
        _ = try context.injectFaults(.fetchRecords, zones: [id.zoneID])
        if context.scope == .shared {
            var result: Result<Record, FogError>?
            try fetchShared(CollectionOfOne(id), wanted: nil, context: context) { result = $1 }
            guard let result else { throw FogError(.internalError, message: "a fetch of one record returned nothing") }
            return result
        }
        return try read { txn, names in
            var run = try FetchRun(reader: self, wanted: nil, expectedRecords: 1, context: context, txn: txn, names: &names)
            defer { run.tables.publish() }
            switch zone(of: id.zoneID, context: context, txn: txn) {
            case .failure(let e): return .failure(e)
            case .success(nil): return .failure(unknown(id))
            case .success(let info?): return try record(id, in: info, run: &run, txn: txn, names: &names)
            }
        }
    }

    /// Fetches `ids` in one snapshot, handing each result to `deliver` in order.
    func fetch(
        _ ids: some Collection<Record.ID>, desiredKeys: [String]?, context: DatabaseContext,
        _ deliver: (Record.ID, Result<Record, FogError>) -> Void
    ) throws {
        try access.check(.fetch, in: context)
        _ = try context.injectFaults(.fetchRecords, zones: ids.map(\.zoneID))
        let wanted = desiredKeys.map(Set.init)
        if context.scope == .shared {
            try fetchShared(ids, wanted: wanted, context: context, deliver)
            return
        }
        try read { txn, names in
            var run = try FetchRun(reader: self, wanted: wanted, expectedRecords: ids.count, context: context, txn: txn, names: &names)
            defer { run.tables.publish() }
            var zoneCache: [RecordZone.ID: Result<ZoneInfo?, FogError>] = [:]
            // Most requests read one zone: remember the last one before hashing.
            var lastZone: (id: RecordZone.ID, zone: Result<ZoneInfo?, FogError>)?
            for id in ids {
                let zone: Result<ZoneInfo?, FogError>
                if let lastZone, lastZone.id == id.zoneID {
                    zone = lastZone.zone
                } else if !zoneCache.isEmpty, let cached = zoneCache[id.zoneID] {
                    zone = cached
                } else {
                    zone = self.zone(of: id.zoneID, context: context, txn: txn)
                    // The first zone needs no dictionary: `lastZone` holds it.
                    if let lastZone { zoneCache[lastZone.id] = lastZone.zone }
                    if lastZone != nil { zoneCache[id.zoneID] = zone }
                }
                lastZone = (id.zoneID, zone)
                switch zone {
                case .failure(let e): deliver(id, .failure(e))
                case .success(nil): deliver(id, .failure(unknown(id)))
                case .success(let info?): deliver(id, try record(id, in: info, run: &run, txn: txn, names: &names))
                }
            }
        }
    }

    /// What the records of one fetch share: the fields it returns, their name tables, the
    /// memory their bytes are copied into, and the public database's security roles.
    struct FetchRun {
        let selection: FieldSelection
        /// One name table per zone: the records of a request share their field names.
        var tables: FetchNameTables
        var arena: FieldArenaWriter
        /// The public database's security roles, asked of every record fetched.
        var roles: PublicReadRoles?

        init(
            reader: RecordReader, wanted: Set<String>?, expectedRecords: Int, context: DatabaseContext, txn: Store.ReadTransaction,
            names: inout NameResolver<Store>
        ) throws {
            selection = try FieldSelection(wanted, names: &names)
            tables = FetchNameTables(
                shared: reader.sharedTable, selection: selection, assetDirectory: reader.assetDirectory, cipher: reader.core.cipher)
            arena = FieldArenaWriter(expectedRecords: expectedRecords)
            roles =
                context.scope == .public ? try PublicReadRoles(core: reader.core, caller: context.caller, txn: txn, names: &names) : nil
        }
    }

    /// The zone `zoneID` names for the context: `nil` for a default zone never written to.
    private func zone(of zoneID: RecordZone.ID, context: DatabaseContext, txn: Store.ReadTransaction) -> Result<ZoneInfo?, FogError> {
        Result { () throws(FogError) in
            let address = try zones.address(of: zoneID, in: context)
            let info = try fogTry { try zones.zoneInfo(at: address, in: txn) }
            if info == nil && !address.isDefault {
                throw zones.missingZoneError(zoneID, at: address, in: txn)
            }
            return info
        }
    }

    /// The record `id` of the zone `info`, as `run` returns records.
    ///
    /// The hinted row first, used only when the record there is this one in this snapshot;
    /// otherwise the `names` lookup, whose row becomes the hint. (One closure for both: a
    /// nested function capturing the request's state boxed it.)
    private func record(
        _ id: Record.ID, in info: ZoneInfo, run: inout FetchRun, txn: Store.ReadTransaction, names: inout NameResolver<Store>
    ) throws -> Result<Record, FogError> {
        let hash = RowHints.hash(zone: info.id, name: id.recordName)
        var hint = records.rowHints.row(for: hash)
        var record: Result<Record, FogError>?
        while record == nil {
            let row: Int64
            if let hint {
                row = hint
            } else {
                guard let found = try records.rowID(zone: info.id, name: id.recordName, in: txn) else { break }
                row = found
            }
            let hinted = hint != nil
            record =
                try records.withRecord(row, in: txn) { buffer -> Result<Record, FogError>? in
                    if hinted, !RecordView.hasZone(info.id, name: id.recordName, in: buffer) { return nil }
                    let view = try RecordView(buffer, checking: run.selection)
                    if run.roles != nil, let refusal = try run.roles!.refusal(of: view, id: id, names: &names) {
                        return .failure(refusal)
                    }
                    let table = run.tables.table(for: view, zoneID: id.zoneID)
                    return .success(try view.makeRecord(id: id, table: table, arena: &run.arena, names: &names))
                } ?? nil
            if !hinted {
                if record != nil { records.rowHints.remember(row, for: hash) }
                break
            }
            hint = nil
        }
        return record ?? .failure(unknown(id))
    }

    private func unknown(_ id: Record.ID) -> FogError {
        FogError(.unknownItem, message: "record \(id.recordName) does not exist in zone \(id.zoneID.zoneName)")
    }
}

/// The name tables of one fetch: the table the records of the current zone refer to, taken
/// from the last fetch when it knows every name of the record at hand, so that a fetch of a
/// few records makes no table of its own.
///
/// A table is written only by the request that made it, while it decodes (see
/// ``FieldNameTable``). A fetch of every field publishes its own table when it ends; a table
/// taken from there is shared and never written: a record with a name it lacks gets a new
/// table, and the records made before keep theirs.
struct FetchNameTables {
    private let shared: SharedNameTable
    private let selection: FieldSelection
    private let assetDirectory: URL
    private let cipher: FieldCipher
    private var current: FieldNameTable?
    /// Whether ``current`` came from ``shared`` (and must not be written).
    private var currentIsShared = false

    init(shared: SharedNameTable, selection: FieldSelection, assetDirectory: URL, cipher: FieldCipher) {
        self.cipher = cipher
        self.shared = shared
        self.selection = selection
        self.assetDirectory = assetDirectory
    }

    /// The table for the record `view` in `zoneID`.
    mutating func table(for view: RecordView, zoneID: RecordZone.ID) -> FieldNameTable {
        if let current, current.zoneID == zoneID, !currentIsShared || current.knowsNames(of: view) { return current }
        if selection.ids == nil, let last = shared.table, last.zoneID == zoneID, last.knowsNames(of: view) {
            current = last
            currentIsShared = true
            return last
        }
        let table = FieldNameTable(zoneID: zoneID, assetDirectory: assetDirectory, selection: selection, cipher: cipher)
        current = table
        currentIsShared = false
        return table
    }

    /// Offers the table this fetch made, if it made one, to later fetches of every field.
    func publish() {
        guard selection.ids == nil, !currentIsShared, let current, current.hasNames else { return }
        shared.table = current
    }
}

/// The name table fetches of every field share (``FetchNameTables``): the last one published.
final class SharedNameTable: Sendable {
    private let slot = Mutex<FieldNameTable?>(nil)

    var table: FieldNameTable? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}
