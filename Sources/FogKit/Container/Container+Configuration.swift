import FogStorage
import Foundation

extension Container {
    /// How much of each commit reaches the disk before a write returns.
    public enum Durability: String, Sendable, Hashable, CaseIterable {
        /// Every commit is flushed to disk before the write returns. The default.
        case durable
        /// Data is flushed but the last commit's meta page may not be: a system crash
        /// may lose the last commit, never corrupt the store.
        case relaxed
        /// Nothing is flushed: a power loss or system crash may lose every commit the system
        /// has not written back yet, and may damage the store. For tests and bulk loads.
        case none

        var storage: StorageDurability {
            switch self {
            case .durable: .durable
            case .relaxed: .relaxed
            case .none: .none
            }
        }
    }

    /// Which of CloudKit's two environments a container opens: each has its own data and its
    /// own schema.
    ///
    /// The development environment's store is the container's directory itself (so a store
    /// made before environments existed is development's); production's is its `production`
    /// subdirectory, created when first opened. ``Container/Administrator/deploySchema()``
    /// copies development's schema to production; records never move between them.
    public enum Environment: String, Sendable, Hashable, CaseIterable {
        /// Saves create record types and fields just in time, with default indexes (strings
        /// queryable, searchable and sortable; numbers and dates queryable and sortable;
        /// references, locations and lists queryable). Queries on fields without an index
        /// still run, as scans, and are counted by ``Container/Administrator/indexAdvice()``.
        /// The default.
        case development
        /// Only the deployed schema exists: saving a record of a type the schema lacks fails
        /// with ``FogError/Code/unknownItem``, a field it lacks with
        /// ``FogError/Code/invalidArguments``; queries on fields without the index they need
        /// fail with ``FogError/Code/invalidArguments`` ("field … is not marked queryable"),
        /// and queries on an unknown record type with ``FogError/Code/unknownItem``, as in
        /// CloudKit's production environment.
        case production

        /// The directory of this environment's store inside the container's `directory`.
        func storeDirectory(in directory: URL) -> URL {
            switch self {
            case .development: directory
            case .production: directory.appendingPathComponent("production", isDirectory: true)
            }
        }

        /// Where this environment's store is, for the container's `store`: the same store for
        /// development; for production, the `production` subfolder of a folder, or the
        /// `production` sibling a database server's backend gives.
        func storeLocation(in store: StoreLocation) -> StoreLocation {
            switch self {
            case .development: store
            case .production: store.appending("production")
            }
        }
    }

    /// Which zones keep a change feed that clients can read.
    ///
    /// Every zone's changes are logged; this decides which feeds the change APIs serve.
    public enum ChangeFeeds: String, Sendable, Hashable, CaseIterable {
        /// As in CloudKit: custom zones of the private database (which have the
        /// `fetchChanges` capability), and a private database feed that reports them.
        case cloudKit
        /// Every zone, the default zones and the public database included, and a database
        /// feed for every database.
        case everyZone
    }

    /// Options for opening a container.
    public struct Configuration: Sendable, Hashable {
        /// How commits reach the disk: `.durable` (the default), `.relaxed` or `.none`.
        public var durability: Durability
        /// The limits each modify request must respect; CloudKit's by default.
        public var limits: OperationLimits
        /// The environment the container opens: `.development` (the default) or
        /// `.production`, each with its own data and schema.
        public var environment: Environment
        /// Which zones have change feeds: `.cloudKit` (the default) or `.everyZone`.
        public var changeFeeds: ChangeFeeds
        /// How long a deleted record's tombstone stays in its zone's change log, in seconds
        /// (30 days by default; `.infinity` keeps them forever). A change token from before
        /// a pruned tombstone fails with ``FogError/Code/changeTokenExpired``. Tombstones are
        /// pruned when later deletions are written to the zone, at most 1,000 per request.
        /// A deleted zone stays in its database's change feed for as long, and is pruned the
        /// same way when later zone deletions are written to the database.
        public var tombstoneRetention: TimeInterval
        /// The largest asset file a save copies, in bytes: ``defaultMaximumAssetSize``
        /// (50 MB, CloudKit's) by default; it must be 1 or more.
        ///
        /// A save whose asset's file is larger fails that record with
        /// ``FogError/Code/limitExceeded``, naming the field and both sizes, before its file is
        /// copied; so does a file that grows past the limit while it is copied. Nothing of the
        /// file is left in the store. Other records of a request that is not atomic still save;
        /// an atomic request fails every item of the record's zone (the others with
        /// ``FogError/Code/batchRequestFailed``), as for any item that fails before the write.
        /// Each asset is measured on its own (assets count toward neither a record's 1 MB nor a
        /// request's 2 MB).
        public var maximumAssetSize: Int
        /// How long a notification stays stored for its listeners, in seconds (7 days by
        /// default; `.infinity` keeps them forever). A listener whose next notification is
        /// older gets ``FogError/Code/changeTokenExpired`` (see
        /// ``Container/notifications(listener:)``). Old notifications are pruned when later
        /// ones are written for the same user.
        public var notificationRetention: TimeInterval = Configuration.defaultNotificationRetention
        /// The storage each user may use in the private database, in bytes (`nil`, the
        /// default: no quota), as CloudKit's iCloud storage plan limits a user's.
        ///
        /// A user's storage counts the encoded bytes of every record in their private zones,
        /// the zones they share included (whoever saves into them, as CloudKit charges a
        /// shared zone to its owner), and the size of each asset of those records. A save
        /// that would take the user past it fails as a whole with
        /// ``FogError/Code/quotaExceeded``, and nothing of the request is written; a request
        /// that frees storage always goes through. FogKit keeps a running count per user,
        /// updated in each commit, so the check never scans. The quota is a setting of the
        /// opened container, not stored: another process may open the store with another.
        public var userStorageQuota: Int? = nil
        /// The storage of the public database, in bytes (`nil`, the default: no quota), as
        /// CloudKit charges public records to the app's container quota. Checked as
        /// ``userStorageQuota`` is.
        public var publicStorageQuota: Int? = nil
        /// The 32-byte AES-256 key of the container's encrypted fields
        /// (``Record/encryptedValues``), or `nil` (the default) for the key file.
        ///
        /// Without a key, FogKit makes a random one the first time a value is encrypted and
        /// keeps it in the file `encryption.key` in the store's directory (beside `data.mdb`,
        /// mode 0600), which every later opening reads. That protects a copy of `data.mdb`
        /// alone (a backup of the data file, a file sent for support), not a copy of the whole
        /// folder, nor against anyone who can read the folder. Supply a key kept elsewhere (a
        /// keychain, a secrets manager) to protect against that; the store then never reads or
        /// writes the key file. A value saved under one key and read under another fails the
        /// read with ``FogError/Code/badContainer``, naming the field. Not stored: every
        /// opening must give the same key.
        public var encryptionKey: Data? = nil

