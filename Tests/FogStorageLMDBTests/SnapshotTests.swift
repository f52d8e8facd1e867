import FogStorage
import FogStorageLMDB
import Foundation
import Synchronization
import Testing

@Suite struct SnapshotTests {
    static let keyCount = 50
    static let sumKey: [UInt8] = Array("sum".utf8)

    /// Rewrites every key to `generation` and the sum key to their sum, in one
    /// transaction.
    static func writeGeneration(_ generation: UInt64, _ txn: LMDBWriteTransaction, _ table: Table) throws {
        for i in 0..<keyCount { try txn.put(encode(generation), forKey: key(i), in: table) }
        try txn.put(encode(generation * UInt64(keyCount)), forKey: sumKey, in: table)
    }

    /// Reads every key in one snapshot and checks that they agree; returns the
    /// generation seen.
    static func readGeneration(_ environment: LMDBStore, _ table: Table, useScan: Bool) throws -> Result<UInt64, Inconsistency> {
        try environment.read { txn throws in
            var values: [UInt64] = []
            if useScan {
                // key(i) is 4 bytes starting with 0x00; "sum" starts with "s".
                try txn.scan(table, range: .prefix([0])) { _, value in
                    values.append(decode(value))
                    return true
                }
            } else {
                for i in 0..<keyCount {
                    guard let value = try txn.value(forKey: key(i), in: table) else { return .failure(.init(values: values)) }
                    values.append(decode(value))
                }
            }
            guard let sum = try txn.value(forKey: sumKey, in: table).map(decode) else { return .failure(.init(values: values)) }
            guard values.count == keyCount, let first = values.first, values.allSatisfy({ $0 == first }),
                sum == first * UInt64(keyCount)
            else { return .failure(.init(values: values + [sum])) }
            return .success(first)
        }
    }

    struct Inconsistency: Error, CustomStringConvertible {
        var values: [UInt64]
        var description: String { "mixed snapshot: \(values)" }
    }

    @Test func readerThreadsSeeWholeGenerationsWhileAWriterRewritesTheKeys() async throws {
        try await withTestEnvironment { environment, a, _ in
            try environment.writeAndWait { try Self.writeGeneration(0, $0, a) }
            let generations: UInt64 = 300
            let readers = 3, iterations = 1500
            let failures = FailureLog()
            let distinct = Mutex(Set<UInt64>())

            async let writer: Void = {
                for generation in 1...generations {
                    try await environment.write { try Self.writeGeneration(generation, $0, a) }
                }
            }()
            await runOnThreads(readers) { reader in
                var last: UInt64 = 0
                var seen = Set<UInt64>()
                for iteration in 0..<iterations {
                    do {
                        switch try Self.readGeneration(environment, a, useScan: (iteration + reader) % 2 == 0) {
                        case .success(let generation):
                            if generation < last {
                                failures.record("reader \(reader): generation went back from \(last) to \(generation)")
                            }
                            last = generation
                            seen.insert(generation)
                        case .failure(let inconsistency):
                            failures.record("reader \(reader) iteration \(iteration): \(inconsistency)")
                        }
                    } catch {
                        failures.record("reader \(reader) iteration \(iteration): \(error)")
                    }
                }
                distinct.withLock { $0.formUnion(seen) }
            }
            try await writer
            failures.report()
            #expect(try Self.readGeneration(environment, a, useScan: false).get() == generations)
            #expect(distinct.withLock { !$0.isEmpty })
        }
    }

    @Test func readerTasksSeeWholeGenerationsWhileGroupedWritersRace() async throws {
        // Several writers at once, so that their rewrites are committed in groups
        // of nested transactions; readers are tasks rather than threads.
        try await withTestEnvironment { environment, a, _ in
            try environment.writeAndWait { try Self.writeGeneration(0, $0, a) }
            let writers = 4, perWriter = 60
            let readers = 3, iterations = 800
            let failures = FailureLog()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for w in 0..<writers {
                    group.addTask {
                        for n in 0..<perWriter {
                            // Distinct generations for every write of every writer.
                            let generation = UInt64(1 + n * writers + w)
                            do {
                                try await environment.write { txn in
                                    try Self.writeGeneration(generation, txn, a)
                                    // Every few writes, one that fails after rewriting everything.
                                    if n % 10 == 3 {
                                        try Self.writeGeneration(generation + 1_000_000, txn, a)
                                        throw TestError(id: Int(generation))
                                    }
                                }
                            } catch let error as TestError where error.id == Int(generation) {
                                // Expected.
                            }
                        }
                    }
                }
                for r in 0..<readers {
                    group.addTask {
                        for iteration in 0..<iterations {
                            switch try Self.readGeneration(environment, a, useScan: iteration % 2 == r % 2) {
                            case .success(let generation):
                                if generation >= 1_000_000 {
                                    failures.record("reader \(r) saw the failed generation \(generation)")
                                }
                            case .failure(let inconsistency):
                                failures.record("reader \(r) iteration \(iteration): \(inconsistency)")
                            }
                            if iteration % 16 == 0 { await Task.yield() }
                        }
                    }
                }
                try await group.waitForAll()
            }
            failures.report()
            // Whatever the last committed generation, it is whole.
            let final = try Self.readGeneration(environment, a, useScan: true)
            #expect(throws: Never.self) { try final.get() }
        }
    }
}
