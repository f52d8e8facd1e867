import FogStorage
import Foundation

extension Engine {
    /// Brings a store of an older format version up to ``Layout/formatVersion``, in one
    /// write transaction, so that a crash leaves either the old or the new version.
    ///
    /// Version 1 → 2: the `changes` log gains an entry per record, at its last change, and
    /// `dbchanges` one per zone, at its creation (version 1 kept both empty). Version 1 had no
    /// index definitions, so `indexes` owes no entries.
    func migrate(from version: Int64) throws {
        try writeAndWait { [self] txn, names in
            let current = try txn.withValue(forKey: Layout.metaFormat, in: meta) { try readBigEndianKey($0) } ?? version
            guard current < 2 else { return }
            var rows: [(row: Int64, record: StoredRecord)] = []
            var resolver = names.resolver
            try txn.scan(records) { key, value in
                rows.append((try readBigEndianKey(key), try RecordCodec.decode(value, names: &resolver, desiredKeys: [])))
                return true
            }
            for (row, record) in rows {
                try updateIndexEntries(old: nil, new: record, row: row, zone: record.zone, txn: txn, names: &resolver)
                try logSave(zone: record.zone, row: row, name: record.recordName, previousSequence: nil, sequence: record.changeSequence, txn: txn)
            }
            var zoneEntries: [(ZoneAddress, ZoneInfo)] = []
            try txn.scan(zones) { key, value in
                var reader = KeyReader(key)
                let address = ZoneAddress(scope: Int(try reader.readInt64()), owner: try reader.readString(), zoneName: try reader.readString())
                zoneEntries.append((address, try ZoneInfo.decode(value)))
                return true
            }
            for (address, info) in zoneEntries {
                try logZone(.changed, address: address, zone: info.id, sequence: info.createdSequence, txn: txn)
            }
            try txn.put(bigEndianKey(Layout.formatVersion), forKey: Layout.metaFormat, in: meta)
        }
    }
}

extension Engine {
    /// Copies the store to `destination` and gives the copy a new incarnation.
    func backup(to destination: URL) throws {
        if FileManager.default.fileExists(atPath: destination.appendingPathComponent("data.mdb").path) {
            throw FogError(.invalidArguments, message: "\(destination.path) already holds a store")
        }
        try environment.copy(to: destination)
        let assets = destination.appendingPathComponent("assets", isDirectory: true)
        try FileManager.default.createDirectory(at: assets, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: assetDirectory.path) {
            try FileManager.default.copyItem(at: assetDirectory.appendingPathComponent(name), to: assets.appendingPathComponent(name))
        }
        let copy = try Environment.open(directory: destination, configuration: .init(tables: Layout.allTables, durability: .durable, createsMissingTables: false))
        defer { copy.close() }
        let incarnation = Self.newIncarnation()
        let meta = copy.table(named: Layout.meta)
        try copy.writeAndWait { txn in try txn.put(incarnation, forKey: Layout.metaIncarnation, in: meta) }
    }
}

extension Engine {
    /// 16 random bytes that name one copy of a store.
    static func newIncarnation() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
