import FogKitTesting
import Foundation
import Testing

@testable import FogKit

/// The record size limit is computed from values without encoding them; the computation
/// must equal the encoded size for every kind of value.
@Suite struct RecordSizeTests {
    @Test func theComputedSizeIsTheEncodedSize() {
        var rng = SplitMix64(seed: 11)
        for _ in 0..<3_000 {
            let value = RandomFieldValues.value(&rng, scale: 200)
            #expect(RecordCodec.payloadSize(of: value) == RandomFieldValues.payload(value).count, "\(value.fieldType)")
        }
        for n in [0, 1, 127, 128, 16_383, 16_384, 1 << 21, 1 << 28, Int.max] {
            var writer = ByteWriter(capacity: 0)
            writer.varint(n)
            #expect(RecordCodec.varintSize(n) == writer.bytes.count)
        }
    }
}
