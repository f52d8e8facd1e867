internal import CLMDB

extension Table {
    /// How a table stores its entries, fixed when the table is created.
    ///
    /// A table without options maps each key to one value. With
    /// ``sortedDuplicates`` a key holds a sorted set of values: every (key, value)
    /// pair is an entry, the key is stored once, and scans visit the pairs in key
    /// order and, within a key, in value order (byte order, as keys). Give the
    /// options in ``Environment/Configuration/tableOptions``.
    ///
    /// LMDB keeps the options a table was created with: opening an existing table
    /// with other options opens it with its stored ones. Read them with
    /// ``ReadTransaction/options(of:)``, and give the table the configured ones with
    /// ``WriteTransaction/recreate(_:)``.
    public struct Options: OptionSet, Sendable, Hashable, CustomStringConvertible {
        /// The raw bits.
        public let rawValue: UInt32

        /// Creates options from their raw bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// A key holds a sorted set of values (`MDB_DUPSORT`). A value of one key is at
        /// most 511 bytes, as a key is.
        public static let sortedDuplicates = Options(rawValue: 1 << 0)
        /// Every value of the table has the same size, so the values of a key are packed
        /// without per-value headers (`MDB_DUPFIXED`). Only with ``sortedDuplicates``.
        public static let fixedSizeDuplicates = Options(rawValue: 1 << 1)

        /// The options' names, for messages.
        public var description: String {
            var names: [String] = []
            if contains(.sortedDuplicates) { names.append("sortedDuplicates") }
            if contains(.fixedSizeDuplicates) { names.append("fixedSizeDuplicates") }
            return "[" + names.joined(separator: ", ") + "]"
        }

        /// The `mdb_dbi_open` flags.
        var lmdbFlags: UInt32 {
            (contains(.sortedDuplicates) ? UInt32(MDB_DUPSORT) : 0) | (contains(.fixedSizeDuplicates) ? UInt32(MDB_DUPFIXED) : 0)
        }

        /// The options among the flags of an open table (`mdb_dbi_flags`).
        init(lmdbFlags flags: UInt32) {
            var options: Options = []
            if flags & UInt32(MDB_DUPSORT) != 0 { options.insert(.sortedDuplicates) }
            if flags & UInt32(MDB_DUPFIXED) != 0 { options.insert(.fixedSizeDuplicates) }
            self = options
        }
    }
}
