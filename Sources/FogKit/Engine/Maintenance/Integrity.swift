import FogStorage
import Foundation

extension Maintenance {
    /// Checks that every index entry points at a record and every record has its
    /// index entries: record names ↔ rows, zones ↔ zone ids, deleteSelf references,
    /// interned names and field types, asset reference counts and files, query indexes, and
    /// the change logs. Reads one
    /// snapshot; changes nothing.
    func checkIntegrity() throws -> IntegrityReport {
        try read { txn, names in
            var report = IntegrityReport()
            func problem(_ text: String) { report.problems.append(text) }

            // Zones and their reverse index.
            var zoneIDsSeen: Set<Int64> = []
            try txn.scan(zones) { key, value in
                report.zoneCount += 1
                let info = try ZoneInfo.decode(value)
                if !zoneIDsSeen.insert(info.id).inserted { problem("zone id \(info.id) is used twice") }
                let reverse = try txn.value(forKey: bigEndianKey(info.id), in: zoneIDs)
                if reverse != Array(key) { problem("zone id \(info.id) has no matching zoneids entry") }
                return true
            }
            try txn.scan(zoneIDs) { key, value in
                report.indexEntryCount += 1
                let id = try readBigEndianKey(key)
                if !zoneIDsSeen.contains(id) { problem("zoneids entry \(id) points at no zone") }
                if try txn.value(forKey: Array(value), in: zones) == nil { problem("zoneids entry \(id) names a missing zone") }
                return true
            }

            // Record names → rows.
            var rowsByName: [Int64: (zone: Int64, name: String)] = [:]
            try txn.scan(recordNames) { key, value in
                report.indexEntryCount += 1
                var reader = KeyReader(Array(key))
                let zone = try reader.readInt64()
                let name = try reader.readString()
                let row = try readBigEndianKey(value)
                if !zoneIDsSeen.contains(zone) { problem("record \(name) is in zone id \(zone), which does not exist") }
                if let other = rowsByName[row] { problem("row \(row) is named both \(other.name) and \(name)") }
                rowsByName[row] = (zone, name)
                return true
            }

            // Rows: decodable, named, consistent with their name entry and the schema.
            var rowsSeen: Set<Int64> = []
            var liveRows: [Int64: (zone: Int64, sequence: Int64)] = [:]
            // Each index entry as its key followed by its value (the row, 8 bytes).
            var expectedIndexEntries: Set<[UInt8]> = []
            // Entries an index still being built may hold or lack: those of its records after
            // the build's progress (a save during the build writes them).
            var optionalIndexEntries: Set<[UInt8]> = []
            // The references of each stored asset name, counted from the records.
            var assetReferences: [String: Int64] = [:]
            let catalog = try indexStore.allDefinitions(txn: txn, names: &names)
            var buildProgress: [String: [String: Int64]] = [:]
            for (type, indexes) in catalog where !indexes.building.isEmpty {
                buildProgress[type] = try indexStore.buildProgress(of: type, indexes: indexes, txn: txn, names: &names)
            }
            // Entries an index being dropped may still hold: every key under its (zone, type,
            // field) prefixes until the drop completes.
            var droppedPrefixes: [[UInt8]] = []
            for marker in try indexStore.dropMarkers(type: nil, txn: txn) {
                for zone in zoneIDsSeen.sorted() {
                    droppedPrefixes.append(Layout.indexFieldPrefix(zone: zone, type: marker.type, field: marker.field))
                }
            }
            try txn.scan(records) { key, value in
                report.recordCount += 1
                let row = try readBigEndianKey(key)
                rowsSeen.insert(row)
                let stored: StoredRecord
                do { stored = try RecordCodec.decode(value, names: &names) } catch {
                    problem("row \(row) cannot be decoded: \(error)")
                    return true
                }
                liveRows[row] = (stored.zone, stored.changeSequence)
                for name in AssetNames.of(stored.values.values) { assetReferences[name, default: 0] += 1 }
                guard let entry = rowsByName[row] else {
                    problem("row \(row) (\(stored.recordName)) has no record name entry")
                    return true
                }
                if entry.name != stored.recordName || entry.zone != stored.zone {
                    problem("row \(row) holds \(stored.recordName) in zone \(stored.zone) but is named \(entry.name) in zone \(entry.zone)")
                }
                for target in stored.values.deleteSelfTargets {
                    if try !txn.contains(Layout.refKey(zone: stored.zone, target: target, source: row), in: refs) {
                        problem("record \(stored.recordName) references \(target) with deleteSelf but has no reference entry")
                    }
                }
                if let typeID = try names.id(stored.recordType) {
                    let rowBytes = bigEndianKey(row)
                    let indexes = catalog[stored.recordType] ?? .none
                    var required = indexes
                    if let progress = buildProgress[stored.recordType] {
                        // A building index owes the entries of the records up to its progress.
                        required = indexes.ready
                        for (field, done) in progress where done >= row { required.fields[field] = indexes.fields[field] }
                    }
                    let requiredKeys = try IndexEntries.keys(
                        of: stored, zone: stored.zone, type: typeID, indexes: required, fieldID: { try names.id($0) })
                    for key in requiredKeys { expectedIndexEntries.insert(key + rowBytes) }
                    if required != indexes {
                        for key in try IndexEntries.keys(
                            of: stored, zone: stored.zone, type: typeID, indexes: indexes, fieldID: { try names.id($0) })
                        where !requiredKeys.contains(key) {
                            optionalIndexEntries.insert(key + rowBytes)
                        }
                    }
                    for (key, value) in stored.values {
                        guard let fieldID = try names.id(key) else {
                            problem("field \(key) of \(stored.recordName) has no interned name")
                            continue
                        }
                        let fixed = try names.fieldType(type: typeID, field: fieldID)
                        // A field an import removed keeps its type for the values records hold.
                        let retired = try fixed == nil ? self.catalog.declaration(type: typeID, field: fieldID, txn: txn) : nil
                        if Record.isEncryptedKey(key) {
                            // An encrypted field holds the sealed box as bytes; its declared type
                            // is that of the value sealed in it.
                            if value.fieldType != .bytes || (fixed == nil && retired?.isRetired != true) {
                                problem(
                                    "encrypted field \(key) of \(stored.recordName) holds \(value.fieldType.name), the schema says \(fixed?.name ?? "nothing")"
                                )
                            }
                            continue
                        }
                        if fixed != value.fieldType, retired.map({ $0.isRetired && $0.type == value.fieldType }) != true {
                            problem(
                                "field \(key) of \(stored.recordName) holds \(value.fieldType.name), the schema says \(fixed?.name ?? "nothing")"
                            )
                        }
                    }
                } else {
                    problem("record type \(stored.recordType) of \(stored.recordName) has no interned name")
                }
                return true
            }
            for (row, entry) in rowsByName where !rowsSeen.contains(row) {
                problem("record name \(entry.name) points at missing row \(row)")
            }

            // Asset counts: exactly the references the records hold, each to an existing file.
            let assets = recordStore.assets
            try txn.scan(assets.table) { key, value in
                let name = String(decoding: key, as: UTF8.self)
                let count = try readBigEndianKey(value)
                if count != assetReferences[name] {
                    problem("asset \(name) is counted \(count) times, referenced \(assetReferences[name] ?? 0)")
                }
                assetReferences[name] = nil
                if !assets.hasFile(name) { problem("asset \(name) is referenced but its file is missing") }
                return true
            }
            for (name, count) in assetReferences { problem("asset \(name) is referenced \(count) times but has no count") }

            // Query indexes: exactly the entries the records and the declared indexes call for,
            // each a row under a key, in a table whose keys hold sorted sets of 8-byte values.
            let indexLayout = try txn.layout(of: indexTable)
            if indexLayout != Layout.indexTableLayout {
                problem("the indexes table has the layout \(indexLayout), not \(Layout.indexTableLayout)")
            }
            var indexEntriesSeen = 0
            try txn.scan(indexTable) { key, value in
                report.indexEntryCount += 1
                let hex = Array(key).map { String($0, radix: 16) }.joined(separator: " ")
                guard value.count == 8 else {
                    problem("index entry \(hex) holds a row of \(value.count) bytes")
                    return true
                }
                let entry = Array(key) + Array(value)
                if expectedIndexEntries.contains(entry) {
                    indexEntriesSeen += 1
                } else if !optionalIndexEntries.contains(entry), !droppedPrefixes.contains(where: { entry.starts(with: $0) }) {
                    problem("index entry \(hex) for row \(try readBigEndianKey(value)) belongs to no record")
                }
                return true
            }
            if indexEntriesSeen != expectedIndexEntries.count {
                problem("\(expectedIndexEntries.count - indexEntriesSeen) index entries that records call for are missing")
            }

            // deleteSelf references: each entry's source row exists and references the target.
            try txn.scan(refs) { key, _ in
                report.indexEntryCount += 1
                var reader = KeyReader(Array(key))
                let zone = try reader.readInt64()
                let target = try reader.readString()
                let source = try reader.readInt64()
                guard let entry = rowsByName[source], rowsSeen.contains(source) else {
                    problem("reference entry to \(target) comes from missing row \(source)")
                    return true
                }
                if entry.zone != zone { problem("reference entry to \(target) is in zone \(zone), its source in \(entry.zone)") }
                if let stored = try txn.withValue(
                    forKey: bigEndianKey(source), in: records, { try? RecordCodec.decode($0, names: &names) }),
                    let source = stored, !source.values.deleteSelfTargets.contains(target)
                {
                    problem("reference entry says \(source.recordName) references \(target) with deleteSelf, but it does not")
                }
                return true
            }

            // Interned names: both directions agree.
            try txn.scan(schema) { key, value in
                report.indexEntryCount += 1
                var reader = KeyReader(Array(key))
                switch try reader.readString() {
                case "n":
                    let name = try reader.readString()
                    let id = try readBigEndianKey(value)
                    let back = try txn.value(forKey: Layout.idToNameKey(id), in: schema)
                    if back != Array(name.utf8) { problem("name \(name) → id \(id) has no matching reverse entry") }
                case "i":
                    let id = try reader.readInt64()
                    let name = String(decoding: value, as: UTF8.self)
                    let back = try txn.value(forKey: Layout.nameToIDKey(name), in: schema)
                    if back != bigEndianKey(id) { problem("id \(id) → name \(name) has no matching entry") }
                default:
                    break
                }
                return true
            }
            try checkChangeLogs(live: liveRows, zones: zoneIDsSeen, txn: txn, report: &report)
            return report
        }
    }
}
