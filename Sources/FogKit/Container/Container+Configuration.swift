import FogStorage

extension Container {
    /// How much of each commit reaches the disk before a write returns.
    public enum Durability: String, Sendable, Hashable, CaseIterable {
        /// Every commit is flushed to disk before the write returns. The default.
        case durable
        /// Data is flushed but the last commit's meta page may not be: a system crash
        /// may lose the last commit, never corrupt the store.
        case relaxed
        /// Nothing is flushed; a system crash may lose recent commits. For tests and bulk loads.
        case none

        var storage: Environment.Durability {
            switch self {
            case .durable: .durable
            case .relaxed: .relaxed
            case .none: .none
            }
        }
    }

    /// Options for opening a container.
    public struct Configuration: Sendable, Hashable {
        /// How commits reach the disk: `.durable` (the default), `.relaxed` or `.none`.
        public var durability: Durability
        /// The limits each modify request must respect; CloudKit's by default.
        public var limits: OperationLimits

        /// Creates a configuration.
        public init(durability: Durability = .durable, limits: OperationLimits = .cloudKit) {
            self.durability = durability
            self.limits = limits
        }
    }
}
