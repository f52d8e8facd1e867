import FogStorage

extension Maintenance {
    /// Checks the change logs against the records and zones (part of ``checkIntegrity()``):
    /// every live record has exactly one log entry at its change sequence, and its other
    /// entries are earlier (stale); each zone's compaction state counts its stale entries;
    /// every tombstone is of a record that is gone and has its name and age entries; every
    /// zone has its database log entry, and logged zones that still exist are logged as
    /// changed.
    func checkChangeLogs(
        live: [Int64: (zone: Int64, sequence: Int64)], zones: Set<Int64>, txn: Store.ReadTransaction, report: inout IntegrityReport
    ) throws {
        func problem(_ text: String) { report.problems.append(text) }
        var logged: Set<Int64> = []
        var tombstones: Set<[Int64]> = []
        var tombstoneNames: [(zone: Int64, name: String, sequence: Int64, row: Int64)] = []
        var ages: [[Int64]] = []
        var names: [(zone: Int64, name: String, position: [UInt8])] = []
        // Each zone's stale entries, as found and as its compaction state counts them.
        var staleFound: [Int64: Int64] = [:]
        var staleCounted: [Int64: Int64] = [:]
        try txn.scan(changeTable) { key, value in
            report.indexEntryCount += 1
            var reader = KeyReader(key)
            let zone = try reader.readInt64()
            if !zones.contains(zone) { problem("change log entries of zone id \(zone), which does not exist") }
            switch try reader.readInt64() {
            case Layout.logPart:
                let sequence = try reader.readInt64()
                let row = try reader.readInt64()
                var r = ByteReader(value)
                switch try r.u8() {
                case Layout.changedEntry:
                    if let record = live[row], record.zone == zone, record.sequence == sequence {
                        if !logged.insert(row).inserted { problem("row \(row) is logged twice") }
                    } else if let record = live[row], record.zone != zone || record.sequence < sequence {
                        problem("change log entry (\(zone), \(sequence), \(row)) is not a change of a record of the zone")
                    } else {
                        // Stale: an earlier change of a record that changed again, or is gone.
                        staleFound[zone, default: 0] += 1
                    }
                case Layout.deletedEntry:
                    _ = try r.int64()
                    let name = try r.rawString(count: value.count - r.offset)
                    if live[row] != nil { problem("tombstone of row \(row) (\(name)), which still exists") }
                    tombstones.insert([zone, sequence, row])
                    tombstoneNames.append((zone, name, sequence, row))
                case let kind:
                    problem("change log entry of kind \(kind)")
                }
            case Layout.tombstonePart:
                names.append((zone, try reader.readString(), Array(value)))
            case Layout.tombstoneAgePart:
                ages.append([zone, try reader.readInt64(), try reader.readInt64()])
            case Layout.compactionPart:
                do {
                    staleCounted[zone] = try LogCompaction(decoding: value).stale
                } catch {
                    problem("zone id \(zone)'s change log compaction state is damaged")
                }
            default:
                break
            }
            return true
        }
        for zone in Set(staleFound.keys).union(staleCounted.keys) where (staleFound[zone] ?? 0) != (staleCounted[zone] ?? 0) {
            problem(
                "zone id \(zone)'s change log holds \(staleFound[zone] ?? 0) stale entries; its compaction state counts \(staleCounted[zone] ?? 0)"
            )
        }
        for (row, record) in live where !logged.contains(row) {
            problem("row \(row) has no change log entry at its change sequence \(record.sequence)")
        }
        // Sets, so that the check stays linear in the tombstones (a cascade can leave many).
        func nameEntry(_ zone: Int64, _ name: String, _ position: [UInt8]) -> String { "\(zone) \(position) \(name)" }
        let nameEntries = Set(names.map { nameEntry($0.zone, $0.name, $0.position) })
        let ageEntries = Set(ages)
        for t in tombstoneNames {
            let position = Layout.position(sequence: t.sequence, row: t.row)
            if !nameEntries.contains(nameEntry(t.zone, t.name, position)) {
                problem("tombstone of \(t.name) has no name entry")
            }
            if !ageEntries.contains([t.zone, t.sequence, t.row]) { problem("tombstone of \(t.name) has no age entry") }
        }
        for age in ages where !tombstones.contains(age) { problem("tombstone age entry \(age) has no tombstone") }
        if names.count != tombstoneNames.count { problem("\(names.count) tombstone name entries for \(tombstoneNames.count) tombstones") }

        // The database logs: one entry per zone, changed for the zones that exist.
        // A zone deletion's age entry, where there is one, is at the position of a deletion
        // or purge event of the same zone name.
        var lastByZone: [Int64: ZoneChangeKind] = [:]
        var deletionEvents: Set<[UInt8]> = []
        var deletionAges: [[UInt8]] = []
        try txn.scan(databaseChangeTable) { key, value in
            report.indexEntryCount += 1
            var reader = KeyReader(key)
            let scope = try reader.readInt64()
            let owner = try reader.readString()
            let part = try reader.readInt64()
            if part == Layout.tombstoneAgePart {
                let position = reader.offset
                _ = try reader.readInt64()
                _ = try reader.readInt64()
                deletionAges.append(
                    Layout.databaseKey(scope: Int(scope), owner: owner, part: Layout.logPart) + Array(key[position..<reader.offset])
                        + Array(value.dropFirst(8)))
                return true
            }
            guard part == Layout.logPart else { return true }
            _ = try reader.readInt64()
            let zone = try reader.readInt64()
            guard let first = value.first, let kind = ZoneChangeKind(rawValue: first) else {
                problem("database change entry of zone id \(zone) has no kind")
                return true
            }
            if kind != .changed { deletionEvents.insert(Array(key) + Array(value.dropFirst())) }
            if lastByZone.updateValue(kind, forKey: zone) != nil { problem("zone id \(zone) is logged twice") }
            return true
        }
        for age in deletionAges where !deletionEvents.contains(age) {
            problem("a zone deletion age entry has no deletion event at its position")
        }
        for zone in zones {
            switch lastByZone[zone] {
            case .changed?: break
            case nil: problem("zone id \(zone) has no database change entry")
            case let kind?: problem("zone id \(zone) exists but is logged as \(kind)")
            }
        }
    }
}
