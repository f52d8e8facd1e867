import FogStorage

extension LMDBStore {
    /// How much of each commit reaches the disk before the commit returns: `durable`
    /// flushes every commit (`fsync`); `relaxed` flushes the data pages but not the meta
    /// page (`MDB_NOMETASYNC`); `none` flushes nothing (`MDB_NOSYNC`).
    public typealias Durability = StorageDurability

    /// Options for opening an ``LMDBStore``.
    public struct Configuration: Sendable, Hashable {
        /// The tables to open (and create when missing) when the environment opens.
        public var tables: [String]
        /// The layouts of the tables that are not single-value, by name. They apply when
        /// a table is created; an existing table keeps the layout it was created with.
        public var tableLayouts: [String: TableLayout]
        /// The map size the environment starts with, in bytes. The map grows by
        /// itself when it is full, so this only avoids early resizes.
        public var initialMapSize: Int
        /// The largest single step by which the map grows, in bytes. The map doubles
        /// until a step would exceed this, then grows by this much.
        public var maximumGrowthStep: Int
        /// The number of reader slots in the lock file, shared by every process that has
        /// the store open (LMDB's `maxreaders`). Set by the process that creates the lock
        /// file; later openers use the size it has.
        public var maximumReaders: Int
        /// How many read transactions this process keeps open at once, at most: further
        /// reads wait for one to end rather than fail, and the slots left over stay free
        /// for other processes. Reads nested in a read of the same thread do not wait.
        public var maximumConcurrentReads: Int
        /// How commits reach the disk.
        public var durability: Durability
        /// The most write requests the writer commits together in one transaction.
        public var maximumGroupSize: Int
        /// Whether opening creates the tables that are missing. When `false`, a
        /// missing table fails the open with ``StorageError/notFound`` and the file is
        /// left as it was.
        public var createsMissingTables: Bool

        /// Creates a configuration.
        public init(
            tables: [String] = [],
            tableLayouts: [String: TableLayout] = [:],
            initialMapSize: Int = 64 << 20,
            maximumGrowthStep: Int = 1 << 30,
            maximumReaders: Int = 1024,
            maximumConcurrentReads: Int = 128,
            durability: Durability = .durable,
            maximumGroupSize: Int = 128,
            createsMissingTables: Bool = true
        ) {
            self.tables = tables
            self.tableLayouts = tableLayouts
            self.initialMapSize = initialMapSize
            self.maximumGrowthStep = maximumGrowthStep
            self.maximumReaders = maximumReaders
            self.maximumConcurrentReads = maximumConcurrentReads
            self.durability = durability
            self.maximumGroupSize = maximumGroupSize
            self.createsMissingTables = createsMissingTables
        }

        /// The layout configured for the table named `name`.
        public func layout(ofTable name: String) -> TableLayout { tableLayouts[name] ?? .singleValue }

        /// The configuration of a store opened through ``KeyValueStore/open(at:configuration:)``:
        /// its tables, layouts and durability, with the default map and writer settings.
        public init(_ store: StoreConfiguration) {
            self.init(
                tables: store.tables, tableLayouts: store.layouts, durability: store.durability,
                createsMissingTables: store.createsMissingTables)
        }
    }
}
