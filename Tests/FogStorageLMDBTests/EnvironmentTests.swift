import FogStorage
import FogStorageLMDB
import Foundation
import Synchronization
import Testing

@Suite struct EnvironmentTests {
    // MARK: - Opening

    @Test func openCreatesTheDirectoryAndFiles() throws {
        try withTemporaryDirectory { temporary in
            let directory = temporary.appending("nested/deeper/env")
            #expect(!FileManager.default.fileExists(atPath: directory.path))
            let environment = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            defer { environment.close() }
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory))
            #expect(isDirectory.boolValue)
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path))
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("lock.mdb").path))
            #expect(environment.directory == directory)
            #expect(environment.configuration == testConfiguration())
            #expect(!environment.isClosed)
            #expect(environment.table(named: "a").name == "a")
            #expect(environment.table(named: "b").description == "b")
            #expect(environment.table(named: "a") != environment.table(named: "b"))
        }
    }

    @Test func openingTheSameDirectoryTwiceReturnsTheSameInstance() throws {
        try withTemporaryDirectory { temporary in
            let directory = temporary.appending("env")
            let first = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            let second = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            #expect(first === second)
            // A differently spelled path to the same directory is the same environment.
            let third = try LMDBStore.open(
                directory: temporary.url.appendingPathComponent("./env/../env"), configuration: testConfiguration())
            #expect(first === third)
            third.close()

            try first.writeAndWait { try $0.put([1], forKey: [1], in: first.table(named: "a")) }
            first.close()
            // One close of two opens leaves it open.
            #expect(!second.isClosed)
            #expect(try second.read { try $0.value(forKey: [1], in: second.table(named: "a")) } == [1])
            try second.writeAndWait { try $0.put([2], forKey: [2], in: second.table(named: "a")) }
            second.close()
            #expect(first.isClosed)
            #expect(second.isClosed)
        }
    }

    @Test func concurrentOpensOfOneDirectoryShareOneEnvironment() async throws {
        try await withTemporaryDirectory { temporary in
            let directory = temporary.appending("env")
            let opened = Mutex<[LMDBStore]>([])
            let failures = FailureLog()
            await runOnThreads(8) { _ in
                do {
                    let environment = try LMDBStore.open(directory: directory, configuration: testConfiguration())
                    opened.withLock { $0.append(environment) }
                } catch {
                    failures.record("open failed: \(error)")
                }
            }
            failures.report()
            let environments = opened.withLock { $0 }
            #expect(environments.count == 8)
            guard let first = environments.first else { return }
            #expect(environments.allSatisfy { $0 === first })
            await runOnThreads(7) { i in environments[i].close() }
            #expect(!first.isClosed)
            try first.writeAndWait { try $0.put([1], forKey: [1], in: first.table(named: "a")) }
            environments[7].close()
            #expect(first.isClosed)
        }
    }

    @Test func closeFinishesTheQueuedWrites() async throws {
        try await withTemporaryDirectory { temporary in
            let directory = temporary.appending("env")
            let environment = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            let a = environment.table(named: "a")
            let gate = WriterGate()
            try gate.hold(environment)
            let succeeded = Counter()
            for i in 0..<50 {
                try environment.enqueueWrite(
                    { try $0.put([UInt8(i)], forKey: key(i), in: a) },
                    completion: { result in
                        if case .success = result { succeeded.increment() }
                    })
            }
            // close() waits for the writer, which waits for the gate. Both sides run
            // on their own threads: nothing here needs the cooperative pool, which
            // other tests' close() calls may be holding.
            let closing = Flag()
            await runOnThreads(2) { thread in
                if thread == 0 {
                    closing.set()
                    environment.close()
                } else {
                    while !closing.isSet { sched_yield() }
                    Thread.sleep(forTimeInterval: 0.01)
                    gate.open()
                }
            }
            #expect(environment.isClosed)
            #expect(succeeded.value == 50)

            let reopened = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            defer { reopened.close() }
            #expect(try reopened.read { try $0.count(of: reopened.table(named: "a")) } == 50)
        }
    }

    @Test func closingOneEnvironmentDoesNotHoldUpOpeningAnother() async throws {
        // An environment whose close waits for a long queue of writes must not stop
        // other directories from opening (or closing) meanwhile: async code that
        // closes environments on the cooperative pool would otherwise stall, and a
        // write or completion that opens another environment would deadlock.
        try await withTemporaryDirectory { temporary in
            let first = try LMDBStore.open(directory: temporary.appending("first"), configuration: testConfiguration())
            let gate = WriterGate()
            try gate.hold(first)
            let closing = Flag()
            let secondOpened = DispatchSemaphore(value: 0)
            let failures = FailureLog()
            await runOnThreads(3) { thread in
                switch thread {
                case 0:
                    closing.set()
                    first.close()  // waits for the held writer
                case 1:
                    while !closing.isSet || !first.isClosed { sched_yield() }
                    Thread.sleep(forTimeInterval: 0.02)  // let close() reach the writer
                    do {
                        let second = try LMDBStore.open(
                            directory: temporary.appending("second"), configuration: testConfiguration())
                        second.close()
                    } catch {
                        failures.record("opening the second environment failed: \(error)")
                    }
                    secondOpened.signal()
                default:
                    // A generous bound, so that a failure shows instead of a hang.
                    if secondOpened.wait(timeout: .now() + 5) == .timedOut {
                        failures.record("opening another directory waited for the first environment's close")
                    }
                    gate.open()
                }
            }
            failures.report()
            #expect(first.isClosed)
        }
    }

    @Test func reopeningADirectoryWhileItsCloseFinishesWaitsForTheClose() async throws {
        try await withTemporaryDirectory { temporary in
            let directory = temporary.appending("env")
            let first = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            let a = first.table(named: "a")
            let gate = WriterGate()
            try gate.hold(first)
            for i in 0..<50 {
                try first.enqueueWrite({ try $0.put([UInt8(i)], forKey: key(i), in: a) }, completion: { _ in })
            }
            let failures = FailureLog()
            let seen = Mutex<(sameInstance: Bool, count: Int)?>(nil)
            await runOnThreads(3) { thread in
                switch thread {
                case 0:
                    first.close()  // waits for the held writer and its 50 queued writes
                case 1:
                    while !first.isClosed { sched_yield() }
                    do {
                        // Must wait for the close, then open the files afresh.
                        let second = try LMDBStore.open(directory: directory, configuration: testConfiguration())
                        defer { second.close() }
                        let count = try second.read { try $0.count(of: second.table(named: "a")) }
                        seen.withLock { $0 = (second === first, count) }
                    } catch {
                        failures.record("reopening failed: \(error)")
                    }
                default:
                    while !first.isClosed { sched_yield() }
                    Thread.sleep(forTimeInterval: 0.05)
                    gate.open()
                }
            }
            failures.report()
            let result = seen.withLock { $0 }
            #expect(result?.sameInstance == false)
            #expect(result?.count == 50, "the reopened environment sees every write the close finished")
        }
    }

    @Test func askingForATableNotInTheConfigurationStopsTheProgram() async throws {
        // The child processes die on a precondition, so the parent owns the directory.
        try await withTemporaryDirectory { temporary in
            let path = temporary.url.path
            await #expect(processExitsWith: .failure) { [path = path as String] in
                let environment = try LMDBStore.open(
                    directory: URL(fileURLWithPath: path).appendingPathComponent("one"), configuration: testConfiguration())
                _ = environment.table(named: "c")
            }
            await #expect(processExitsWith: .failure) { [path = path as String] in
                let directory = URL(fileURLWithPath: path).appendingPathComponent("two")
                _ = try LMDBStore.open(directory: directory, configuration: testConfiguration())
                var more = testConfiguration()
                more.tables.append("c")
                _ = try LMDBStore.open(directory: directory, configuration: more)
            }
        }
    }

    @Test func callsAfterTheLastCloseThrowEnvironmentClosed() async throws {
        try await withTemporaryDirectory { temporary in
            let directory = temporary.appending("env")
            let environment = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            let a = environment.table(named: "a")
            try environment.writeAndWait { try $0.put([1], forKey: [1], in: a) }
            environment.close()
            #expect(environment.isClosed)

            #expect(throws: StorageError.closed) { try environment.read { try $0.count(of: a) } }
            #expect(throws: StorageError.closed) { try environment.writeAndWait { try $0.put([2], forKey: [2], in: a) } }
            await #expect(throws: StorageError.closed) { try await environment.write { try $0.put([2], forKey: [2], in: a) } }
            #expect(throws: StorageError.closed) { try environment.enqueueWrite({ _ in }, completion: { _ in }) }
            #expect(throws: StorageError.closed) { try environment.statistics() }
            // Extra closes are harmless.
            environment.close()
            #expect(environment.isClosed)

            // Opening again gives a new, working environment with the data kept.
            let reopened = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            defer { reopened.close() }
            #expect(reopened !== environment)
            #expect(try reopened.read { try $0.value(forKey: [1], in: reopened.table(named: "a")) } == [1])
            // The old instance stays closed.
            #expect(throws: StorageError.closed) { try environment.read { _ in 0 } }
        }
    }

    @Test func syncAndCopyAfterTheLastCloseThrowEnvironmentClosed() async throws {
        // Run in a child process: on a closed environment these calls reach a freed
        // LMDB handle unless they check for the close first. Exit codes: 2 sync
        // returned, 3 sync threw another error, 4 copy returned, 5 copy threw
        // another error. The parent owns the directory, as the child may die.
        try await withTemporaryDirectory { temporary in
            let path = temporary.url.path
            await #expect(processExitsWith: .success) { [path = path as String] in
                let root = URL(fileURLWithPath: path)
                let environment = try LMDBStore.open(
                    directory: root.appendingPathComponent("env"), configuration: testConfiguration())
                environment.close()
                do {
                    try environment.sync()
                    exit(2)
                } catch StorageError.closed {
                } catch {
                    exit(3)
                }
                do {
                    try environment.copy(to: root.appendingPathComponent("copy"))
                    exit(4)
                } catch StorageError.closed {
                } catch {
                    exit(5)
                }
            }
        }
    }

    @Test func openingWithoutCreatingMissingTablesFailsAndLeavesTheFileAlone() throws {
        try withTemporaryDirectory { temporary in
            let directory = temporary.appending("env")
            do {
                let environment = try LMDBStore.open(directory: directory, configuration: testConfiguration())
                defer { environment.close() }
                try environment.writeAndWait { try $0.put([1], forKey: [1], in: environment.table(named: "b")) }
            }
            let before = try Data(contentsOf: directory.appendingPathComponent("data.mdb"))

            var missing = testConfiguration()
            missing.tables = ["a", "c"]
            missing.createsMissingTables = false
            #expect(throws: StorageError.notFound) { try LMDBStore.open(directory: directory, configuration: missing) }
            #expect(try Data(contentsOf: directory.appendingPathComponent("data.mdb")) == before)

            // The tables that exist open without being created.
            var existing = testConfiguration()
            existing.tables = ["b"]
            existing.createsMissingTables = false
            let environment = try LMDBStore.open(directory: directory, configuration: existing)
            defer { environment.close() }
            #expect(try environment.read { try $0.value(forKey: [1], in: environment.table(named: "b")) } == [1])
        }
    }

    @Test(arguments: [100, 4096, 65536])
    func aGarbageDataFileThrowsIncompatible(size: Int) throws {
        try withTemporaryDirectory("garbage-\(size)") { temporary in
            let directory = temporary.appending("env")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var rng = SplitMix64(seed: UInt64(size))
            let garbage = Data(rng.bytes(count: size))
            let dataFile = directory.appendingPathComponent("data.mdb")
            try garbage.write(to: dataFile)

            let error = #expect(throws: StorageError.self) {
                try LMDBStore.open(directory: directory, configuration: testConfiguration())
            }
            #expect(error == .incompatible, "\(String(describing: error))")
            // The garbage is left alone.
            #expect(try Data(contentsOf: dataFile) == garbage)

            // The failed open left nothing behind: once the garbage is gone the
            // directory opens normally.
            try FileManager.default.removeItem(at: dataFile)
            let environment = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            defer { environment.close() }
            #expect(try environment.read { try $0.count(of: environment.table(named: "a")) } == 0)
        }
    }

    // MARK: - Persistence

    @Test func closeThenReopenKeepsEveryByte() throws {
        try withTemporaryDirectory { temporary in
            let directory = temporary.appending("env")
            var rng = SplitMix64(seed: 0xF06_0001)
            var modelA: [[UInt8]: [UInt8]] = [:]
            var modelB: [[UInt8]: [UInt8]] = [:]
            for _ in 0..<3000 {
                let key = rng.bytes(lengths: 1...64)
                let value = rng.bytes(lengths: 0...300)
                if Bool.random(using: &rng) { modelA[key] = value } else { modelB[key] = value }
            }
            // Some very large values (overflow pages) and the largest key.
            modelA[Array(repeating: 0xFF, count: 511)] = rng.bytes(count: 100_000)
            modelB[[0]] = rng.bytes(count: 20_000)

            do {
                let environment = try LMDBStore.open(directory: directory, configuration: testConfiguration())
                defer { environment.close() }
                let a = environment.table(named: "a")
                let b = environment.table(named: "b")
                // Several transactions, with some overwrites and deletes on the way.
                let pairsA = Array(modelA), pairsB = Array(modelB)
                for chunk in stride(from: 0, to: max(pairsA.count, pairsB.count), by: 500) {
                    let sliceA = pairsA[min(chunk, pairsA.count)..<min(chunk + 500, pairsA.count)]
                    let sliceB = pairsB[min(chunk, pairsB.count)..<min(chunk + 500, pairsB.count)]
                    try environment.writeAndWait { txn throws in
                        for (key, value) in sliceA {
                            try txn.put([0xAB], forKey: key, in: a)
                            try txn.put(value, forKey: key, in: a)
                        }
                        for (key, value) in sliceB { try txn.put(value, forKey: key, in: b) }
                        try txn.put([1, 2, 3], forKey: Array(repeating: 0xEE, count: 65), in: b)
                    }
                }
                _ = try environment.writeAndWait { txn throws in
                    // Keys of 65 bytes never collide with the random ones (1...64).
                    try txn.delete(Array(repeating: 0xEE, count: 65), in: b)
                }
                // Before closing, the data reads back.
                #expect(try environment.read { try $0.entries(a) } == sortedEntries(modelA))
            }

            let environment = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            defer { environment.close() }
            let (entriesA, entriesB) = try environment.read { txn throws in
                (try txn.entries(environment.table(named: "a")), try txn.entries(environment.table(named: "b")))
            }
            #expect(entriesA.count == modelA.count)
            #expect(entriesB.count == modelB.count)
            #expect(entriesA == sortedEntries(modelA))
            #expect(entriesB == sortedEntries(modelB))
            // Point reads agree with the scan.
            try environment.read { txn throws in
                for (key, value) in modelA {
                    #expect(try txn.value(forKey: key, in: environment.table(named: "a")) == value)
                }
            }
        }
    }

    @Test(arguments: LMDBStore.Durability.allCases)
    func closeAndReopenWithoutWritingLeavesTheDataFileUnchanged(durability: LMDBStore.Durability) throws {
        try withTemporaryDirectory("unchanged-\(durability)") { temporary in
            let directory = temporary.appending("env")
            let dataFile = directory.appendingPathComponent("data.mdb")
            var configuration = testConfiguration()
            configuration.durability = durability
            var rng = SplitMix64(seed: 42)
            var model: [[UInt8]: [UInt8]] = [:]
            for _ in 0..<500 { model[rng.bytes(lengths: 1...20)] = rng.bytes(lengths: 0...200) }

            do {
                let environment = try LMDBStore.open(directory: directory, configuration: configuration)
                defer { environment.close() }
                try environment.writeAndWait { txn throws in
                    for (key, value) in model { try txn.put(value, forKey: key, in: environment.table(named: "a")) }
                }
            }
            let before = try Data(contentsOf: dataFile)

            do {
                // Reopen, read (reads only), close.
                let environment = try LMDBStore.open(directory: directory, configuration: configuration)
                defer { environment.close() }
                #expect(try environment.read { try $0.entries(environment.table(named: "a")) } == sortedEntries(model))
                _ = try environment.statistics()
            }
            let after = try Data(contentsOf: dataFile)
            #expect(before.count == after.count)
            #expect(before == after, "data.mdb changed across a close/reopen that wrote nothing")
        }
    }

    // MARK: - Statistics

    @Test func statisticsAreSane() throws {
        try withTestEnvironment { environment, a, _ in
            let initial = try environment.statistics()
            #expect(initial.pageSize >= 512)
            #expect(initial.pageSize & (initial.pageSize - 1) == 0, "page size \(initial.pageSize) is a power of two")
            #expect(initial.mapSize >= environment.configuration.initialMapSize)
            #expect(initial.mapSize % initial.pageSize == 0)
            #expect(initial.fileSize > 0)
            #expect(initial.fileSize <= initial.mapSize)
            #expect(initial.pagesUsed >= 2, "two meta pages at least")
            #expect(initial.pagesUsed * initial.pageSize <= initial.fileSize)
            #expect(initial.commits == 0)
            #expect(initial.writeRequests == 0)

            try environment.writeAndWait { txn throws in
                for i in 0..<1000 { try txn.put(Array(repeating: UInt8(i & 0xFF), count: 100), forKey: key(i), in: a) }
            }
            let afterOne = try environment.statistics()
            #expect(afterOne.lastTransactionID == initial.lastTransactionID + 1)
            #expect(afterOne.commits == 1)
            #expect(afterOne.writeRequests == 1)
            #expect(afterOne.pagesUsed > initial.pagesUsed)
            #expect(afterOne.pagesUsed * afterOne.pageSize > 1000 * 100, "the data takes at least its own size")
            #expect(afterOne.pagesUsed * afterOne.pageSize <= afterOne.fileSize)
            #expect(afterOne.fileSize <= afterOne.mapSize)
            #expect(afterOne.mapSize == initial.mapSize)
            #expect(afterOne.pageSize == initial.pageSize)

            // A failed write is a request but commits nothing new to the file.
            #expect(throws: TestError(id: 1)) { try environment.writeAndWait { _ in throw TestError(id: 1) } }
            let afterFailure = try environment.statistics()
            #expect(afterFailure.lastTransactionID == afterOne.lastTransactionID)
            #expect(afterFailure.writeRequests == 2)

            try environment.sync()
        }
    }

    // MARK: - Copying

    @Test(arguments: [true, false])
    func copyProducesAnEnvironmentWithTheSameContents(compact: Bool) throws {
        try withTemporaryDirectory("copy-\(compact)") { temporary in
            let source = try LMDBStore.open(directory: temporary.appending("source"), configuration: testConfiguration())
            defer { source.close() }
            let a = source.table(named: "a"), b = source.table(named: "b")
            var rng = SplitMix64(seed: compact ? 7 : 8)
            var modelA: [[UInt8]: [UInt8]] = [:]
            var modelB: [[UInt8]: [UInt8]] = [:]
            for _ in 0..<800 {
                modelA[rng.bytes(lengths: 1...32)] = rng.bytes(lengths: 0...500)
                modelB[rng.bytes(lengths: 1...32)] = rng.bytes(lengths: 0...50)
            }
            try source.writeAndWait { txn throws in
                for (key, value) in modelA { try txn.put(value, forKey: key, in: a) }
                for (key, value) in modelB { try txn.put(value, forKey: key, in: b) }
                // Garbage to free, so that a compacting copy has something to drop.
                for i in 0..<500 { try txn.put(Array(repeating: 1, count: 1000), forKey: [0xFF] + key(i), in: a) }
            }
            try source.writeAndWait { txn throws in
                _ = try txn.deleteAll(in: a, range: .prefix([0xFF]))
                for (key, value) in modelA where key.first == 0xFF { try txn.put(value, forKey: key, in: a) }
            }

            let destination = temporary.appending("copies/copy")
            try source.copy(to: destination, compact: compact)
            // The source still works after the copy.
            try source.writeAndWait { try $0.put([9], forKey: Array(repeating: 9, count: 33), in: b) }

            let copy = try LMDBStore.open(directory: destination, configuration: testConfiguration())
            defer { copy.close() }
            #expect(copy !== source)
            let (entriesA, entriesB) = try copy.read { txn throws in
                (try txn.entries(copy.table(named: "a")), try txn.entries(copy.table(named: "b")))
            }
            #expect(entriesA == sortedEntries(modelA))
            #expect(entriesB == sortedEntries(modelB))
            if compact {
                #expect(try copy.statistics().fileSize <= source.statistics().fileSize)
            }
        }
    }
}
