import FogStorage
import FogStorageLMDB
import Foundation
import Synchronization
import Testing

@Suite struct TransactionTests {
    // MARK: - Single-table operations

    @Test func putThenGetReturnsTheValue() throws {
        try withTestEnvironment { environment, a, _ in
            let ownWrite = try environment.writeAndWait { txn throws in
                try txn.put([1, 2, 3], forKey: [0x10], in: a)
                // A write transaction reads its own writes.
                return try txn.value(forKey: [0x10], in: a)
            }
            #expect(ownWrite == [1, 2, 3])
            try environment.read { txn throws in
                #expect(try txn.value(forKey: [0x10], in: a) == [1, 2, 3])
                #expect(try txn.value(forKey: [0x11], in: a) == nil)
                #expect(try txn.withValue(forKey: [0x10], in: a) { $0.count } == 3)
                #expect(try txn.withValue(forKey: [0x11], in: a) { _ in Issue.record("called for a missing key") } == nil)
            }
        }
    }

    @Test func putReplacesTheValue() throws {
        try withTestEnvironment { environment, a, _ in
            try environment.writeAndWait { try $0.put([1], forKey: [7], in: a) }
            try environment.writeAndWait { try $0.put(Array(repeating: 2, count: 5000), forKey: [7], in: a) }
            #expect(try environment.read { try $0.value(forKey: [7], in: a) } == Array(repeating: 2, count: 5000))
            try environment.writeAndWait { try $0.put([], forKey: [7], in: a) }
            #expect(try environment.read { try $0.value(forKey: [7], in: a) } == [])
            #expect(try environment.read { try $0.count(of: a) } == 1)
        }
    }

    @Test func emptyValuesAreStoredAndDistinctFromAbsence() throws {
        try withTestEnvironment { environment, a, _ in
            try environment.writeAndWait { try $0.put([], forKey: [1], in: a) }
            try environment.read { txn throws in
                #expect(try txn.value(forKey: [1], in: a) == [])
                #expect(try txn.contains([1], in: a))
                #expect(try !txn.contains([2], in: a))
            }
        }
    }

    @Test func deleteRemovesTheKeyAndReportsWhetherItWasThere() throws {
        try withTestEnvironment { environment, a, _ in
            try environment.writeAndWait { txn throws in
                try txn.put([1], forKey: [1], in: a)
                try txn.put([2], forKey: [2], in: a)
            }
            let (first, second) = try environment.writeAndWait { txn throws in
                (try txn.delete([1], in: a), try txn.delete([1], in: a))
            }
            #expect(first)
            #expect(!second)
            #expect(try environment.writeAndWait { try $0.delete([3], in: a) } == false)
            try environment.read { txn throws in
                #expect(try txn.value(forKey: [1], in: a) == nil)
                #expect(try txn.value(forKey: [2], in: a) == [2])
                #expect(try txn.count(of: a) == 1)
            }
        }
    }

    @Test func insertDoesNotOverwrite() throws {
        try withTestEnvironment { environment, a, _ in
            #expect(try environment.writeAndWait { try $0.insert([1], forKey: [5], in: a) })
            #expect(try environment.writeAndWait { try $0.insert([2], forKey: [5], in: a) } == false)
            #expect(try environment.read { try $0.value(forKey: [5], in: a) } == [1])
            // In one transaction too, and after a delete the key is free again.
            let results = try environment.writeAndWait { txn throws in
                [
                    try txn.insert([3], forKey: [6], in: a), try txn.insert([4], forKey: [6], in: a),
                    try txn.delete([6], in: a), try txn.insert([5], forKey: [6], in: a),
                ]
            }
            #expect(results == [true, false, true, true])
            #expect(try environment.read { try $0.value(forKey: [6], in: a) } == [5])
        }
    }

    @Test func containsReflectsPresence() throws {
        try withTestEnvironment { environment, a, b in
            try environment.writeAndWait { try $0.put([0], forKey: [1, 2], in: a) }
            try environment.read { txn throws in
                #expect(try txn.contains([1, 2], in: a))
                #expect(try !txn.contains([1], in: a))
                #expect(try !txn.contains([1, 2, 0], in: a))
                #expect(try !txn.contains([1, 2], in: b))
            }
        }
    }

