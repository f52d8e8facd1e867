import FogStorage

extension Engine {
    /// Brings a store of an older format version up to ``Layout/formatVersion``, in one
    /// write transaction, so that a crash leaves either the old or the new version.
    ///
    /// Version 1 → 2: the `indexes` table gains a "record exists" entry per record
    /// (version 1 kept it empty, and had no index definitions).
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
            }
            try txn.put(bigEndianKey(Layout.formatVersion), forKey: Layout.metaFormat, in: meta)
        }
    }
}
