import FogStorage
import FogStorageLMDB
import Foundation
import Synchronization
import Testing

/// Works held until the commit (`writeBeforeCommit`) in a group of requests: run once for
/// the group when its requests run directly, and with each request when a failure makes the
/// group run nested.
@Suite struct WritesBeforeCommitGroupTests {
    @Test func aGroupRunsTheWorkHeldUnderOneKeyOnceAfterItsLastRequest() throws {
        try withTestEnvironment { environment, a, b in
            let runs = Counter()
            let before = try environment.statistics()
            let jobs = 40
            let outcomes = try runAsOneGroup(environment, jobs: jobs) { i, txn in
                try txn.put([UInt8(i)], forKey: key(i), in: a)
                txn.writeBeforeCommit(key: [7]) { txn in
                    runs.increment()
                    try txn.put([UInt8(try txn.count(of: a))], forKey: [7], in: b)
                }
            }
            #expect(outcomes.values.allSatisfy { (try? $0.get()) != nil })
            #expect(runs.value == 1, "held once for the group, not \(runs.value) times")
            #expect(try environment.statistics().commits - before.commits == 2)  // the gate's, then the group's
            #expect(try environment.read { try $0.value(forKey: [7], in: b) } == [UInt8(jobs)])
        }
    }

    @Test func aFailedRequestOfAGroupKeepsNoneOfItsWorksAndTheOthersKeepTheirs() throws {
        try withTestEnvironment { environment, a, b in
            let jobs = 20
            let outcomes = try runAsOneGroup(environment, jobs: jobs) { i, txn in
                try txn.put([UInt8(i)], forKey: key(i), in: a)
                txn.writeBeforeCommit(key: key(i)) { txn in try txn.put([1], forKey: key(i), in: b) }
                txn.writeBeforeCommit(key: [0xFF]) { txn in
                    try txn.put([UInt8(try txn.count(of: a))], forKey: [0xFF], in: b)
                }
                if i % 5 == 1 { throw TestError(id: i) }
            }
            let succeeded = (0..<jobs).filter { $0 % 5 != 1 }
            for i in 0..<jobs {
                if i % 5 == 1 {
                    #expect(throws: TestError(id: i)) { try outcomes[i]!.get() }
                } else {
                    #expect(throws: Never.self) { try outcomes[i]!.get() }
                }
            }
            #expect(try environment.read { try $0.keys(b) } == succeeded.map(key) + [[0xFF]])
            #expect(try environment.read { try $0.value(forKey: [0xFF], in: b) } == [UInt8(succeeded.count)])
        }
    }
}
