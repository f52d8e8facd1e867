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
/// field the key equals the suffix of the field's index entries after the field's prefix,
/// which is what lets an index scan resume from a cursor.
struct OrderKey {
    let order: [Query.SortDescriptor]

    var rowDescending: Bool { !(order.last?.ascending ?? true) }

    func key(for record: some PredicateFields, row: Int64) -> [UInt8] {
        // One writer for the whole key; descending elements are complemented in place.
        var w = KeyWriter(capacity: 32)
        for (index, sort) in order.enumerated() {
            let start = w.bytes.count
            if let center = sort.relativeLocation {
                if case .location(let l)? = record.value(forKey: sort.key) {
                    w.append(GeoGrid.distance(l, center))
                } else {
                    w.append(Double.infinity)
                }
            } else {
                (record.value(forKey: sort.key).flatMap(IndexValue.init) ?? .null).append(to: &w)
            }
            if !sort.ascending {
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

    static func complement(_ bytes: [UInt8]) -> [UInt8] { bytes.map { ~$0 } }
}
