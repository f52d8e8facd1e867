import Synchronization

/// A flag that one task or thread sets and others read.
public final class Flag: Sendable {
    private let storage = Atomic(false)

    /// An unset flag.
    public init() {}

    /// Sets the flag.
    public func set() { storage.store(true, ordering: .sequentiallyConsistent) }

    /// Whether the flag is set.
    public var isSet: Bool { storage.load(ordering: .sequentiallyConsistent) }
}
