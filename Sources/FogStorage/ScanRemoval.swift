/// What ``StorageWriteTransaction/scanRemoving(_:range:_:)`` does with the entry it has just
/// shown its body.
public enum ScanRemoval: Sendable, Hashable {
    /// Leaves the entry and goes on to the next.
    case keep
    /// Removes the entry and goes on to the next.
    case remove
    /// Leaves the entry and ends the scan.
    case stop
}