    @Test func countCountsEntries() throws {
        try withTestEnvironment { environment, a, b in
            #expect(try environment.read { try $0.count(of: a) } == 0)
            let countInside = try environment.writeAndWait { txn throws in
                for i in 0..<1234 { try txn.put([UInt8(i & 0xFF)], forKey: key(i), in: a) }
                for i in 0..<10 { try txn.put([], forKey: key(i), in: b) }
                return try txn.count(of: a)
            }
            #expect(countInside == 1234)
            #expect(try environment.read { try $0.count(of: a) } == 1234)
            #expect(try environment.read { try $0.count(of: b) } == 10)
        }
    }

    @Test func clearEmptiesOnlyThatTable() throws {
        try withTestEnvironment { environment, a, b in
            try environment.writeAndWait { txn throws in
                for i in 0..<300 {
                    try txn.put(Array(repeating: 1, count: 100), forKey: key(i), in: a)
                    try txn.put([2], forKey: key(i), in: b)
                }
            }
            try environment.writeAndWait { try $0.clear(a) }
            try environment.read { txn throws in
                #expect(try txn.count(of: a) == 0)
                #expect(try txn.entries(a).isEmpty)
                #expect(try txn.count(of: b) == 300)
            }
            // The table is still usable.
            try environment.writeAndWait { try $0.put([3], forKey: [3], in: a) }
            #expect(try environment.read { try $0.entries(a) } == [Entry(key: [3], value: [3])])
        }
    }

    @Test func deleteAllRemovesExactlyTheKeysInTheRange() throws {
        try withTestEnvironment { environment, a, b in
            var rng = SplitMix64(seed: 0xDE1)
            var model: [[UInt8]: [UInt8]] = [:]
            for _ in 0..<400 { model[rng.edgyBytes(lengths: 1...4)] = rng.bytes(lengths: 0...8) }
            let modelB = sortedEntries(model)
            try environment.writeAndWait { txn throws in
                for (key, value) in model {
                    try txn.put(value, forKey: key, in: a)
                    try txn.put(value, forKey: key, in: b)
                }
            }
            let ranges: [ScanRange] = [
                .prefix([0x41]),
                .prefix([0xFF]),
                .prefix([0x00, 0x00]),
                ScanRange(lower: [0x01], lowerInclusive: false, upper: [0x7F, 0x80], upperInclusive: true),
                ScanRange(lower: [0xFE], upper: nil),
                ScanRange(lower: [0x80], upper: [0x7F]),  // empty
            ]
            for range in ranges {
                let expected = model.keys.filter { contains(range, $0) }
                let removed = try environment.writeAndWait { try $0.deleteAll(in: a, range: range) }
                #expect(removed == expected.count, "\(range)")
                for key in expected { model[key] = nil }
                #expect(try environment.read { try $0.entries(a) } == sortedEntries(model), "\(range)")
            }
            #expect(try environment.writeAndWait { try $0.deleteAll(in: a, range: .all) } == model.count)
            #expect(try environment.read { try $0.count(of: a) } == 0)
            // Table b was never touched.
            #expect(try environment.read { try $0.entries(b) } == modelB)
        }
    }

    @Test func tablesAreIsolated() throws {
        try withTestEnvironment { environment, a, b in
            try environment.writeAndWait { txn throws in
                try txn.put([0xA], forKey: [1], in: a)
                try txn.put([0xB], forKey: [1], in: b)
                try txn.put([0xB], forKey: [2], in: b)
            }
            try environment.read { txn throws in
                #expect(try txn.value(forKey: [1], in: a) == [0xA])
                #expect(try txn.value(forKey: [1], in: b) == [0xB])
                #expect(try txn.value(forKey: [2], in: a) == nil)
                #expect(try txn.count(of: a) == 1)
                #expect(try txn.count(of: b) == 2)
                #expect(try txn.keys(a) == [[1]])
            }
            let flags = try environment.writeAndWait { txn throws in
                [try txn.delete([1], in: a), try txn.insert([0xC], forKey: [2], in: b), try txn.insert([0xC], forKey: [2], in: a)]
            }
            #expect(flags == [true, false, true])
            try environment.read { txn throws in
                #expect(try txn.entries(a) == [Entry(key: [2], value: [0xC])])
                #expect(try txn.entries(b) == [Entry(key: [1], value: [0xB]), Entry(key: [2], value: [0xB])])
            }
        }
    }

