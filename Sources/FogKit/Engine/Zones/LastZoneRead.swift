import Synchronization

/// The zone a read-only transaction read last, with the snapshot it was read in: a later
/// transaction of the same snapshot (``StorageReadTransaction/snapshotID``) that asks for the
/// same address takes it instead of reading the `zones` table again. Fetches by ID mostly
/// read one zone again and again, one transaction each.
///
/// Nothing is ever invalidated: a commit makes a new snapshot, whose reads miss. Reads of a
/// write (no snapshot id) neither look nor remember.
final class LastZoneRead: Sendable {
    struct Entry {
        let snapshot: UInt64
        let address: ZoneAddress
        let info: ZoneInfo?
    }

    private let last = Mutex<Entry?>(nil)

    /// What was read at `address` in `snapshot`: `.some(nil)` for a zone that was absent,
    /// `nil` when not remembered.
    @inline(__always)
    func info(at address: ZoneAddress, snapshot: UInt64) -> ZoneInfo?? {
        last.withLock { entry -> ZoneInfo?? in
            guard let entry, entry.snapshot == snapshot, entry.address == address else { return nil }
            return .some(entry.info)
        }
    }

    /// Remembers what was read at `address` in `snapshot`.
    func remember(_ info: ZoneInfo?, at address: ZoneAddress, snapshot: UInt64) {
        last.withLock { $0 = Entry(snapshot: snapshot, address: address, info: info) }
    }
}
