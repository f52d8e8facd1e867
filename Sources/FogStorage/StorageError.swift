/// An error reported by a store, whatever its backend.
///
/// Stores turn their own failures into these cases, so that the code above them
/// never names a backend's error type. Match on the cases:
///
/// ```swift
/// do { try store.read { ... } }
/// catch StorageError.closed { ... }
/// ```
public enum StorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store was closed before the call.
    case closed
    /// Something the call needs is missing: a table the store was asked to open
    /// without creating it, for example.
    case notFound
    /// The entry is already there, or an append came out of order.
    case keyExists
    /// A resource is exhausted: disk space, the size of one transaction, the number
    /// of tables.
    case full
    /// A resource is exhausted for the moment and the same call may succeed a little
    /// later: every reader slot is taken, for example, by this process and others. The
    /// description says which resource.
    case temporarilyUnavailable(String)
    /// The stored data is damaged; the description names what is damaged (a file cut
    /// short, a page of the wrong kind).
    case corrupted(String)
    /// The key is empty where the store forbids it (see ``KeyValueStore/allowsEmptyKeys``).
    case emptyKey
    /// The key is longer than ``KeyValueStore/maximumKeySize``.
    case keyTooLarge
    /// The value is longer than the store accepts (in a multi-value table, longer than
    /// ``KeyValueStore/maximumKeySize``).
    case valueTooLarge
    /// The operation does not fit the table's layout, or the stored data was written
    /// by an incompatible version of the backend.
    case incompatible
    /// Any other failure, with the backend's description of it.
    case other(String)

    /// A description of the error.
    public var description: String {
        switch self {
        case .closed: "the store is closed"
        case .notFound: "not found"
        case .keyExists: "the entry already exists"
        case .full: "a storage resource is exhausted"
        case .temporarilyUnavailable(let resource): "temporarily unavailable: \(resource); retry later"
        case .corrupted(let damage): damage.isEmpty ? "the stored data is corrupted" : "the stored data is corrupted: \(damage)"
        case .emptyKey: "empty key"
        case .keyTooLarge: "key too large"
        case .valueTooLarge: "value too large"
        case .incompatible: "the operation does not fit the table or the stored data"
        case .other(let description): description
        }
    }
}
