import FogKitTesting
import FogStorage
import Foundation
import Synchronization
import Testing

/// Works held until the end of a request (`writeBeforeCommit`): when they run, what replaces
/// them, and what a failure keeps.
@Suite struct WritesBeforeCommitTests {
    @Test(arguments: allBackends) func aHeldWriteRunsAfterTheBodyBeforeTheCommit(_ b: Backend) throws { try runsAtTheEnd(b.backend) }
    @Test(arguments: allBackends) func aLaterWorkUnderTheSameKeyReplacesTheEarlier(_ b: Backend) throws { try replaced(b.backend) }
    @Test(arguments: allBackends) func runningHeldWritesNowPutsThemBeforeLaterWrites(_ b: Backend) throws { try runNow(b.backend) }
    @Test(arguments: allBackends) func aWorkThatThrowsFailsItsRequestAndKeepsNothing(_ b: Backend) throws { try throwing(b.backend) }
    @Test(arguments: allBackends) func aRequestThatThrowsRunsNoneOfItsWorks(_ b: Backend) throws { try bodyThrows(b.backend) }
    @Test(arguments: allBackends) func concurrentRequestsEachGetTheirWorksRun(_ b: Backend) async throws {
        try await concurrent(b.backend)
    }

    /// The work sees the body's writes and its own are committed with them; the body does not
    /// see the work's write.
    func runsAtTheEnd<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let seen = try store.writeAndWait { txn throws -> [UInt8]? in
                txn.writeBeforeCommit(key: [1]) { txn in
                    let count = try txn.keys(a).count
                    try txn.put([UInt8(count)], forKey: [9], in: a)
                }
                try txn.put([1], forKey: [1], in: a)
                try txn.put([2], forKey: [2], in: a)
                return try txn.value(forKey: [9], in: a)
            }
            #expect(seen == nil, "the work ran before the body ended")
            #expect(try store.read { try $0.entries(a) } == [Entry([1], [1]), Entry([2], [2]), Entry([9], [2])])
        }
    }

    /// Three works under one key: only the last runs; a work under another key runs too, in
    /// the order of the latest registrations.
    func replaced<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let runs = Mutex<[String]>([])
            try store.writeAndWait { txn throws in
                for i in 1...3 {
                    txn.writeBeforeCommit(key: [7]) { txn in
                        runs.withLock { $0.append("seven \(i)") }
                        try txn.put([UInt8(i)], forKey: [7], in: a)
                    }
                    if i == 1 {
                        txn.writeBeforeCommit(key: [8]) { txn in
                            runs.withLock { $0.append("eight") }
                            try txn.put([8], forKey: [8], in: a)
                        }
                    }
                }
            }
            #expect(runs.withLock { $0 } == ["eight", "seven 3"])
            #expect(try store.read { try $0.entries(a) } == [Entry([7], [3]), Entry([8], [8])])
        }
    }

    /// `runWritesBeforeCommit` runs the held works at once and forgets them: a write after it
    /// comes after them, and they do not run again at the commit.
    func runNow<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let runs = Mutex(0)
            try store.writeAndWait { txn throws in
                txn.writeBeforeCommit(key: [1]) { txn in
                    runs.withLock { $0 += 1 }
                    try txn.put([1], forKey: [5], in: a)
                }
                try txn.runWritesBeforeCommit()
                #expect(try txn.value(forKey: [5], in: a) == [1])
                try txn.put([2], forKey: [5], in: a)
            }
            #expect(runs.withLock { $0 } == 1)
            #expect(try store.read { try $0.value(forKey: [5], in: a) } == [2])
        }
    }

    /// A work that throws fails the request with its error, and nothing of the request is
    /// committed, the body's writes included.
    func throwing<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            #expect(throws: HeldWorkFailed.self) {
                try store.writeAndWait { txn throws in
                    try txn.put([1], forKey: [1], in: a)
                    txn.writeBeforeCommit(key: [1]) { txn in
                        try txn.put([2], forKey: [2], in: a)
                        throw HeldWorkFailed()
                    }
                }
            }
            #expect(try store.read { try $0.keys(a) } == [])
        }
    }

    /// A body that throws after holding a work: the work never runs.
    func bodyThrows<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let runs = Mutex(0)
            #expect(throws: HeldWorkFailed.self) {
                try store.writeAndWait { txn throws in
                    txn.writeBeforeCommit(key: [1]) { txn in
                        runs.withLock { $0 += 1 }
                        try txn.put([2], forKey: [2], in: a)
                    }
                    throw HeldWorkFailed()
                }
            }
            try store.writeAndWait { txn throws in try txn.put([3], forKey: [3], in: a) }
            #expect(runs.withLock { $0 } == 0)
            #expect(try store.read { try $0.keys(a) } == [[3]])
        }
    }

    /// Concurrent requests, some failing, each holding a work under a key of its own and one
    /// under a key they share, which counts the requests' writes: every successful request's
    /// own work ran, no failed one's did, and the count, written last, sees every successful
    /// request.
    func concurrent<B: StoreBackend>(_ backend: B) async throws {
        try await withStore(backend) { store async throws in
            let a = store.table(named: Tables.a)
            let b = store.table(named: Tables.b)
            let ok = await withTaskGroup(of: (Int, Bool).self) { group in
                for i in 0..<32 {
                    group.addTask {
                        do {
                            try await store.write { txn throws in
                                try txn.put([UInt8(i)], forKey: [UInt8(i)], in: a)
                                txn.writeBeforeCommit(key: [0, UInt8(i)]) { txn in
                                    try txn.put([1], forKey: [UInt8(i)], in: b)
                                }
                                txn.writeBeforeCommit(key: [1]) { txn in
                                    try txn.put([UInt8(try txn.keys(a).count)], forKey: [0xFF], in: b)
                                }
                                if i % 5 == 2 { throw HeldWorkFailed() }
                            }
                            return (i, true)
                        } catch {
                            return (i, false)
                        }
                    }
                }
                var ok: [Int: Bool] = [:]
                for await (i, success) in group { ok[i] = success }
                return ok
            }
            let succeeded = (0..<32).filter { $0 % 5 != 2 }
            #expect(ok.filter(\.value).keys.sorted() == succeeded)
            let expected = succeeded.map { [UInt8($0)] } + [[0xFF]]
            #expect(try store.read { try $0.keys(b) } == expected)
            #expect(try store.read { try $0.value(forKey: [0xFF], in: b) } == [UInt8(succeeded.count)])
        }
    }
}

