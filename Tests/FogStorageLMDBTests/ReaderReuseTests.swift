import FogStorage
import Foundation
import Testing

@testable import FogStorageLMDB

/// A read takes the transaction object the last read on the store left, renewed and with
/// nothing it reported kept, unless something still holds that object (which a read must
/// not let escape): then it gets a new one, and the one held never reads again.
@Suite struct ReaderReuseTests {
    @Test func readsReuseTheLastTransactionObjectWithNothingItReported() throws {
        try withTestEnvironment { environment, a, _ in
            try environment.writeAndWait { try $0.put([7], forKey: [1], in: a) }
            let first = try environment.read { txn throws in
                // What a damaged page or a full map would have left behind.
                txn.isDamaged = true
                txn.sawMapFull = true
                txn.firstFailure = .other("an earlier read's failure")
                return ObjectIdentifier(txn)
            }
            let second = try environment.read { txn throws in
                #expect(!txn.isDamaged && !txn.sawMapFull && txn.firstFailure == nil)
                #expect(try txn.value(forKey: [1], in: a) == [7])
                return ObjectIdentifier(txn)
            }
            #expect(first == second)
        }
    }

    @Test func aTransactionObjectStillHeldIsNotHandedOut() throws {
        try withTestEnvironment { environment, a, _ in
            try environment.writeAndWait { try $0.put([7], forKey: [1], in: a) }
            var escaped: LMDBReadTransaction?
            try environment.read { txn in escaped = txn }
            let held = try #require(escaped)
            for value: UInt8 in 8...10 {
                try environment.writeAndWait { try $0.put([value], forKey: [1], in: a) }
                try environment.read { txn throws in
                    #expect(txn !== held)
                    #expect(try txn.value(forKey: [1], in: a) == [value])
                }
            }
            // Reads nested in a read take other transactions, each its own object.
            try environment.read { outer throws in
                try environment.read { inner throws in
                    #expect(outer !== inner && inner !== held)
                    #expect(try inner.value(forKey: [1], in: a) == [10])
                }
                #expect(try outer.value(forKey: [1], in: a) == [10])
            }
        }
    }
}
