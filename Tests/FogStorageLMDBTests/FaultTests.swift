import FogStorage
import FogStorageLMDB
import Foundation
import Synchronization
import Testing

/// Faults an environment meets: more readers than reader slots, processes that die
/// holding slots, a data file cut short, several opens asking for different durabilities.
@Suite(.serialized) struct FaultTests {
    static var helper: URL { HelperProcess.executable("FogTestHelper") }

    static func milliseconds() -> Int { Int(DispatchTime.now().uptimeNanoseconds / 1_000_000) }

    // MARK: - Reader slots

    @Test func moreConcurrentReadsThanReaderSlotsAllSucceed() async throws {
        try await withTestEnvironment { environment, a, _ in
            try environment.writeAndWait { try $0.put([7], forKey: [1], in: a) }
            // 1,200 threads read at once, more than the 1,024 slots of the lock file: each
            // holds its snapshot until all 1,200 are inside a read, or until no other read
            // has begun for 50 ms.
            let failures = FailureLog()
            let wrong = Atomic(0)
            let inside = Atomic(0)
            let mostInside = Atomic(0)
            let lastEntry = Atomic(Self.milliseconds())
            await runOnThreads(1_200) { _ in
                do {
                    let value = try environment.read { txn -> [UInt8]? in
                        let now = inside.add(1, ordering: .relaxed).newValue
                        mostInside.max(now, ordering: .relaxed)
                        lastEntry.store(Self.milliseconds(), ordering: .relaxed)
                        while inside.load(ordering: .relaxed) < 1_200,
                            Self.milliseconds() - lastEntry.load(ordering: .relaxed) < 50
                        {
                            usleep(500)
                        }
                        defer { inside.subtract(1, ordering: .relaxed) }
                        return try txn.value(forKey: [1], in: a)
                    }
                    if value != [7] { wrong.add(1, ordering: .relaxed) }
                } catch {
                    failures.record("read failed: \(error)")
                }
            }
            #expect(failures.all.isEmpty, "\(failures.all.count) of 1,200 reads failed")
            failures.report()
            #expect(wrong.load(ordering: .relaxed) == 0)
            #expect(mostInside.load(ordering: .relaxed) <= environment.configuration.maximumConcurrentReads)

            // The process keeps at most maximumConcurrentReads slots: another process can
            // still take all the others.
            let others = 1_024 - environment.configuration.maximumConcurrentReads
            let child = try HelperProcess(Self.helper, ["hold-readers", environment.directory.path, "\(others)"])
            defer { child.kill() }
            #expect(try await child.waitForLine(startingWith: "holding") == "holding \(others)")
        }
    }

    @Test func nestedReadsDoNotWaitForTheirOwnPermits() throws {
        var configuration = testConfiguration()
        configuration.maximumConcurrentReads = 1
        try withTestEnvironment(configuration: configuration) { environment, a, _ in
            try environment.writeAndWait { try $0.put([7], forKey: [1], in: a) }
            let inner = try environment.read { _ in
                try environment.read { try $0.value(forKey: [1], in: a) }
            }
            #expect(inner == [7])
        }
    }

