import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// A query that sorts its candidates in memory makes each one's order key from the stored
/// payloads (`OrderKey.key(row:payload:)`); the key must be byte for byte the one made from
/// the decoded values (`OrderKey.key(row:value:)`), which cursors and the merge of zones use.
@Suite struct OrderKeyTests {
    /// Scalars at their edges (signed zeros, NaN, infinities, the extreme integers), strings
    /// short and long (past the index's kept prefix), lists, locations, and payloads of the
    /// wrong size for their type.
    static func sortValue(_ rng: inout SplitMix64) -> (type: FieldType, bytes: [UInt8])? {
        let doubles: [Double] = [0, -0.0, .nan, -Double.nan, .infinity, -.infinity, 1e-300, -1, 3.5, .greatestFiniteMagnitude]
        let value: FieldValue
        switch rng.int(0...9) {
        case 0: return nil
        case 1: value = .int64(rng.pick([0, 1, -1, .min, .max, Int64.random(in: .min ... .max, using: &rng)]))
        case 2: value = .double(rng.pick(doubles + [Double(rng.int(-1000...1000)) / 7]))
        case 3: value = .date(Date(timeIntervalSinceReferenceDate: rng.pick(doubles + [Double(rng.int(-1000...1000)) * 86_400])))
        case 4: value = .string(RandomFieldValues.string(&rng, maxLength: rng.int(0...1) == 0 ? 8 : 600))
        case 5: value = .location(Location(latitude: Double(rng.int(-80...80)), longitude: Double(rng.int(-170...170))))
        case 6:
            // A scalar type with a payload of another size: decoded as missing on both paths.
            return (rng.pick([FieldType.int64, .double, .timestamp]), (0..<rng.pick([0, 4, 7, 9])).map { UInt8($0) })
        default: value = RandomFieldValues.value(&rng, scale: 8)
        }
        return (value.fieldType, RandomFieldValues.payload(value))
    }

    @Test func theKeyFromStoredPayloadsIsTheKeyFromDecodedValues() {
        var rng = SplitMix64(seed: 0x0DE7_5EED)
        for _ in 0..<3_000 {
            let count = rng.int(1...3)
            let order = (0..<count).map { _ in
                rng.int(0...4) == 0
                    ? Query.SortDescriptor(key: "place", relativeLocation: Location(latitude: 10, longitude: 20))
                    : Query.SortDescriptor(key: "field", ascending: rng.int(0...1) == 0)
            }
            let values = (0..<count).map { _ in Self.sortValue(&rng) }
            let row = rng.pick([0, 1, 77, Int64.max, Int64(rng.int(0...1_000_000))])
            let orderKey = OrderKey(order: order)
            let decoded = orderKey.key(row: row) { i in
                values[i].flatMap { v in v.bytes.withUnsafeBytes { RecordCodec.decodeChecked($0, type: v.type) } }
            }
            // The payloads side by side in one buffer, as a record's are.
            var offsets: [Int] = []
            var joined: [UInt8] = []
            for v in values {
                offsets.append(joined.count)
                joined += v?.bytes ?? []
            }
            let stored = joined.withUnsafeBytes { buffer in
                orderKey.key(row: row) { i -> (type: FieldType, bytes: UnsafeRawBufferPointer)? in
                    guard let v = values[i] else { return nil }
                    return (v.type, UnsafeRawBufferPointer(rebasing: buffer[offsets[i]..<offsets[i] + v.bytes.count]))
                }
            }
            #expect(
                stored == decoded,
                "order \(order.map { "\($0.key) \($0.ascending)" }), values \(values.map { $0.map { "\($0.type) \($0.bytes)" } ?? "nil" })")
        }
    }
}
