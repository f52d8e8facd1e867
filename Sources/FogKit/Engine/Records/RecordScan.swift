import FogStorage

extension Engine {
    /// Visits the records of one record type in one zone, in row order, starting after
    /// `afterRow`: a sequential read of `records` that skips other types and zones by their
    /// header. `body` gets the row and the encoded record (valid during the call) and
    /// returns `false` to stop.
    ///
    /// This is how whole-type queries and index rebuilds find a type's records: the table
    /// is read in key order, with no index entry per record to keep up.
    func scanRecords(
        zone: Int64?, type: Int64, after afterRow: Int64? = nil, txn: Store.ReadTransaction,
        _ body: (Int64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var range = ScanRange.all
        if let afterRow { (range.lower, range.lowerInclusive) = (bigEndianKey(afterRow), false) }
        try txn.scan(records, range: range) { key, value in
            let header = try RecordCodec.typeAndZone(value)
            guard header.type == type, zone == nil || header.zone == zone else { return true }
            return try body(try readBigEndianKey(key), value)
        }
    }

    /// Calls `body` with the encoded record at `row` (valid during the call); `nil` when
    /// there is none. The key is built on the stack.
    @inline(__always)
    func withRecord<R>(_ row: Int64, in txn: Store.ReadTransaction, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try withUnsafeBytes(of: row.bigEndian) { try txn.withValue(forKey: $0, in: records, body) }
    }
}
