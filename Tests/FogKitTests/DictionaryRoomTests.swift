import Testing

@testable import FogKit

/// `Dictionary(room:)` gives an empty dictionary with at least the room asked for, as
/// `reserveCapacity` would, so that filling it to that size never grows it.
@Suite struct DictionaryRoomTests {
    @Test func anEmptyDictionaryWithTheRoomAskedFor() {
        for room in [0, 1, 2, 7, 8, 9, 100] {
            var made = [String: FieldValue](room: room)
            #expect(made.isEmpty)
            #expect(made.capacity >= room, "room \(room)")
            let capacity = made.capacity
            for i in 0..<room { made["k\(i)"] = .int64(Int64(i)) }
            #expect(made.capacity == capacity, "room \(room): grew while filled to it")
            #expect(made.count == room)
            #expect(made["k0"] == (room > 0 ? .int64(0) : nil))
        }
    }
}