    @Test func slotsOfAKilledProcessAreClearedWhenTheStoreOpens() async throws {
        try await withTemporaryDirectory { temporary in
            let directory = temporary.appending("env")
            let first = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            try first.writeAndWait { try $0.put([7], forKey: [1], in: first.table(named: "a")) }
            first.close()

            // One process keeps the store open (so the next open does not reset the lock
            // file), another takes every reader slot and is killed without giving them back.
            let keeper = try HelperProcess(Self.helper, ["hold-readers", directory.path, "0"])
            defer { keeper.kill() }
            #expect(try await keeper.waitForLine(startingWith: "holding") == "holding 0")
            let filler = try HelperProcess(Self.helper, ["hold-readers", directory.path, "all"])
            #expect(try await filler.waitForLine(startingWith: "holding") == "holding 1024")

            // While the filler lives, a read fails with a retryable error.
            let blocked = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            #expect {
                try blocked.read { try $0.value(forKey: [1], in: blocked.table(named: "a")) }
            } throws: { error in
                guard case StorageError.temporarilyUnavailable(let message) = error else { return false }
                return message.contains("reader slots")
            }
            blocked.close()

            filler.kill()
            let reopened = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            defer { reopened.close() }
            #expect(try reopened.read { try $0.value(forKey: [1], in: reopened.table(named: "a")) } == [7])
        }
    }

    // MARK: - A map that cannot grow

    @Test func aMapThatCannotGrowFailsTheWriteAndLaterCallsNotTheProcess() async throws {
        try await withTemporaryDirectory { temporary in
            let directory = temporary.appending("env")
            // In a process of its own: it limits its address space so that the map cannot
            // grow past 64 MiB.
            let child = try HelperProcess(Self.helper, ["grow-under-limit", directory.path])
            #expect(try await child.waitForLine(startingWith: "closed") == "closed")
            #expect(child.wait() == 0, "\(child.printed)")
            let lines = child.lines
            #expect(lines.contains { $0.hasPrefix("write failed:") && $0.contains("cannot grow") }, "\(child.printed)")
            // LMDB unmapped the old map: the read after it throws instead of crashing.
            #expect(lines.contains { $0.hasPrefix("read failed:") }, "\(child.printed)")

            // Opened again (without the limit), the store has what was committed.
            let environment = try LMDBStore.open(directory: directory, configuration: .init(tables: ["a"], durability: .none))
            defer { environment.close() }
            #expect(try environment.read { try $0.value(forKey: [0, 0, 0, 0], in: environment.table(named: "a")) } == [1])
            #expect(try environment.read { try $0.count(of: environment.table(named: "a")) } > 10)
        }
    }

    // MARK: - A data file cut short

    @Test func aTruncatedDataFileFailsToOpenWithATypedError() throws {
        try withTemporaryDirectory { temporary in
            let original = temporary.appending("original")
            let pageSize: Int
            let pages: Int
            do {
                let environment = try LMDBStore.open(directory: original, configuration: testConfiguration())
                defer { environment.close() }
                let a = environment.table(named: "a")
                try environment.writeAndWait { txn in
                    for i in 0..<3_000 { try txn.put([UInt8](repeating: UInt8(i & 0xFF), count: 200), forKey: key(i), in: a) }
                }
                let statistics = try environment.statistics()
                pageSize = statistics.pageSize
                pages = statistics.pagesUsed
            }
            let data = try Data(contentsOf: original.appendingPathComponent("data.mdb"))
            #expect(pages > 20)
            var cuts = [2, 3, 4, pages / 4, pages / 2, pages - 2, pages - 1]
            cuts = Array(Set(cuts.filter { $0 >= 2 && $0 < pages })).sorted()
            for cut in cuts {
                let copy = temporary.appending("cut-\(cut)")
                try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
                try data.prefix(cut * pageSize).write(to: copy.appendingPathComponent("data.mdb"))
                #expect {
                    let environment = try LMDBStore.open(directory: copy, configuration: testConfiguration())
                    environment.close()
                } throws: { error in
                    guard case StorageError.corrupted(let message) = error else { return false }
                    return message.contains("cut short") && message.contains("\(cut * pageSize) bytes")
                }
            }
            // Cut inside the meta pages: not an LMDB file any more.
            for cut in [pageSize, pageSize + 100] {
                let copy = temporary.appending("meta-\(cut)")
                try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
                try data.prefix(cut).write(to: copy.appendingPathComponent("data.mdb"))
                #expect(throws: StorageError.self) {
                    let environment = try LMDBStore.open(directory: copy, configuration: testConfiguration())
                    environment.close()
                }
            }
            // The whole file still opens.
            let copy = temporary.appending("whole")
            try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
            try data.write(to: copy.appendingPathComponent("data.mdb"))
            let environment = try LMDBStore.open(directory: copy, configuration: testConfiguration())
            defer { environment.close() }
            #expect(try environment.read { try $0.count(of: environment.table(named: "a")) } == 3_000)
        }
    }

    // MARK: - Durability of several opens

    @Test func commitsGetTheStrongestDurabilityAskedFor() throws {
        try withTemporaryDirectory { temporary in
            let directory = temporary.appending("env")
            var weak = testConfiguration()
            weak.durability = .none
            var strong = testConfiguration()
            strong.durability = .durable
            var middle = testConfiguration()
            middle.durability = .relaxed

            let first = try LMDBStore.open(directory: directory, configuration: weak)
            #expect(first.durability == .none)
            let second = try LMDBStore.open(directory: directory, configuration: middle)
            #expect(second.durability == .relaxed)
            let third = try LMDBStore.open(directory: directory, configuration: strong)
            #expect(third.durability == .durable)
            // A weaker open does not weaken it.
            let fourth = try LMDBStore.open(directory: directory, configuration: weak)
            #expect(fourth.durability == .durable)
            try first.writeAndWait { try $0.put([1], forKey: [1], in: first.table(named: "a")) }
            for environment in [first, second, third, fourth] { environment.close() }

            // Once closed, the next open starts again from what it asks.
            let again = try LMDBStore.open(directory: directory, configuration: weak)
            defer { again.close() }
            #expect(again.durability == .none)
            #expect(try again.read { try $0.value(forKey: [1], in: again.table(named: "a")) } == [1])
        }
    }

    @Test func openingAgainWithOtherTablesThrows() throws {
        try withTemporaryDirectory { temporary in
            let directory = temporary.appending("env")
            let first = try LMDBStore.open(directory: directory, configuration: testConfiguration())
            defer { first.close() }
            var other = testConfiguration()
            other.tables.append("c")
            #expect(throws: StorageError.self) { _ = try LMDBStore.open(directory: directory, configuration: other) }
            // The failed open took no share of the environment.
            #expect(!first.isClosed)
        }
    }
}
