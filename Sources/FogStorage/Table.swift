/// A named key space inside a store.
///
/// FogStorage says *table* where LMDB says *database* and other stores say
/// *column family*, *keyspace* or *subspace*, because a database in FogKit is a
/// CloudKit scope (public, private or shared). Keys within a table are kept in
/// byte order. Obtain tables from ``KeyValueStore/table(named:)``; a table value
/// belongs to the store that handed it out and stays valid until that store closes.
public struct Table: Sendable, Hashable, CustomStringConvertible {
    /// The table's name.
    public let name: String
    /// The number the store gave the table, for the store's own use (a handle, a key
    /// prefix). Callers never choose it.
    public let identifier: UInt32

    /// Creates a table value. Only stores call this, when they open a table.
    public init(name: String, identifier: UInt32) {
        self.name = name
        self.identifier = identifier
    }

    /// The table's name.
    public var description: String { name }
}

/// How a table stores its entries, fixed when the table is created.
///
/// A store keeps the layout a table was created with; ``StorageWriteTransaction/replaceWithEmpty(_:)``
/// is the way to give an existing table another one.
public enum TableLayout: Sendable, Hashable, CustomStringConvertible {
    /// Each key maps to one value.
    case singleValue
    /// Each key holds a sorted set of values: every (key, value) pair is an entry, and
    /// scans visit the pairs in key order and, within a key, in value order (byte order,
    /// as keys). A value is at most ``KeyValueStore/maximumKeySize`` bytes and not empty.
    /// With `fixedSizeValues`, every value of the table has the same size, which lets a
    /// store pack them.
    case multiValue(fixedSizeValues: Bool)

    /// Whether a key holds a sorted set of values.
    public var isMultiValue: Bool {
        if case .multiValue = self { return true }
        return false
    }

    /// The layout, for messages.
    public var description: String {
        switch self {
        case .singleValue: "single value"
        case .multiValue(let fixed): fixed ? "multi-value (fixed size)" : "multi-value"
        }
    }
}
