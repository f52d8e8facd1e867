import FogStorage
import Foundation

/// The order of query results as bytes: a record's order key compares, byte by byte, as
/// the record's place in the results.
///
/// The key is the tuple encoding of each sort value (a missing value as null; a distance in
/// kilometres, missing as infinity), then of the row id. The encoding of a descending
/// key — and of the row id when the last sort key is descending — is complemented, which
/// reverses the order of prefix-free encodings; a descending key that another key follows
/// also gets an `FF` separator, because a string's encoding with its terminator complemented
/// is a prefix of its continuations'. For one ascending
/// field the key is the value element of the field's index key (after the field's prefix)
/// followed by the row id, which is what lets an index scan resume from a cursor.
struct OrderKey {
    let order: [Query.SortDescriptor]

    var rowDescending: Bool { !(order.last?.ascending ?? true) }

    func key(for record: some PredicateFields, row: Int64) -> [UInt8] {
        key(row: row) { record.value(forKey: order[$0].key) }
    }

    /// The key of the record at `row` whose sort values `value` gives: the value of the
    /// `i`th sort key (`nil` when missing), as ``PredicateFields/value(forKey:)`` reads it.
    @inline(__always)
    func key(row: Int64, value: (Int) -> FieldValue?) -> [UInt8] {
        makeKey(row: row) { index, w in append(value(index), sortKey: index, to: &w) }
    }

    /// The key of the record at `row` whose sort values `payload` gives as stored: the type
    /// and checked payload bytes of the `i`th sort key's field (`nil` when missing).
    ///
    /// The same key as ``key(row:value:)`` with the decoded values: an `INT64`, `DOUBLE` or
    /// `TIMESTAMP` is written from its 8 bytes, without a ``FieldValue`` or an ``IndexValue``
    /// made for it (a query that sorts its candidates in memory makes a key for each);
    /// other types are decoded.
    @inline(__always)
    func key(row: Int64, payload: (Int) -> (type: FieldType, bytes: UnsafeRawBufferPointer)?) -> [UInt8] {
        makeKey(row: row) { index, w in
            let found = payload(index)
            if order[index].relativeLocation == nil, let found, Self.appendScalar(found.type, found.bytes, to: &w) { return }
            append(found.flatMap { RecordCodec.decodeChecked($0.bytes, type: $0.type) }, sortKey: index, to: &w)
        }
    }

    /// Writes the elements of the sort keys with `element` (the `i`th key's value, ascending),
    /// complementing the descending ones, then the row.
    @inline(__always)
    private func makeKey(row: Int64, element: (Int, inout KeyWriter) -> Void) -> [UInt8] {
        // One writer for the whole key; descending elements are complemented in place.
        var w = KeyWriter(capacity: 32)
        for index in order.indices {
            let start = w.bytes.count
            element(index, &w)
            if !order[index].ascending {
                w.complement(from: start)
                // A complemented string is a byte prefix of the complement of its continuations
                // (`"a"` and `"a\0"`); `FF FF` occurs nowhere else, so it ends the element before
                // the next sort key's. (The last key needs none: the row id's complement cannot
                // start with 00.)
                if index < order.count - 1 { w.appendRawByte(0xFF) }
            }
        }
        let start = w.bytes.count
        w.append(row)
        if rowDescending { w.complement(from: start) }
        return w.bytes
    }

    /// Appends the element of the `index`th sort key for `value` (ascending).
    @inline(__always)
    private func append(_ value: FieldValue?, sortKey index: Int, to w: inout KeyWriter) {
        if let center = order[index].relativeLocation {
            if case .location(let l)? = value {
                w.append(GeoGrid.distance(l, center))
            } else {
                w.append(Double.infinity)
            }
        } else {
            (value.flatMap(IndexValue.init) ?? .null).appendOrdered(to: &w)
        }
    }

    /// Appends the element of a stored `INT64`, `DOUBLE` or `TIMESTAMP` of 8 bytes as
    /// ``IndexValue/appendOrdered(to:)`` does for its decoded value (zeros without a sign);
    /// false, with nothing written, for other payloads.
    @inline(__always)
    private static func appendScalar(_ type: FieldType, _ bytes: UnsafeRawBufferPointer, to w: inout KeyWriter) -> Bool {
        guard bytes.count == 8 else { return false }
        let bits = UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self))
        switch type {
        case .int64: w.append(Int64(bitPattern: bits))
        case .double:
            let d = Double(bitPattern: bits)
            w.append(d == 0 ? 0.0 : d)
        case .timestamp:
            let d = Double(bitPattern: bits)
            w.append(Date(timeIntervalSinceReferenceDate: d == 0 ? 0.0 : d))
        default: return false
        }
        return true
    }

    static func complement(_ bytes: [UInt8]) -> [UInt8] { bytes.map { ~$0 } }
}

extension OrderKey {
    /// The row of a position in row order (no sort key): the tuple (row).
    static func row(ofPosition position: [UInt8]) throws(FogError) -> Int64 {
        var reader = KeyReader(position)
        guard let row = try? reader.readInt64(), reader.isAtEnd else {
            throw FogError(.invalidArguments, message: "the query cursor is corrupt: its position is not a row")
        }
        return row
    }

    /// The value element and the row of a position of one ascending sort key: the tuple
    /// (value, row). The value's bytes are as the field's index keys hold them.
    static func valueAndRow(ofPosition position: [UInt8]) throws(FogError) -> (value: [UInt8], row: Int64) {
        var reader = KeyReader(position)
        guard (try? reader.skipElement()) != nil else {
            throw FogError(.invalidArguments, message: "the query cursor is corrupt: its position holds no value")
        }
        let end = reader.offset
        guard let row = try? reader.readInt64(), reader.isAtEnd else {
            throw FogError(.invalidArguments, message: "the query cursor is corrupt: its position does not end with a row")
        }
        return (Array(position[..<end]), row)
    }
}
