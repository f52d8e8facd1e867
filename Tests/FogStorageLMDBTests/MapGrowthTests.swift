import FogStorage
import FogStorageLMDB
import Foundation
import Synchronization
import Testing

@Suite struct MapGrowthTests {
    static let initialMapSize = 256 << 10

    /// Random bytes that values are cut from.
    static let base: [UInt8] = {
        var rng = SplitMix64(seed: 0x6E0)
        return rng.bytes(count: 1000)
    }()

    /// A deterministic ~1 KB value for key `i`: cheap to make (debug builds are
    /// slow) yet different for every key and generation.
    static func value(_ i: Int, generation: Int = 0, size: Int = 1000) -> [UInt8] {
        precondition(size >= 8 && size <= base.count)
        var value = size == base.count ? base : Array(base[0..<size])
        value.withUnsafeMutableBytes { buffer in
            buffer.storeBytes(of: UInt32(i).bigEndian, toByteOffset: 0, as: UInt32.self)
            buffer.storeBytes(of: UInt32(truncatingIfNeeded: generation).bigEndian, toByteOffset: 4, as: UInt32.self)
        }
        return value
    }

    private func configuration() -> LMDBStore.Configuration {
        testConfiguration(initialMapSize: Self.initialMapSize)
    }

    private func checkAll(
        _ environment: LMDBStore, _ table: Table, count: Int, generation: Int = 0,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try environment.read { txn throws in
            #expect(try txn.count(of: table) == count, sourceLocation: sourceLocation)
            var i = 0
            var mismatches = 0
            try txn.scan(table) { key, value in
                if !bytesEqual(key, FogStorageLMDBTests.key(i)) || !bytesEqual(value, Self.value(i, generation: generation)) {
                    mismatches += 1
                }
                i += 1
                return true
            }
            #expect(i == count, sourceLocation: sourceLocation)
            #expect(mismatches == 0, sourceLocation: sourceLocation)
        }
    }

    @Test func manyTransactionsGrowTheMapWithoutTheCallerSeeingMapFull() throws {
        try withTestEnvironment(configuration: configuration()) { environment, a, _ in
            let initial = try environment.statistics()
            #expect(initial.mapSize < 1 << 20)
            let transactions = 40, perTransaction = 100  // ~4 MB
            for t in 0..<transactions {
                try environment.writeAndWait { txn throws in
                    for j in 0..<perTransaction {
                        let i = t * perTransaction + j
                        try txn.put(Self.value(i), forKey: key(i), in: a)
                    }
                }
            }
            let grown = try environment.statistics()
            #expect(grown.mapSize > initial.mapSize)
            #expect(grown.mapSize >= transactions * perTransaction * 1000)
            #expect(grown.fileSize <= grown.mapSize)
            #expect(grown.commits == transactions, "retries after growth are not extra commits")
            try checkAll(environment, a, count: transactions * perTransaction)
        }
    }

    @Test func oneTransactionLargerThanTheWholeMapCommits() async throws {
        try await withTestEnvironment(configuration: configuration()) { environment, a, _ in
            let count = 3000  // ~3 MB, twelve times the initial map
            let runs = Counter()
            let written = try await environment.write { txn -> Int in
                runs.increment()
                for i in 0..<count { try txn.put(Self.value(i), forKey: key(i), in: a) }
                return try txn.count(of: a)
            }
            #expect(written == count)
            #expect(runs.value > 1, "the body was replayed after the map grew")
            let statistics = try environment.statistics()
            #expect(statistics.mapSize >= count * 1000)
            try checkAll(environment, a, count: count)
        }
    }

