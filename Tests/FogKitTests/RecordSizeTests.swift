@testable import FogKit
import Foundation
import Testing

/// The record size limit is computed from values without encoding them; the computation
/// must equal the encoded size for every kind of value.
@Suite struct RecordSizeTests {
    private static func string(_ rng: inout SplitMix64) -> String {
        let pool: [Character] = ["a", "é", "😀", "中", " ", "\u{0}", "z"]
        return String((0..<Int.random(in: 0...300, using: &rng)).map { _ in pool.randomElement(using: &rng)! })
    }

    private static func value(_ rng: inout SplitMix64) -> FieldValue {
        let n = Int.random(in: 0...200, using: &rng)
        let location = Location(latitude: 1, longitude: 2)
        let reference = Record.Reference(recordID: Record.ID(recordName: string(&rng).isEmpty ? "x" : "n\(n)"), action: .none)
        switch Int.random(in: 0..<14, using: &rng) {
        case 0: return .string(string(&rng))
        case 1: return .int64(Int64.random(in: .min ... .max, using: &rng))
        case 2: return .double(Double(n))
        case 3: return .bytes(Data((0..<n).map { UInt8(truncatingIfNeeded: $0) }))
        case 4: return .date(Date())
        case 5: return .location(location)
        case 6: return .reference(reference)
        case 7: return .stringList((0..<n % 140).map { _ in string(&rng) })
        case 8: return .int64List((0..<n).map { Int64($0) })
        case 9: return .doubleList((0..<n).map { Double($0) })
        case 10: return .bytesList((0..<n % 20).map { Data(count: $0 * 9) })
        case 11: return .dateList((0..<n).map { _ in Date() })
        case 12: return .locationList((0..<n % 10).map { _ in location })
        default: return .referenceList((0..<n % 30).map { _ in reference })
        }
    }

    @Test func theComputedSizeIsTheEncodedSize() {
        var rng = SplitMix64(seed: 11)
        for _ in 0..<3_000 {
            let value = Self.value(&rng)
            var writer = ByteWriter(capacity: 0)
            RecordCodec.encodePayload(value, into: &writer)
            #expect(RecordCodec.payloadSize(of: value) == writer.bytes.count, "\(value.fieldType)")
        }
        for n in [0, 1, 127, 128, 16_383, 16_384, 1 << 21, 1 << 28, Int.max] {
            var writer = ByteWriter(capacity: 0)
            writer.varint(n)
            #expect(RecordCodec.varintSize(n) == writer.bytes.count)
        }
    }
}
