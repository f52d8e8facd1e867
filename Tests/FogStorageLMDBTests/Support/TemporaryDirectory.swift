@_exported import FogKitTesting
import FogStorage
import FogStorageLMDB
import Foundation
import Synchronization
import Testing

// MARK: - Temporary directories

// `TemporaryDirectory`, `withTemporaryDirectory`, `SplitMix64` and `Flag` come from
// FogKitTesting, re-exported for every file of this target.

// MARK: - Test environments

/// The configuration tests use unless they test something else: tables "a" and
/// "b", no fsync.
func testConfiguration(
    initialMapSize: Int = 64 << 20, maximumGroupSize: Int = 128
) -> LMDBStore.Configuration {
    LMDBStore.Configuration(
        tables: ["a", "b"], initialMapSize: initialMapSize, durability: .none, maximumGroupSize: maximumGroupSize)
}

/// Opens an environment with tables "a" and "b" in a fresh temporary directory,
/// runs `body`, closes the environment and removes the directory.
func withTestEnvironment<R>(
    _ label: String = #function,
    configuration: LMDBStore.Configuration = testConfiguration(),
    _ body: (LMDBStore, Table, Table) throws -> R
) throws -> R {
    try withTemporaryDirectory(label) { directory in
        let environment = try LMDBStore.open(directory: directory.appending("env"), configuration: configuration)
        defer { environment.close() }
        return try body(environment, environment.table(named: "a"), environment.table(named: "b"))
    }
}

/// Opens an environment with tables "a" and "b" in a fresh temporary directory,
/// runs `body`, closes the environment and removes the directory.
func withTestEnvironment<R>(
    _ label: String = #function,
    configuration: LMDBStore.Configuration = testConfiguration(),
    isolation: isolated (any Actor)? = #isolation,
    _ body: (LMDBStore, Table, Table) async throws -> R
) async throws -> R {
    let directory = try TemporaryDirectory(label)
    defer { directory.remove() }
    let environment = try LMDBStore.open(directory: directory.appending("env"), configuration: configuration)
    defer { environment.close() }
    return try await body(environment, environment.table(named: "a"), environment.table(named: "b"))
}

// MARK: - Deterministic randomness

extension RandomNumberGenerator {
    /// `count` random bytes.
    mutating func bytes(count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            var offset = 0
            while offset < count {
                let word = next().littleEndian
                let n = min(8, count - offset)
                withUnsafeBytes(of: word) { raw.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: n) }
                offset += n
            }
            initialized = count
        }
    }

    /// Random bytes of a random length in `lengths`.
    mutating func bytes(lengths: ClosedRange<Int>) -> [UInt8] {
        bytes(count: Int.random(in: lengths, using: &self))
    }

    /// A random byte string of a length in `lengths` over a small alphabet rich in
    /// edge bytes (0x00, 0xFF...), so that shared prefixes and boundary cases are
    /// common.
    mutating func edgyBytes(lengths: ClosedRange<Int>) -> [UInt8] {
        let alphabet: [UInt8] = [0x00, 0x01, 0x41, 0x7F, 0x80, 0xFE, 0xFF]
        return (0..<Int.random(in: lengths, using: &self)).map { _ in alphabet.randomElement(using: &self)! }
    }
}

// MARK: - Keys and values

/// A 4-byte big-endian key, so that byte order is integer order.
func key(_ i: Int) -> [UInt8] {
    withUnsafeBytes(of: UInt32(i).bigEndian) { Array($0) }
}

/// An 8-byte big-endian encoding of `value`.
func encode(_ value: UInt64) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
}

/// Decodes ``encode(_:)``.
func decode(_ bytes: some Collection<UInt8>) -> UInt64 {
    precondition(bytes.count == 8)
    return bytes.reduce(0) { $0 << 8 | UInt64($1) }
}

/// Byte order (`memcmp`, shorter first on a tie).
func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a.lexicographicallyPrecedes(b)
}

/// Whether `key` lies within `range`, by the model's byte order.
func contains(_ range: ScanRange, _ key: [UInt8]) -> Bool {
    if let lower = range.lower {
        if range.lowerInclusive ? precedes(key, lower) : !precedes(lower, key) { return false }
    }
    if let upper = range.upper {
        if range.upperInclusive ? precedes(upper, key) : !precedes(key, upper) { return false }
    }
    return true
}

/// A key/value pair copied out of a table.
struct Entry: Hashable, Sendable, CustomStringConvertible {
    var key: [UInt8]
    var value: [UInt8]

    var description: String { "\(key) = \(value.count) bytes" }
}