        /// 7 days.
        public static let defaultNotificationRetention: TimeInterval = EngineDefaults.notificationRetention

        /// 30 days.
        public static let defaultTombstoneRetention: TimeInterval = EngineDefaults.tombstoneRetention
        /// 50 MB, counted as 50,000,000 bytes: the limit CloudKit Web Services publishes per
        /// asset file (the native framework documents none). The decimal megabyte is the
        /// smaller reading of "50 MB", so an asset FogKit accepts fits CloudKit's limit either way.
        public static let defaultMaximumAssetSize: Int = EngineDefaults.maximumAssetSize

        /// Creates a configuration.
        public init(
            durability: Durability = .durable, limits: OperationLimits = .cloudKit, environment: Environment = .development,
            changeFeeds: ChangeFeeds = .cloudKit, tombstoneRetention: TimeInterval = Configuration.defaultTombstoneRetention,
            maximumAssetSize: Int = Configuration.defaultMaximumAssetSize
        ) {
            self.durability = durability
            self.limits = limits
            self.environment = environment
            self.changeFeeds = changeFeeds
            self.tombstoneRetention = tombstoneRetention
            self.maximumAssetSize = maximumAssetSize
        }
    }
}

extension Container.Configuration {
    /// Refuses option values a store cannot be opened with, with `invalidArguments`.
    func validate() throws(FogError) {
        guard tombstoneRetention >= 0 else {
            throw FogError(
                .invalidArguments, message: "tombstoneRetention is \(tombstoneRetention); it must be 0 or more seconds, or .infinity")
        }
        guard notificationRetention >= 0 else {
            throw FogError(
                .invalidArguments,
                message: "notificationRetention is \(notificationRetention); it must be 0 or more seconds, or .infinity")
        }
        for (name, quota) in [("userStorageQuota", userStorageQuota), ("publicStorageQuota", publicStorageQuota)] {
            if let quota, quota < 0 {
                throw FogError(.invalidArguments, message: "\(name) is \(quota); it must be 0 or more bytes, or nil for none")
            }
        }
        if let encryptionKey, encryptionKey.count != 32 {
            throw FogError(
                .invalidArguments, message: "encryptionKey is \(encryptionKey.count) bytes; an AES-256 key is 32 bytes")
        }
        guard maximumAssetSize > 0 else {
            throw FogError(.invalidArguments, message: "maximumAssetSize is \(maximumAssetSize); it must be 1 or more bytes")
        }
    }
}

extension Container.Configuration {
    /// This configuration with the durability that `engine`'s commits get (at least the one
    /// asked for: commits of one store are shared, so they get the strongest one asked for).
    func committing(with engine: StoreEngine) -> Self {
        var configuration = self
        configuration.durability = Container.Durability(engine.effectiveDurability)
        return configuration
    }
}

extension Container.Durability {
    /// The durability of the store's form `storage`.
    init(_ storage: StorageDurability) {
        switch storage {
        case .durable: self = .durable
        case .relaxed: self = .relaxed
        case .none: self = .none
        }
    }
}

extension Container.Environment {
    /// The engine's form of this environment.
    var schemaMode: SchemaMode {
        switch self {
        case .development: .development
        case .production: .production
        }
    }
}

extension Container.ChangeFeeds {
    /// The engine's form of this choice.
    var feedZones: FeedZones {
        switch self {
        case .cloudKit: .customZones
        case .everyZone: .everyZone
        }
    }
}