    @Test func groupedWritesGrowTheMapAndAllCommit() throws {
        try withTestEnvironment(configuration: configuration()) { environment, a, b in
            let gate = WriterGate()
            try gate.hold(environment)
            let jobs = 60, perJob = 50  // ~3 MB in one group
            let failures = Mutex<[Int: any Error]>([:])
            let completed = Counter()
            let done = DispatchSemaphore(value: 0)
            for job in 0..<jobs {
                try environment.enqueueWrite(
                    { txn in
                        for j in 0..<perJob {
                            let i = job * perJob + j
                            try txn.put(Self.value(i), forKey: key(i), in: a)
                        }
                        if job == 7 { throw TestError(id: 7) }
                    },
                    completion: { result in
                        if case .failure(let error) = result { failures.withLock { $0[job] = error } }
                        if completed.increment() == jobs { done.signal() }
                    })
            }
            gate.open()
            done.wait()
            let errors = failures.withLock { $0 }
            #expect(errors.count == 1)
            #expect(errors[7] as? TestError == TestError(id: 7))
            #expect(try environment.statistics().mapSize >= jobs * perJob * 1000 * 9 / 10)
            try environment.read { txn throws in
                #expect(try txn.count(of: a) == (jobs - 1) * perJob)
                for i in stride(from: 0, to: jobs * perJob, by: 37) {
                    let wanted: [UInt8]? = i / perJob == 7 ? nil : Self.value(i)
                    #expect(try txn.value(forKey: key(i), in: a) == wanted)
                }
                #expect(try txn.count(of: b) == 0)
            }
        }
    }

