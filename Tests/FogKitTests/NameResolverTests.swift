import FogKitTesting
import Testing

@testable import FogKit

/// `NameResolver.id` compares the last names it found before it hashes: whatever the order
/// and however many names a transaction looks up, each gets the id the store holds.
@Suite struct NameResolverTests {
    @Test func idsStayRightWhileTheRecentNamesAreReplacedInTurn() async throws {
        let store = try TestStore()
        let core = store.privateDatabase.engine.core
        // More names than the resolver keeps, some of one length, one a prefix of another.
        let names = (0..<20).map { "field\($0)" } + ["a", "ab", "abc", "a-name-longer-than-fifteen-bytes"]
        let interned = try await core.write { _, writer in try names.map { try writer.intern($0) } }
        #expect(Set(interned).count == names.count)
        var random = SplitMix64(seed: 0x1D5)
        // Positions in `names`; one past the end is a name never interned.
        let picks = (0..<400).map { _ in Int(random.next() % UInt64(names.count + 1)) }
        let name: @Sendable (Int) -> String = { i in i == names.count ? "never-interned" : names[i] }
        // A write transaction and a read transaction, each with a fresh resolver.
        let fromWrite = try await core.write { _, writer in try picks.map { try writer.resolver.id(name($0)) } }
        let fromRead = try core.read { _, resolver in try picks.map { try resolver.id(name($0)) } }
        for (k, i) in picks.enumerated() {
            let expected = i == names.count ? nil : interned[i]
            #expect(fromWrite[k] == expected, "write transaction, \(name(i))")
            #expect(fromRead[k] == expected, "read transaction, \(name(i))")
        }
    }
}