    @Test func reservedPutFillsTheValueInPlace() throws {
        try withTestEnvironment { environment, a, _ in
            try environment.writeAndWait { txn throws in
                try txn.put(count: 4, forKey: [1], in: a) { buffer in
                    buffer.copyBytes(from: [9, 8, 7, 6])
                }
                // Appending keys in order.
                for i in 10..<20 {
                    try txn.put(count: 2, forKey: [0x10, UInt8(i)], in: a, append: true) { buffer in
                        buffer[0] = UInt8(i)
                        buffer[1] = 0xFF
                    }
                }
                try txn.put(count: 0, forKey: [0xFF], in: a) { buffer in precondition(buffer.count == 0) }
            }
            try environment.read { txn throws in
                #expect(try txn.value(forKey: [1], in: a) == [9, 8, 7, 6])
                for i in 10..<20 { #expect(try txn.value(forKey: [0x10, UInt8(i)], in: a) == [UInt8(i), 0xFF]) }
                #expect(try txn.value(forKey: [0xFF], in: a) == [])
            }
        }
    }

    @Test func badKeySizesThrowKeySizeErrors() throws {
        try withTestEnvironment { environment, a, _ in
            #expect(throws: StorageError.emptyKey) { try environment.writeAndWait { try $0.put([1], forKey: [], in: a) } }
            #expect(throws: StorageError.keyTooLarge) {
                try environment.writeAndWait { try $0.put([1], forKey: Array(repeating: 1, count: 512), in: a) }
            }
            // 511 bytes is the largest key.
            try environment.writeAndWait { try $0.put([1], forKey: Array(repeating: 1, count: 511), in: a) }
            // A caught bad-size error does not spoil the transaction.
            let caught = try environment.writeAndWait { txn -> (any Error)? in
                var caught: (any Error)?
                do { try txn.put([1], forKey: [], in: a) } catch { caught = error }
                try txn.put([2], forKey: [2], in: a)
                return caught
            }
            #expect(caught as? StorageError == .emptyKey)
            #expect(try environment.read { try $0.count(of: a) } == 2)
        }
    }

    // MARK: - Failing writes

    @Test func aThrowingWriteKeepsNothingAndRethrowsTheSameError() async throws {
        try await withTestEnvironment { environment, a, b in
            try environment.writeAndWait { try $0.put([0], forKey: [0], in: a) }
            #expect(throws: TestError(id: 1)) {
                try environment.writeAndWait { txn throws in
                    try txn.put([1], forKey: [1], in: a)
                    try txn.put([1], forKey: [1], in: b)
                    try txn.put([9], forKey: [0], in: a)
                    try txn.clear(b)
                    throw TestError(id: 1)
                }
            }
            await #expect(throws: TestError(id: 2)) {
                try await environment.write { txn in
                    try txn.put([2], forKey: [2], in: a)
                    guard try txn.delete([0], in: a) else { throw TestError(id: -2) }
                    throw TestError(id: 2)
                }
            }
            let outcome = Mutex<Result<Void, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
            try environment.enqueueWrite(
                { txn in
                    try txn.put([3], forKey: [3], in: a)
                    throw TestError(id: 3)
                },
                completion: { result in
                    outcome.withLock { $0 = result }
                    done.signal()
                })
            done.wait()
            #expect(throws: TestError(id: 3)) { try outcome.withLock { $0 }?.get() }

