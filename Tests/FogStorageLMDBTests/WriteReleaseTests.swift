import FogStorage
import FogStorageLMDB
import Foundation
import Testing

/// What a write's body captured is let go before its requester resumes: otherwise the writer
/// thread, which still holds the finished request for a moment, could drop the last
/// reference to something the requester dropped (a container, a store), and a store closed by
/// that release would be closed from inside a write.
@Suite struct WriteReleaseTests {
    final class Probe: Sendable {}

    @Test func aWaitedWritesBodyIsGoneWhenTheCallReturns() throws {
        try withTestEnvironment { store, a, _ in
            for i in 0..<200 {
                var probe: Probe? = Probe()
                weak let watched = probe
                try store.writeAndWait { [probe] txn in
                    _ = probe
                    try txn.put([UInt8(i & 0xFF)], forKey: [1], in: a)
                }
                probe = nil
                #expect(watched == nil, "write \(i): the writer still holds its body")
            }
        }
    }

    @Test func anAwaitedWritesBodyAndResultAreGoneWhenItReturns() async throws {
        try await withTestEnvironment { store, a, _ in
            for i in 0..<200 {
                var probe: Probe? = Probe()
                weak let watched = probe
                var result: Probe? = try await store.write { [probe] txn in
                    try txn.put([UInt8(i & 0xFF)], forKey: [1], in: a)
                    return probe
                }
                probe = nil
                #expect(watched != nil)
                result = nil
                #expect(watched == nil, "write \(i): the writer still holds its body or its result")
                _ = result
            }
        }
    }
}
