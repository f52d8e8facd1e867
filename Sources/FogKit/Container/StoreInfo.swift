import Foundation

/// A description of a container's store, for tools such as `fog info`.
public struct StoreInfo: Sendable {
    /// One zone of one database.
    public struct Zone: Sendable {
        /// The database that holds the zone.
        public var scope: Database.Scope
        /// The identity the owner opens containers with, for private zones.
        public var ownerIdentity: String?
        /// The owner's user record name (empty for the public database).
        public var ownerRecordName: String
        /// The zone's name.
        public var zoneName: String
        /// The zone's capabilities.
        public var capabilities: RecordZone.Capabilities
        /// How many records the zone holds.
        public var recordCount: Int
    }

    /// The container identifier the store belongs to.
    public var containerIdentifier: String
    /// The store's directory.
    public var directory: URL
    /// The on-disk format version.
    public var formatVersion: Int
    /// The store's incarnation id (new for every store created, kept by copies).
    public var incarnation: String
    /// The last value of the commit sequence.
    public var commitSequence: Int64
    /// The bytes the store occupies on disk.
    public var fileSize: Int
    /// The bytes the store has reserved to grow into without asking the system again (for
    /// the LMDB backend, the size of its memory map).
    public var reservedSize: Int
    /// Write transactions this process committed on the store since it opened it.
    public var commits: Int
    /// Write requests in those transactions; more requests than commits means
    /// concurrent writers were committed together (group commit).
    public var writeRequests: Int
    /// How many users the store knows.
    public var userCount: Int
    /// How many records the store holds, all databases together.
    public var recordCount: Int
    /// Every stored zone (default zones appear once something was written to them).
    public var zones: [Zone]
}

extension Container {
    /// The identifier of the container stored in `directory`, or `nil` when the
    /// directory holds no store.
    public static func storedIdentifier(at directory: URL) throws -> String? {
        try storedIdentifier(in: .directory(directory))
    }

    /// The identifier of the container kept in `store`, or `nil` when there is no store
    /// there (or, for a server, the server cannot be reached).
    public static func storedIdentifier(in store: StoreLocation) throws -> String? {
        try fogTry { try Maintenance<StoreBackend>.storedIdentifier(at: store) }
    }
}