extension LMDBReadTransaction {
    /// Every entry of `table` in `range`, copied out, in scan order.
    func entries(_ table: Table, range: ScanRange = .all, reverse: Bool = false) throws -> [Entry] {
        var result: [Entry] = []
        try scan(table, range: range, reverse: reverse) { key, value in
            result.append(Entry(key: Array(key), value: Array(value)))
            return true
        }
        return result
    }

    /// The keys of `table` in `range`, in scan order.
    func keys(_ table: Table, range: ScanRange = .all, reverse: Bool = false) throws -> [[UInt8]] {
        try entries(table, range: range, reverse: reverse).map(\.key)
    }
}

/// The entries of an in-memory model, sorted in byte order.
func sortedEntries(_ model: [[UInt8]: [UInt8]]) -> [Entry] {
    model.map { Entry(key: $0.key, value: $0.value) }.sorted { precedes($0.key, $1.key) }
}

// MARK: - Threads

/// Runs `body(index)` on `count` new threads and waits (without blocking the
/// caller's thread) until all have returned.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let remaining = Mutex(count)
        for index in 0..<count {
            let thread = Thread {
                body(index)
                let last = remaining.withLock { remaining -> Bool in
                    remaining -= 1
                    return remaining == 0
                }
                if last { continuation.resume() }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }
}

/// Failures collected on threads, reported on the test's task afterwards.
final class FailureLog: Sendable {
    private let messages = Mutex<[String]>([])

    func record(_ message: String) {
        messages.withLock { $0.append(message) }
    }

    var all: [String] { messages.withLock { $0 } }

    /// Records `Issue`s for the collected failures (at most a few).
    func report(sourceLocation: SourceLocation = #_sourceLocation) {
        let all = self.all
        for message in all.prefix(5) {
            Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
        }
        if all.count > 5 {
            Issue.record(Comment(rawValue: "... and \(all.count - 5) more"), sourceLocation: sourceLocation)
        }
    }
}

/// A test error with an identity, to check that the thrown error is rethrown.
struct TestError: Error, Equatable {
    var id: Int
}

/// A gate that holds the writer thread inside a write body until opened, so that
/// requests queued meanwhile are committed together.
final class WriterGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let entered = DispatchSemaphore(value: 0)
    private let used = Mutex(false)

    /// Enqueues a write that waits for ``open()``; returns once the writer is
    /// inside it.
    func hold(_ environment: LMDBStore) throws {
        try environment.enqueueWrite(
            { [self] _ in
                // A replayed body (after the map grew) must not wait again.
                guard
                    !used.withLock({ used in
                        defer { used = true }
                        return used
                    })
                else { return }
                entered.signal()
                semaphore.wait()
            }, completion: { _ in })
        entered.wait()
    }

    func open() { semaphore.signal() }
}

/// A counter that escaping closures on any thread can share.
final class Counter: Sendable {
    private let storage: Atomic<Int>

    init(_ value: Int = 0) { storage = Atomic(value) }

    /// Adds one and returns the new value.
    @discardableResult
    func increment() -> Int { storage.add(1, ordering: .sequentiallyConsistent).newValue }

    var value: Int { storage.load(ordering: .sequentiallyConsistent) }
}

/// Whether `buffer` holds exactly `bytes` (`memcmp`: element-wise comparison is
/// slow in debug builds).
func bytesEqual(_ buffer: UnsafeRawBufferPointer, _ bytes: [UInt8]) -> Bool {
    guard buffer.count == bytes.count else { return false }
    guard !bytes.isEmpty else { return true }
    return bytes.withUnsafeBytes { memcmp($0.baseAddress!, buffer.baseAddress!, bytes.count) == 0 }
}

/// Runs `jobs` queued behind a gate, so that they form one group; returns each job's
/// outcome, by index.
func runAsOneGroup(
    _ environment: LMDBStore, jobs: Int, _ body: @escaping @Sendable (Int, LMDBWriteTransaction) throws -> Void
) throws -> [Int: Result<Void, any Error>] {
    let gate = WriterGate()
    try gate.hold(environment)
    let outcomes = Mutex<[Int: Result<Void, any Error>]>([:])
    let done = DispatchSemaphore(value: 0)
    for i in 0..<jobs {
        try environment.enqueueWrite(
            { try body(i, $0) },
            completion: { result in
                let count = outcomes.withLock { outcomes -> Int in
                    outcomes[i] = result
                    return outcomes.count
                }
                if count == jobs { done.signal() }
            })
    }
    gate.open()
    done.wait()
    return outcomes.withLock { $0 }
}
