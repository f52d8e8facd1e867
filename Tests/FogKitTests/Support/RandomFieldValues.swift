import FogKitTesting
import Foundation

@testable import FogKit

/// Random field values of every kind, for the property tests of the record format.
enum RandomFieldValues {
    /// A string of up to `maxLength` characters, with multi-byte characters and NULs.
    static func string(_ rng: inout SplitMix64, maxLength: Int) -> String {
        let pool: [Character] = ["a", "é", "😀", "中", " ", "\u{0}", "z"]
        return String((0..<rng.int(0...maxLength)).map { _ in rng.pick(pool) })
    }

    /// A value of a random kind; strings, bytes and lists grow with `scale`. References
    /// point into the default zone with action `none`.
    static func value(_ rng: inout SplitMix64, scale: Int) -> FieldValue {
        let n = rng.int(0...scale)
        let location = Location(latitude: 1, longitude: 2)
        let reference = Record.Reference(recordID: Record.ID(recordName: "n\(n)"), action: .none)
        switch rng.int(0...13) {
        case 0: return .string(string(&rng, maxLength: scale * 3 / 2))
        case 1: return .int64(Int64.random(in: .min ... .max, using: &rng))
        case 2: return .double(Double(n) / 3)
        case 3: return .bytes(Data((0..<n).map { UInt8(truncatingIfNeeded: $0) }))
        case 4: return .date(Date(timeIntervalSinceReferenceDate: Double(n) * 1000))
        case 5: return .location(location)
        case 6: return .reference(reference)
        case 7: return .stringList((0..<n % 140).map { _ in string(&rng, maxLength: 2 * scale) })
        case 8: return .int64List((0..<n).map { Int64($0) })
        case 9: return .doubleList((0..<n).map { Double($0) })
        case 10: return .bytesList((0..<n % 20).map { Data(count: $0 * 9) })
        case 11: return .dateList((0..<n).map { Date(timeIntervalSinceReferenceDate: Double($0)) })
        case 12: return .locationList((0..<n % 10).map { _ in location })
        default: return .referenceList((0..<n % 30).map { _ in reference })
        }
    }

    /// The payload bytes `RecordCodec` writes for `value`.
    static func payload(_ value: FieldValue) -> [UInt8] {
        var writer = ByteWriter(capacity: 0)
        RecordCodec.encodePayload(value, into: &writer)
        return writer.bytes
    }
}
