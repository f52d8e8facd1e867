import FogStorage
import FogStoragePostgres
import Foundation
import Testing

/// Puts wait in the transaction and go together before its next statement or its commit:
/// what the caller sees must be as if each had been sent at once.
@Suite(.enabled(if: TestServer.enabled)) struct PendingWritesTests {
    static let configuration = StoreConfiguration(
        tables: ["a", "b", "pairs"], layouts: ["pairs": .multiValue(fixedSizeValues: false)], durability: .none)

    /// Many puts of one key in one transaction: the last wins; reads, deletes and range
    /// deletes between puts see and apply to everything put before them, in order.
    @Test func putsApplyInOrderAroundOtherCalls() throws {
        try TestServer.withLocation { location throws in
            let store = try PostgresStore.open(at: location, configuration: Self.configuration)
            defer { store.close() }
            let a = store.table(named: "a"), b = store.table(named: "b")
            try store.writeAndWait { txn throws in
                for i: UInt8 in 0..<50 { try txn.put([i], forKey: [1], in: a) }
                try txn.put([7], forKey: [2], in: b)
                #expect(try txn.value(forKey: [1], in: a) == [49])
                try txn.put([9], forKey: [3], in: a)
                #expect(try txn.delete([3], in: a))
                try txn.put([10], forKey: [4], in: a)
                try txn.put([11], forKey: [5], in: a)
                #expect(try txn.deleteAll(in: a, range: ScanRange(lower: [4], upper: [5])) == 1)
                try txn.put([12], forKey: [6], in: a)
            }
            let contents = try store.read { txn throws in
                var pairs: [[UInt8]] = []
                try txn.scan(a) { k, v in
                    pairs.append(Array(k) + Array(v))
                    return true
                }
                return (pairs, try txn.value(forKey: [2], in: b))
            }
            #expect(contents.0 == [[1, 49], [5, 11], [6, 12]])
            #expect(contents.1 == [7])
        }
    }

    /// Pairs of a multi-value table put twice in one transaction, or already stored, are kept once.
    @Test func repeatedPairsAreKeptOnce() throws {
        try TestServer.withLocation { location throws in
            let store = try PostgresStore.open(at: location, configuration: Self.configuration)
            defer { store.close() }
            let pairs = store.table(named: "pairs")
            try store.writeAndWait { txn throws in try txn.put([1], forKey: [1], in: pairs) }
            try store.writeAndWait { txn throws in
                for value: UInt8 in [1, 2, 2, 3, 1] { try txn.put([value], forKey: [1], in: pairs) }
            }
            #expect(try store.read { try $0.valueCount(forKey: [1], in: pairs) } == 3)
        }
    }

    /// A body that throws after its puts leaves none of them; a later write goes on.
    @Test func aFailedBodyKeepsNoPut() throws {
        struct Refused: Error {}
        try TestServer.withLocation { location throws in
            let store = try PostgresStore.open(at: location, configuration: Self.configuration)
            defer { store.close() }
            let a = store.table(named: "a")
            #expect(throws: Refused.self) {
                try store.writeAndWait { txn throws in
                    for i: UInt8 in 0..<10 { try txn.put([i], forKey: [i], in: a) }
                    throw Refused()
                }
            }
            #expect(try store.read { try $0.count(of: a) } == 0)
            try store.writeAndWait { txn throws in try txn.put([1], forKey: [1], in: a) }
            #expect(try store.read { try $0.count(of: a) } == 1)
        }
    }
}
