/// The works a write transaction holds until its commit
/// (``StorageWriteTransaction/writeBeforeCommit(key:_:)``): one per key, in the order of
/// their latest registration. A store keeps one per transaction, shared by the requests
/// that run directly in it.
///
/// Not thread-safe: a transaction and its works belong to one thread.
public final class WritesBeforeCommit<Transaction> {
    @usableFromInline var works: [(key: [UInt8], work: (Transaction) throws -> Void)] = []

    /// An empty list.
    @inlinable public init() {}

    /// Whether no work is held.
    @inlinable public var isEmpty: Bool { works.isEmpty }

    /// Holds `work` under `key`, replacing the work held under it.
    @inlinable public func add(key: [UInt8], _ work: @escaping (Transaction) throws -> Void) {
        if let i = works.firstIndex(where: { $0.key == key }) { works.remove(at: i) }
        works.append((key, work))
    }

    /// Runs the works held in `txn`, oldest first, and forgets them (a work registered
    /// while they run runs too). Stops at the first that throws; the rest are dropped.
    @inlinable public func run(in txn: Transaction) throws {
        guard !works.isEmpty else { return }
        var queue = works
        works = []
        defer { works = [] }
        var i = 0
        while i < queue.count {
            try queue[i].work(txn)
            i += 1
            if i == queue.count, !works.isEmpty {
                queue = works
                works = []
                i = 0
            }
        }
    }
}

@available(*, unavailable)
extension WritesBeforeCommit: Sendable {}