    @Test func concurrentAsyncWritersGrowTheMap() async throws {
        try await withTestEnvironment(configuration: configuration()) { environment, a, _ in
            let writers = 64, perWriter = 64  // ~4 MB
            try await withThrowingTaskGroup(of: Void.self) { group in
                for w in 0..<writers {
                    group.addTask {
                        try await environment.write { txn in
                            for j in 0..<perWriter {
                                let i = w * perWriter + j
                                try txn.put(Self.value(i), forKey: key(i), in: a)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try environment.statistics().mapSize > Self.initialMapSize)
            try checkAll(environment, a, count: writers * perWriter)
        }
    }

    @Test func aWriteThatSwallowsMapFullIsStillRetriedAndCommits() throws {
        // The documentation of `LMDBReadTransaction.sawMapFull` promises that the writer
        // grows the map and retries "whatever the caller did with the error".
        try withTestEnvironment(configuration: configuration()) { environment, a, _ in
            let count = 1000  // ~1 MB, four times the initial map
            let swallowed = Counter()
            try environment.writeAndWait { txn throws in
                // Swallows every error and goes on writing.
                for i in 0..<count {
                    do {
                        try txn.put(Self.value(i), forKey: key(i), in: a)
                    } catch {
                        swallowed.increment()
                    }
                }
            }
            #expect(swallowed.value >= 1, "the body met a full map at least once")
            #expect(try environment.statistics().commits == 1)
            try checkAll(environment, a, count: count)
        }
    }

    @Test func aGroupedWriteThatSwallowsMapFullDoesNotFailItsGroup() throws {
        try withTestEnvironment(configuration: configuration()) { environment, a, b in
            let gate = WriterGate()
            try gate.hold(environment)
            let jobs = 4
            let outcomes = Mutex<[Int: Result<Void, any Error>]>([:])
            let done = DispatchSemaphore(value: 0)
            for job in 0..<jobs {
                try environment.enqueueWrite(
                    { txn in
                        if job == 2 {
                            for i in 0..<1000 {
                                do { try txn.put(Self.value(i), forKey: key(i), in: a) } catch StorageError.full { return }
                            }
                        } else {
                            try txn.put([UInt8(job)], forKey: [UInt8(job)], in: b)
                        }
                    },
                    completion: { result in
                        let n = outcomes.withLock {
                            $0[job] = result
                            return $0.count
                        }
                        if n == jobs { done.signal() }
                    })
            }
            gate.open()
            done.wait()
            let results = outcomes.withLock { $0 }
            for job in 0..<jobs {
                #expect(throws: Never.self, "job \(job)") { try results[job]!.get() }
            }
            try environment.read { txn throws in
                #expect(try txn.count(of: b) == jobs - 1)
            }
            try checkAll(environment, a, count: 1000)
        }
    }

    @Test func readersKeepWorkingWhileTheMapGrows() async throws {
        try await withTestEnvironment(configuration: configuration()) { environment, a, b in
            // A fixed set the readers check, written before growth starts.
            let fixed = 100
            try environment.writeAndWait { txn throws in
                for i in 0..<fixed { try txn.put(Self.value(i, generation: 1, size: 200), forKey: key(i), in: b) }
            }
            let failures = FailureLog()
            let writerDone = Flag()
            let readsDuringGrowth = Counter()
            // Readers go on until the writer is done, within bounds on their iterations.
            let readers = 2, minimumIterations = 500, maximumIterations = 100_000
            let growthsSeen = Counter()

            async let writes: Void = {
                defer { writerDone.set() }
                for t in 0..<30 {
                    try await environment.write { txn in
                        for j in 0..<100 {
                            let i = t * 100 + j
                            try txn.put(Self.value(i), forKey: key(i), in: a)
                        }
                    }
                }
            }()

            await runOnThreads(readers) { reader in
                var rng = SplitMix64(seed: UInt64(reader))
                var lastMapSize = 0
                for iteration in 0..<maximumIterations {
                    if iteration >= minimumIterations && writerDone.isSet { break }
                    if iteration % 64 == 0, let size = try? environment.statistics().mapSize {
                        if size != lastMapSize { growthsSeen.increment() }
                        lastMapSize = size
                    }
                    do {
                        try environment.read { txn throws in
                            // The fixed set is always complete and intact.
                            let i = Int.random(in: 0..<fixed, using: &rng)
                            guard
                                try txn.withValue(forKey: key(i), in: b, { bytesEqual($0, Self.value(i, generation: 1, size: 200)) })
                                    == true
                            else {
                                failures.record("reader \(reader) iteration \(iteration): key \(i) of b is wrong")
                                return
                            }
                            // Whatever of table a is visible is whole: a prefix of 100-key chunks.
                            let count = try txn.count(of: a)
                            if count % 100 != 0 { failures.record("reader \(reader): a has \(count) keys") }
                            if count > 0 {
                                let j = Int.random(in: 0..<count, using: &rng)
                                guard try txn.withValue(forKey: key(j), in: a, { bytesEqual($0, Self.value(j)) }) == true else {
                                    failures.record("reader \(reader) iteration \(iteration): key \(j) of a is wrong")
                                    return
                                }
                            }
                        }
                        if !writerDone.isSet { readsDuringGrowth.increment() }
                    } catch {
                        failures.record("reader \(reader) iteration \(iteration): \(error)")
                    }
                }
            }
            try await writes
            failures.report()
            #expect(try environment.statistics().mapSize >= 3000 * 1000)
            try checkAll(environment, a, count: 3000)
            // Not asserted, as they depend on scheduling (typical: thousands of reads
            // during the writes, and every map size seen by each reader).
            _ = (readsDuringGrowth.value, growthsSeen.value)
        }
    }

    @Test func theGrownMapSizeSurvivesAReopen() throws {
        try withTemporaryDirectory { temporary in
            let directory = temporary.appending("env")
            var grownSize = 0
            do {
                let environment = try LMDBStore.open(directory: directory, configuration: configuration())
                defer { environment.close() }
                try environment.writeAndWait { txn throws in
                    for i in 0..<2000 { try txn.put(Self.value(i), forKey: key(i), in: environment.table(named: "a")) }
                }
                grownSize = try environment.statistics().mapSize
            }
            let environment = try LMDBStore.open(directory: directory, configuration: configuration())
            defer { environment.close() }
            // The map is at least big enough for the data (LMDB may reopen it at the
            // configured size rounded up to the pages in use, not at the grown size).
            let reopened = try environment.statistics()
            #expect(reopened.mapSize >= reopened.pagesUsed * reopened.pageSize)
            #expect(grownSize >= reopened.pagesUsed * reopened.pageSize)
            try checkAll(environment, environment.table(named: "a"), count: 2000)
            // More writes still grow it further.
            try environment.writeAndWait { txn throws in
                for i in 2000..<4000 { try txn.put(Self.value(i), forKey: key(i), in: environment.table(named: "a")) }
            }
            try checkAll(environment, environment.table(named: "a"), count: 4000)
        }
    }
}
