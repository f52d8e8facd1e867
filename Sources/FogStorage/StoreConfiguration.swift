/// How much of each commit reaches stable storage before the commit returns.
public enum StorageDurability: String, Sendable, Hashable, CaseIterable {
    /// Every commit is on stable storage before it returns. The default.
    case durable
    /// A system crash may lose the last commit, never corrupt the store.
    case relaxed
    /// Nothing is forced out; a system crash may lose recent commits. For tests and
    /// bulk loads.
    case none
}

/// What a store is opened with, whatever its backend.
public struct StoreConfiguration: Sendable, Hashable {
    /// The tables to open (and create when missing) when the store opens.
    public var tables: [String]
    /// The layouts of the tables that are not ``TableLayout/singleValue``, by name. A
    /// layout applies when a table is created; an existing table keeps its own.
    public var layouts: [String: TableLayout]
    /// How commits reach stable storage.
    public var durability: StorageDurability
    /// Whether opening creates the tables that are missing. When `false`, a missing
    /// table fails the open with ``StorageError/notFound`` and the store is left as it was.
    public var createsMissingTables: Bool

    /// Creates a configuration.
    public init(
        tables: [String] = [], layouts: [String: TableLayout] = [:], durability: StorageDurability = .durable,
        createsMissingTables: Bool = true
    ) {
        self.tables = tables
        self.layouts = layouts
        self.durability = durability
        self.createsMissingTables = createsMissingTables
    }

    /// The layout configured for the table named `name`.
    public func layout(ofTable name: String) -> TableLayout { layouts[name] ?? .singleValue }
}

/// Facts about a store, for tools and tests.
public struct StoreStatistics: Sendable, Hashable {
    /// The bytes the store occupies on its medium (the data file, for a local store).
    public var bytesUsed: Int
    /// The bytes the store has set aside for growth, at least ``bytesUsed`` (a memory map,
    /// a preallocated file); equal to ``bytesUsed`` for a store that reserves nothing.
    public var bytesReserved: Int
    /// Write transactions committed through this store object.
    public var commits: Int
    /// Write requests committed through this store object (several may share a commit).
    public var writeRequests: Int

    /// Creates statistics.
    public init(bytesUsed: Int, bytesReserved: Int, commits: Int, writeRequests: Int) {
        self.bytesUsed = bytesUsed
        self.bytesReserved = bytesReserved
        self.commits = commits
        self.writeRequests = writeRequests
    }
}
