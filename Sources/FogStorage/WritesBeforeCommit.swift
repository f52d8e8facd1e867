/// The works a write transaction holds until its commit
/// (``StorageWriteTransaction/writeBeforeCommit(key:_:)``): one per key, in the order of
/// their latest registration. A store keeps one per transaction, shared by the requests
/// that run directly in it.
///
/// A replaced work leaves a gap that later registrations compact away. A few works are
/// found by comparing keys; past ``linearLimit`` entries, by a dictionary of their positions,
/// so that a transaction holding many keys (a migration logging every zone) stays linear.
///
/// Not thread-safe: a transaction and its works belong to one thread.
public final class WritesBeforeCommit<Transaction> {
    /// Each entry's key.
    @usableFromInline var keys: [[UInt8]] = []
    /// Each entry's work; `nil` where a later registration under its key replaced it.
    @usableFromInline var works: [((Transaction) throws -> Void)?] = []
    /// The entries still held (not replaced).
    @usableFromInline var held = 0
    /// Each held key's entry, once there are more than ``linearLimit`` entries.
    @usableFromInline var positions: [[UInt8]: Int]? = nil

    /// Entries up to which a key is found by comparing it with each.
    @usableFromInline static var linearLimit: Int { 16 }

    /// An empty list.
    @inlinable public init() {}

    /// Whether no work is held.
    @inlinable public var isEmpty: Bool { held == 0 }

    /// The number of works held.
    @inlinable public var count: Int { held }

    /// Holds `work` under `key`, replacing the work held under it.
    @inlinable public func add(key: [UInt8], _ work: @escaping (Transaction) throws -> Void) {
        if let i = position(of: key) {
            // The last entry (a key registered again and again): replaced in place.
            if i == works.count - 1 {
                works[i] = work
                return
            }
            works[i] = nil
            held -= 1
        }
        keys.append(key)
        works.append(work)
        held += 1
        positions?[key] = works.count - 1
        if works.count > Self.linearLimit, held * 2 <= works.count { compact() }
        if positions == nil, works.count > Self.linearLimit { indexPositions() }
    }

    /// Finds the held keys by a dictionary from now on.
    @inlinable func indexPositions() {
        positions = Dictionary(uniqueKeysWithValues: keys.indices.filter { works[$0] != nil }.map { (keys[$0], $0) })
    }

    /// The entry of the work held under `key`.
    @inlinable func position(of key: [UInt8]) -> Int? {
        if let positions { return positions[key] }
        for i in works.indices.reversed() where works[i] != nil && keys[i] == key { return i }
        return nil
    }

    /// Drops the entries of replaced works, keeping the order of the others (and the
    /// dictionary of positions, which ``add(key:_:)`` makes again when there are still many).
    @inlinable func compact() {
        var k: [[UInt8]] = []
        var w: [((Transaction) throws -> Void)?] = []
        k.reserveCapacity(held)
        w.reserveCapacity(held)
        for i in works.indices where works[i] != nil {
            k.append(keys[i])
            w.append(works[i])
        }
        keys = k
        works = w
        positions = nil
    }

    /// Runs the works held in `txn`, oldest first, and forgets each once it returned (a work
    /// registered while they run runs too). A work that throws stops the run; it and the works
    /// after it stay held, ahead of any registered meanwhile, so that a caller that goes on
    /// after the error meets it again at the commit.
    @inlinable public func run(in txn: Transaction) throws {
        while held > 0 {
            let (k, w) = (keys, works)
            keys = []
            works = []
            held = 0
            positions = nil
            var i = 0
            do {
                while i < w.count {
                    if let work = w[i] { try work(txn) }
                    i += 1
                }
            } catch {
                restore(keys: k[i...], works: w[i...])
                throw error
            }
        }
    }

    /// Puts back the entries a run did not finish, ahead of those registered meanwhile (a
    /// later registration under the same key still replaces its entry).
    @inlinable func restore(keys k: ArraySlice<[UInt8]>, works w: ArraySlice<((Transaction) throws -> Void)?>) {
        let (laterKeys, laterWorks) = (keys, works)
        keys = Array(k)
        works = Array(w)
        held = works.count(where: { $0 != nil })
        positions = nil
        if works.count > Self.linearLimit { indexPositions() }
        for (key, work) in zip(laterKeys, laterWorks) {
            if let work { add(key: key, work) }
        }
    }
}

@available(*, unavailable)
extension WritesBeforeCommit: Sendable {}
