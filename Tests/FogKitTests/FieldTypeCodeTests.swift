import Testing

@testable import FogKit

/// `FieldType.decoded(_:)`, the record reader's decoding of a stored type code, gives what
/// `FieldType(rawValue:)` gives for every byte: the 16 types' codes and nothing else.
@Suite struct FieldTypeCodeTests {
    @Test func everyCodeDecodesAsTheRawValueInitializerDoes() {
        var decodedTypes: [FieldType] = []
        for code in UInt8.min...UInt8.max {
            let expected = FieldType(rawValue: code)
            let decoded = FieldType.decoded(code)
            #expect(decoded == expected, "code \(code)")
            #expect(decoded?.rawValue == expected?.rawValue, "code \(code)")
            if let decoded { decodedTypes.append(decoded) }
        }
        #expect(decodedTypes == FieldType.allCases)
    }
}
