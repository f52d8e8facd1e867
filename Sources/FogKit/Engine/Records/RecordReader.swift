import FogStorage
import Foundation

/// Fetches records by ID (CloudKit's fetch-records requests).
final class RecordReader<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    let records: RecordStore<Store>
    let zones: ZoneDirectory<Store>

    init(core: EngineCore<Store>, records: RecordStore<Store>, zones: ZoneDirectory<Store>) {
        self.core = core
        self.records = records
        self.zones = zones
    }

    /// Fetches records by ID in one snapshot; `desiredKeys` limits the fields
    /// decoded (`nil` for all, empty for none).
    func fetch(_ ids: [Record.ID], desiredKeys: [String]?, context: DatabaseContext) throws -> [(Record.ID, Result<Record, FogError>)] {
        try access.check(.fetch, in: context)
        let wanted = desiredKeys.map(Set.init)
        return try read { txn, names in
            let selection = try FieldSelection(wanted, names: &names)
            var zoneCache: [RecordZone.ID: Result<ZoneInfo?, FogError>] = [:]
            // Most requests read one zone: remember the last one before hashing.
            var lastZone: (id: RecordZone.ID, zone: Result<ZoneInfo?, FogError>)?
            var results: [(Record.ID, Result<Record, FogError>)] = []
            results.reserveCapacity(ids.count)
            // One name table per zone: the records of a request share their field names.
            var table: FieldNameTable?
            var arena = FieldArenaWriter(expectedRecords: ids.count)
            for id in ids {
                let zone: Result<ZoneInfo?, FogError>
                if let lastZone, lastZone.id == id.zoneID {
                    zone = lastZone.zone
                } else if !zoneCache.isEmpty, let cached = zoneCache[id.zoneID] {
                    zone = cached
                } else {
                    zone = Result { () throws(FogError) in
                        let address = try zones.address(of: id.zoneID, in: context)
                        let info = try fogTry { try zones.zoneInfo(at: address, in: txn) }
                        if info == nil && !address.isDefault {
                            throw FogError(.zoneNotFound, message: "zone \(id.zoneID.zoneName) does not exist")
                        }
                        return info
                    }
                    // The first zone needs no dictionary: `lastZone` holds it.
                    if let lastZone { zoneCache[lastZone.id] = lastZone.zone }
                    if lastZone != nil { zoneCache[id.zoneID] = zone }
                }
                lastZone = (id.zoneID, zone)
                switch zone {
                case .failure(let e):
                    results.append((id, .failure(e)))
                case .success(nil):
                    results.append((id, .failure(unknown(id))))
                case .success(let info?):
                    if table?.zoneID != id.zoneID {
                        table = FieldNameTable(zoneID: id.zoneID, assetDirectory: assetDirectory, selection: selection)
                    }
                    let record = try records.rowID(zone: info.id, name: id.recordName, in: txn).flatMap { row in
                        try records.withRecord(row, in: txn) { buffer in
                            try RecordView(buffer, checking: selection).makeRecord(id: id, table: table!, arena: &arena, names: &names)
                        }
                    }
                    results.append((id, record.map { .success($0) } ?? .failure(unknown(id))))
                }
            }
            return results
        }
    }

    private func unknown(_ id: Record.ID) -> FogError {
        FogError(.unknownItem, message: "record \(id.recordName) does not exist in zone \(id.zoneID.zoneName)")
    }
}