            #expect(try environment.read { try $0.entries(a) } == [Entry(key: [0], value: [0])])
            #expect(try environment.read { try $0.count(of: b) } == 0)
            let statistics = try environment.statistics()
            #expect(statistics.writeRequests == 4)
        }
    }

    // MARK: - Ways to write

    @Test func writeAndWaitReturnsTheBodyResult() throws {
        try withTestEnvironment { environment, a, _ in
            let value = try environment.writeAndWait { txn -> String in
                try txn.put([1], forKey: [1], in: a)
                return "done"
            }
            #expect(value == "done")
            let none: Int? = try environment.writeAndWait { _ in nil }
            #expect(none == nil)
            #expect(try environment.read { try $0.value(forKey: [1], in: a) } == [1])
        }
    }

    @Test func asyncWriteReturnsTheBodyResult() async throws {
        try await withTestEnvironment { environment, a, _ in
            let count = try await environment.write { txn -> Int in
                for i in 0..<10 { try txn.put([UInt8(i)], forKey: key(i), in: a) }
                return try txn.count(of: a)
            }
            #expect(count == 10)
            let none: [UInt8]? = try await environment.write { txn in try txn.value(forKey: [0xFF], in: a) }
            #expect(none == nil)
            try await environment.write { _ in }
            #expect(try environment.read { try $0.count(of: a) } == 10)
        }
    }

    @Test func enqueueWriteCallsTheCompletionAfterTheCommit() throws {
        try withTestEnvironment { environment, a, _ in
            let seen = Mutex<[UInt8]?>(nil)
            let outcome = Mutex<Result<Void, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
            try environment.enqueueWrite(
                { try $0.put([4], forKey: [4], in: a) },
                completion: { result in
                    // The commit is visible to readers by now.
                    seen.withLock { $0 = try? environment.read { try $0.value(forKey: [4], in: a) } }
                    outcome.withLock { $0 = result }
                    done.signal()
                })
            done.wait()
            #expect(seen.withLock { $0 } == [4])
            #expect(throws: Never.self) { try outcome.withLock { $0 }?.get() }
        }
    }

    // MARK: - Concurrent writers

    @Test func manyConcurrentAsyncWritersAllCommitInFewerCommits() async throws {
        try await withTestEnvironment { environment, a, _ in
            let writers = 200
            let before = try environment.statistics()
            // Hold the writer until every task is about to enqueue, so that the
            // requests pile up behind it whatever the scheduling.
            let gate = WriterGate()
            try gate.hold(environment)
            let started = Counter()
            let results = try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<writers {
                    group.addTask {
                        if started.increment() == writers { gate.open() }
                        return try await environment.write { txn in
                            try txn.put(encode(UInt64(i) * 3), forKey: key(i), in: a)
                            return i
                        }
                    }
                }
                return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
            }
            #expect(results == Set(0..<writers))
            let after = try environment.statistics()
            let requests = after.writeRequests - before.writeRequests
            let commits = after.commits - before.commits
            #expect(requests == writers + 1)
            #expect(commits < requests, "group commit: \(commits) commits for \(requests) requests")
            #expect(commits >= 2)
            try environment.read { txn throws in
                #expect(try txn.count(of: a) == writers)
                for i in 0..<writers { #expect(try txn.value(forKey: key(i), in: a) == encode(UInt64(i) * 3)) }
            }
        }
    }

    @Test func queuedWritesAreGroupedUpToTheMaximumGroupSize() throws {
        try withTestEnvironment(configuration: testConfiguration(maximumGroupSize: 50)) { environment, a, _ in
            let before = try environment.statistics()
            let gate = WriterGate()
            try gate.hold(environment)
            let completed = Counter()
            let failed = Counter()
            let done = DispatchSemaphore(value: 0)
            for i in 0..<120 {
                try environment.enqueueWrite(
                    { try $0.put([1], forKey: key(i), in: a) },
                    completion: { result in
                        if case .failure = result { failed.increment() }
                        if completed.increment() == 120 { done.signal() }
                    })
            }
            gate.open()
            done.wait()
            #expect(failed.value == 0)
            let after = try environment.statistics()
            // The gate's own commit, then 120 queued requests in groups of at most 50.
            #expect(after.writeRequests - before.writeRequests == 121)
            #expect(after.commits - before.commits == 1 + 3)
            #expect(try environment.read { try $0.count(of: a) } == 120)
        }
    }

    @Test func aFailingWriteInAGroupDoesNotAffectTheOthers() throws {
        try withTestEnvironment { environment, a, b in
            let jobs = 20
            let results = try runAsOneGroup(environment, jobs: jobs) { i, txn in
                try txn.put([UInt8(i)], forKey: key(i), in: a)
                try txn.put([UInt8(i)], forKey: key(i), in: b)
                switch i % 5 {
                case 1: throw TestError(id: i)
                case 3: try txn.put([1], forKey: [], in: a)  // an LMDB error
                case 4:
                    // Sees the writes of the earlier requests of the group that
                    // succeeded, and none of those that failed.
                    let visible = try [1, 2, 3, 4].map { try txn.value(forKey: key(i - $0), in: a) != nil }
                    if visible != [false, true, false, true] { throw TestError(id: -i) }
                default: break
                }
            }
            for i in 0..<jobs {
                switch i % 5 {
                case 1: #expect(throws: TestError(id: i)) { try results[i]!.get() }
                case 3: #expect(throws: StorageError.emptyKey) { try results[i]!.get() }
                default: #expect(throws: Never.self) { try results[i]!.get() }
                }
            }
            let expected = (0..<jobs).filter { $0 % 5 != 1 && $0 % 5 != 3 }.map { Entry(key: key($0), value: [UInt8($0)]) }
            #expect(try environment.read { try $0.entries(a) } == expected)
            #expect(try environment.read { try $0.entries(b) } == expected)
        }
    }

    @Test func aGroupWithoutFailuresRunsEachRequestOnceInOneCommit() throws {
        try withTestEnvironment { environment, a, _ in
            let runs = Counter()
            let before = try environment.statistics()
            let jobs = 40
            let outcomes = try runAsOneGroup(environment, jobs: jobs) { i, txn in
                runs.increment()
                // Each request sees the one before it: the value chains through the group.
                let previous = i == 0 ? 0 : try txn.value(forKey: key(i - 1), in: a).map { Int($0[0]) } ?? -1000
                try txn.put([UInt8(previous + 1)], forKey: key(i), in: a)
            }
            #expect(outcomes.values.allSatisfy { (try? $0.get()) != nil })
            #expect(runs.value == jobs, "a group whose requests all succeed is run once")
            let after = try environment.statistics()
            #expect(after.commits - before.commits == 2)  // the gate's, then the group's
            #expect(
                try environment.read { txn in try (0..<jobs).map { try txn.value(forKey: key($0), in: a) } }
                    == (0..<jobs).map { [UInt8($0 + 1)] })
        }
    }

    @Test func aFailureLateInAGroupKeepsTheWritesOfTheRequestsBeforeIt() throws {
        try withTestEnvironment { environment, a, b in
            let jobs = 30
            let outcomes = try runAsOneGroup(environment, jobs: jobs) { i, txn in
                try txn.put([UInt8(i)], forKey: key(i), in: a)
                if i == jobs - 1 {
                    try txn.put([1], forKey: key(i), in: b)
                    throw TestError(id: i)
                }
            }
            for i in 0..<jobs - 1 { #expect(throws: Never.self) { try outcomes[i]!.get() } }
            #expect(throws: TestError(id: jobs - 1)) { try outcomes[jobs - 1]!.get() }
            #expect(try environment.read { try $0.entries(a) } == (0..<jobs - 1).map { Entry(key: key($0), value: [UInt8($0)]) })
            #expect(try environment.read { try $0.count(of: b) } == 0)
        }
    }

    @Test func aRequestThatCatchesAnLMDBErrorAndGoesOnSucceedsWithTheOthers() throws {
        try withTestEnvironment { environment, a, _ in
            let jobs = 12
            let outcomes = try runAsOneGroup(environment, jobs: jobs) { i, txn in
                try txn.put([UInt8(i)], forKey: key(i), in: a)
                if i == 4 { _ = try? txn.put([1], forKey: [], in: a) }  // an LMDB error, caught
                if i == 5 {
                    // Sees every write before it, the catching request's included.
                    let visible = try (0..<5).allSatisfy { try txn.value(forKey: key($0), in: a) == [UInt8($0)] }
                    if !visible { throw TestError(id: -i) }
                }
            }
            for i in 0..<jobs { #expect(throws: Never.self) { try outcomes[i]!.get() } }
            #expect(try environment.read { try $0.entries(a) } == (0..<jobs).map { Entry(key: key($0), value: [UInt8($0)]) })
        }
    }

    @Test func failingAsyncWritersAmongConcurrentOnesFailAlone() async throws {
        try await withTestEnvironment { environment, a, _ async throws in
            let writers = 100
            let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
                for i in 0..<writers {
                    group.addTask {
                        do {
                            try await environment.write { txn in
                                try txn.put([UInt8(i)], forKey: key(i), in: a)
                                if i % 7 == 0 { throw TestError(id: i) }
                            }
                            return (i, true)
                        } catch {
                            #expect(error as? TestError == TestError(id: i))
                            return (i, false)
                        }
                    }
                }
                return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
            }
            for i in 0..<writers { #expect(outcomes[i] == (i % 7 != 0), "writer \(i)") }
            let expected = (0..<writers).filter { $0 % 7 != 0 }.map { Entry(key: key($0), value: [UInt8($0)]) }
            #expect(try environment.read { try $0.entries(a) } == expected)
        }
    }
}
