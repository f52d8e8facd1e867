import FogStorage
import Foundation

extension Maintenance {
    /// Reads the container identifier stored in `directory`, or `nil` when the
    /// directory holds no store.
    static func storedIdentifier(at directory: URL) throws -> String? {
        guard Store.storeExists(at: directory) else { return nil }
        let store: Store
        do {
            store = try Store.open(at: directory, configuration: Layout.configuration(createsMissingTables: false))
        } catch StorageError.notFound {
            throw FogError(.incompatibleVersion, message: "\(directory.path) holds a store that is not a FogKit store")
        }
        defer { store.close() }
        let meta = store.table(named: Layout.meta)
        return try store.read { txn in
            try txn.value(forKey: Layout.metaIdentifier, in: meta).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// A description of the whole store.
    func describe() throws -> StoreInfo {
        let stats = try store.storeStatistics()
        return try read { txn, _ in
            var zonesFound: [StoreInfo.Zone] = []
            var ownersByUser: [String: String] = [:]
            try txn.scan(users) { key, value in
                ownersByUser[String(decoding: value, as: UTF8.self)] = String(decoding: key, as: UTF8.self)
                return true
            }
            try txn.scan(zones) { key, value in
                var reader = KeyReader(Array(key))
                let rawScope = Int(try reader.readInt64())
                guard let scope = Database.Scope(rawValue: rawScope) else {
                    throw FormatError(message: "zone entry with database scope \(rawScope)")
                }
                let owner = try reader.readString()
                let name = try reader.readString()
                let info = try ZoneInfo.decode(value)
                var count = 0
                try txn.scan(recordNames, range: .prefix(Layout.namePrefix(zone: info.id))) { _, _ in
                    count += 1
                    return true
                }
                zonesFound.append(
                    StoreInfo.Zone(
                        scope: scope, ownerIdentity: ownersByUser[owner], ownerRecordName: owner, zoneName: name,
                        capabilities: info.capabilities, recordCount: count))
                return true
            }
            var identifier = ""
            if let bytes = try txn.value(forKey: Layout.metaIdentifier, in: meta) { identifier = String(decoding: bytes, as: UTF8.self) }
            return StoreInfo(
                containerIdentifier: identifier, directory: directory, formatVersion: Int(Layout.formatVersion),
                incarnation: incarnation.map { String(format: "%02x", $0) }.joined(), commitSequence: try currentSequence(in: txn),
                fileSize: stats.bytesUsed, mapSize: stats.bytesReserved, commits: stats.commits, writeRequests: stats.writeRequests,
                userCount: try txn.count(of: users),
                recordCount: try txn.count(of: records), zones: zonesFound)
        }
    }
}

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
    /// The size of `data.mdb` in bytes.
    public var fileSize: Int
    /// The size of the memory map in bytes.
    public var mapSize: Int
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
        try fogTry { try Maintenance<StoreBackend>.storedIdentifier(at: directory) }
    }
}
