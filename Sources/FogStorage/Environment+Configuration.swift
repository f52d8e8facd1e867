extension Environment {
    /// How much of each commit reaches the disk before the commit returns.
    public enum Durability: String, Sendable, Hashable, CaseIterable {
        /// Every commit is flushed to disk (`fsync`) before it returns. The default.
        case durable
        /// The data pages are flushed but the meta page is not: a system crash may
        /// lose the last commit, never corrupt the file (`MDB_NOMETASYNC`).
        case relaxed
        /// Nothing is flushed; the operating system writes when it likes. A system
        /// crash may lose recent commits (`MDB_NOSYNC`). For tests and bulk loads.
        case none
    }

    /// Options for opening an ``Environment``.
    public struct Configuration: Sendable, Hashable {
        /// The tables to open (and create when missing) when the environment opens.
        public var tables: [String]
        /// The options of the tables that take some, by name (the others take none).
        /// They apply when a table is created; an existing table keeps the options it
        /// was created with (see ``Table/Options``).
        public var tableOptions: [String: Table.Options]
        /// The map size the environment starts with, in bytes. The map grows by
        /// itself when it is full, so this only avoids early resizes.
        public var initialMapSize: Int
        /// The largest single step by which the map grows, in bytes. The map doubles
        /// until a step would exceed this, then grows by this much.
        public var maximumGrowthStep: Int
        /// How many read transactions may be open at once across the process.
        public var maximumReaders: Int
        /// How commits reach the disk.
        public var durability: Durability
        /// The most write requests the writer commits together in one transaction.
        public var maximumGroupSize: Int
        /// Whether opening creates the tables that are missing. When `false`, a
        /// missing table fails the open with ``LMDBError/notFound`` and the file is
        /// left as it was.
        public var createsMissingTables: Bool

        /// Creates a configuration.
        public init(
            tables: [String] = [],
            tableOptions: [String: Table.Options] = [:],
            initialMapSize: Int = 64 << 20,
            maximumGrowthStep: Int = 1 << 30,
            maximumReaders: Int = 1024,
            durability: Durability = .durable,
            maximumGroupSize: Int = 128,
            createsMissingTables: Bool = true
        ) {
            self.tables = tables
            self.tableOptions = tableOptions
            self.initialMapSize = initialMapSize
            self.maximumGrowthStep = maximumGrowthStep
            self.maximumReaders = maximumReaders
            self.durability = durability
            self.maximumGroupSize = maximumGroupSize
            self.createsMissingTables = createsMissingTables
        }

        /// The options configured for the table named `name`.
        public func options(ofTable name: String) -> Table.Options { tableOptions[name] ?? [] }
    }
}