private struct HeldWorkFailed: Error {}

extension WritesBeforeCommitTests {
    @Test(arguments: allBackends) func aHeldWorkWhoseErrorTheBodyCaughtRunsAgainAtTheCommit(_ b: Backend) throws {
        try caughtFlushError(b.backend)
    }

    /// A body that runs the held works, catches the error of one and goes on: the failed work
    /// and the works after it run at the commit (here the work succeeds the second time, and
    /// the request with it).
    func caughtFlushError<B: StoreBackend>(_ backend: B) throws {
        try withStore(backend) { store throws in
            let a = store.table(named: Tables.a)
            let failures = Mutex(1)
            try store.writeAndWait { txn throws in
                txn.writeBeforeCommit(key: [1]) { txn in
                    if failures.withLock({ f in
                        defer { f -= 1 }
                        return f > 0
                    }) {
                        throw HeldWorkFailed()
                    }
                    try txn.put([1], forKey: [1], in: a)
                }
                txn.writeBeforeCommit(key: [2]) { txn in try txn.put([2], forKey: [2], in: a) }
                #expect(throws: HeldWorkFailed.self) { try txn.runWritesBeforeCommit() }
                #expect(try txn.keys(a) == [])
            }
            #expect(try store.read { try $0.keys(a) } == [[1], [2]])
        }
    }
}
