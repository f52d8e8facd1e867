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

        var storage: FogStorage.Environment.Durability {
            switch self {
            case .durable: .durable
            case .relaxed: .relaxed
            case .none: .none
            }
        }
    }

    /// Which of CloudKit's two schema environments a container behaves as.
    ///
    /// FogKit keeps one schema per store; the environment decides how queries treat a
    /// field without the index they need.
    public enum Environment: String, Sendable, Hashable, CaseIterable {
        /// Queries on fields without an index still run, as scans, and are counted by
        /// ``Container/indexAdvice()``. The default.
        case development
        /// Queries on fields without the index they need fail with
        /// ``FogError/Code/invalidArguments`` ("field … is not marked queryable"), and
        /// queries on a record type the schema does not know fail with
        /// ``FogError/Code/unknownItem``, as in CloudKit's production environment.
        case production
    }

    /// Options for opening a container.
    public struct Configuration: Sendable, Hashable {
        /// How commits reach the disk: `.durable` (the default), `.relaxed` or `.none`.
        public var durability: Durability
        /// The limits each modify request must respect; CloudKit's by default.
        public var limits: OperationLimits
        /// How queries treat missing indexes: `.development` (the default) or `.production`.
        public var environment: Environment

        /// Creates a configuration.
        public init(durability: Durability = .durable, limits: OperationLimits = .cloudKit, environment: Environment = .development) {
            self.durability = durability
            self.limits = limits
            self.environment = environment
        }
    }
}
