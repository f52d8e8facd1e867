import Foundation

extension Container {
    /// The embedding program's administrative handle on a store: the schema and its
    /// indexes, index advice, backups, store information and integrity checks, and the
    /// migration of a store written by an older FogKit.
    ///
    /// These calls are not a ``Container``'s: a container acts for one user (or for
    /// nobody), and neither may read every user's private records through a backup or
    /// change the schema everyone queries. Only the program that holds an
    /// `Administrator` may; keep it out of reach of the users it serves.
    ///
    /// ```swift
    /// let admin = try Container.Administrator(identifier: "iCloud.com.example.notes",
    ///                                         directory: URL(fileURLWithPath: "notes-store"))
    /// try await admin.setIndexes([.queryable, .sortable], forField: "score", ofRecordType: "Post")
    /// let alice = try admin.container(user: "alice")   // shares the index advisor
    /// // … queries through alice's databases …
    /// print(admin.indexAdvice())
    /// try admin.backup(to: URL(fileURLWithPath: "notes-backup"))
    /// ```
    ///
    /// The administrator is not a database user: it has no databases. To read or write
    /// records, open a container for a user, or make one with ``container(user:configuration:)``.
    ///
    /// Opening an administrator on a store of an older format version migrates it;
    /// containers refuse to open such a store until an administrator has.
    public final class Administrator: Sendable {
        /// The container's identifier.
        public let containerIdentifier: String
        /// The directory that holds the store; for a store on a database server, its URL.
        public let directory: URL
        /// Where the store is, and which backend keeps it.
        public let store: StoreLocation
        /// The options the administrator was opened with (and gives the containers it makes),
        /// with the durability its commits get: the one it asked for, or a stronger one
        /// that another container of this process opened the same directory with.
        public var configuration: Configuration { requestedConfiguration.committing(with: engine) }
        let requestedConfiguration: Configuration

        let engine: StoreEngine
        private let closed = ClosedFlag()

        /// Opens (or creates) the store of container `identifier` in `directory` for
        /// administration, migrating a store written by an older FogKit.
        ///
        /// - Throws: ``FogError`` when the store cannot be opened, belongs to another
        ///   container, or was written by an incompatible version.
        public convenience init(identifier: String, directory: URL, configuration: Configuration = Configuration()) throws {
            try self.init(identifier: identifier, store: .directory(directory), configuration: configuration)
        }

        /// Opens (or creates) the store of container `identifier` at `store` for
        /// administration, migrating a store written by an older FogKit.
        ///
        /// - Throws: ``FogError`` when the store cannot be opened, belongs to another
        ///   container, or was written by an incompatible version.
        public init(identifier: String, store: StoreLocation, configuration: Configuration = Configuration()) throws {
            guard !identifier.isEmpty else { throw FogError(.badContainer, message: "the container identifier is empty") }
            try configuration.validate()
            containerIdentifier = identifier
            self.directory = store.url
            self.store = store
            self.requestedConfiguration = configuration
            engine = try StoreEngine(
                location: configuration.environment.storeLocation(in: store), identifier: identifier,
                durability: configuration.durability.storage, caller: .administrator,
                encryptionKey: configuration.encryptionKey)
        }

        /// A container on the same store for `user` (`nil` for nobody), with the
        /// administrator's configuration unless one is given. Queries through it count
        /// toward this administrator's ``indexAdvice()``. Close it on its own.
        public func container(user: String? = Container.defaultUser, configuration: Configuration? = nil) throws -> Container {
            try checkOpen()
            return try Container(
                identifier: containerIdentifier, store: store, user: user, configuration: configuration ?? requestedConfiguration,
                advisor: engine.indexes.advisor)
        }

        // MARK: - Indexes

        /// Sets the indexes of one field of a record type, replacing the ones it had
        /// (`[]` removes them all).
        ///
        /// The schema is the container's: the indexes serve every database and zone. Adding an
        /// index, or changing its options, builds its entries for the records already stored,
        /// and removing one deletes them, in bounded chunks of write transactions; the call
        /// returns when done. A removed index is unused from the first transaction, a new or
        /// changed one until its build completes (see `Docs/Queries.md`, "Building indexes").
        ///
        /// ```swift
        /// try await admin.setIndexes([.queryable, .sortable], forField: "score", ofRecordType: "Post")
        /// try await admin.setIndexes(.searchable, forField: "title", ofRecordType: "Post")
        /// try await admin.setIndexes(.queryable, forField: Record.SystemFieldKey.recordID, ofRecordType: "Post")
        /// ```
        ///
        /// System fields take indexes too: `recordName` or `recordID` (queryable; the record
        /// ID, which CloudKit's schema calls `recordName` and whole-type queries need),
        /// `creationDate` and `modificationDate` (queryable, sortable),
        /// `creatorUserRecordID`, `lastModifiedUserRecordID` and `parent` (queryable).
        ///
        /// - Throws: ``FogError`` with ``FogError/Code/invalidArguments`` for a bad record type
        ///   or field name, ``IndexOptions/searchable`` on a field that does not hold strings,
        ///   or an index on an asset field or a system field that cannot have it.
        public func setIndexes(
            _ options: IndexOptions, forField field: Record.FieldKey, ofRecordType recordType: Record.RecordType
        ) async throws {
            try authorize(.setIndexes)
            try await engine.indexes.setIndexes([field: options], recordType: recordType)
        }

        /// Sets the indexes of several fields of a record type at once (the definitions in one
        /// transaction, then the drops and builds in chunks);
        /// fields not named keep theirs. See ``setIndexes(_:forField:ofRecordType:)``.
        public func setIndexes(_ indexes: [Record.FieldKey: IndexOptions], ofRecordType recordType: Record.RecordType) async throws {
            try authorize(.setIndexes)
            try await engine.indexes.setIndexes(indexes, recordType: recordType)
        }

        /// The indexes declared on the fields of a record type, by field name.
        public func indexes(ofRecordType recordType: Record.RecordType) throws -> [Record.FieldKey: IndexOptions] {
            try authorize(.readIndexes)
            return try engine.indexes.indexes(ofRecordType: recordType)
        }

        /// The state of each index declared on the fields of a record type, by field name:
        /// ready, or still building for the records stored before it was declared (see
        /// ``IndexState``). Same keys as ``indexes(ofRecordType:)``.
        public func indexStates(ofRecordType recordType: Record.RecordType) throws -> [Record.FieldKey: IndexState] {
            try authorize(.readIndexes)
            return try engine.indexes.indexStates(ofRecordType: recordType)
        }

        /// Completes the index builds that an earlier process left unfinished (it closed or
        /// crashed between two chunks), of every record type. ``setIndexes(_:ofRecordType:)``
        /// also completes those of its record type.
        public func resumeIndexBuilds() async throws {
            try authorize(.setIndexes)
            try await engine.indexes.buildAllIndexes()
        }

        /// The indexes that queries in the development environment lacked, most frequent
        /// first: the index advisor. Counts the queries of the containers this
        /// administrator made (``container(user:configuration:)``) since it opened.
        public func indexAdvice() -> [IndexAdvice] {
            // The administrator always passes; asked so that every call goes through the policy.
            guard (try? engine.access.check(.administer(.indexAdvice), AccessRequest(caller: .administrator))) != nil else { return [] }
            return engine.indexes.advisor.advice()
        }

        // MARK: - The store

        /// Writes a consistent copy of the store (records, indexes, change logs and assets) to
        /// the empty or missing directory `destination`, while the store stays in use.
        ///
        /// The copy is a new incarnation of the store: change tokens from this store fail with
        /// ``FogError/Code/changeTokenExpired`` against it, so clients of a restored backup
        /// fetch their changes again instead of missing the ones the backup lost.
        ///
        /// Both environments are copied: development's store into `destination`, and
        /// production's, when the container has one, into its `production` subdirectory.
        public func backup(to destination: URL) throws {
            try authorize(.backup)
            guard store.isDirectory else {
                // A store on a database server is backed up as a copy into an embedded store.
                try copyStore(to: .directory(destination))
                return
            }
            try withEngine(for: .development) { engine in try fogTry { try engine.maintenance.backup(to: destination) } }
            let production = Container.Environment.production
            if storeExists(at: production.storeLocation(in: store)) {
                do {
                    try withEngine(for: production) { engine in
                        try fogTry { try engine.maintenance.backup(to: production.storeDirectory(in: destination)) }
                    }
                } catch {
                    // No half backup: `destination` was empty or missing before.
                    try? FileManager.default.removeItem(at: destination)
                    throw error
                }
            }
        }

        /// Copies the whole container (both environments, every record, index, change log,
        /// user, subscription and asset) into a new store at `destination`: from an embedded
        /// store to a database server's and back (`fog store copy`), for moving up.
        ///
        /// The copy reads one snapshot of each environment, so writers may go on meanwhile; what
        /// they commit after it is not in the copy, and the copy is a new incarnation of the
        /// store: change tokens of this store fail against it with
        /// ``FogError/Code/changeTokenExpired``, so clients fetch again rather than miss a
        /// change. Stop the writers first to move without losing their last commits.
        ///
        /// - Parameters:
        ///   - destination: Where the copy goes; there must be no store there (a database
        ///     server's database must exist).
        ///   - progress: Called after each batch of each table.
        /// - Throws: ``FogError/Code/invalidArguments`` when `destination` holds a store;
        ///   ``FogError/Code/serviceUnavailable`` when its server cannot be reached.
        public func copyStore(to destination: StoreLocation, progress: (StoreCopyProgress) -> Void = { _ in }) throws {
            try authorize(.copyStore)
            if destination == store { throw FogError(.invalidArguments, message: "a store cannot be copied onto itself") }
            try withEngine(for: .development) { engine in
                try engine.maintenance.copy(to: destination, environment: .development, progress: progress)
            }
            let production = Container.Environment.production
            if storeExists(at: production.storeLocation(in: store)) {
                try withEngine(for: production) { engine in
                    try engine.maintenance.copy(
                        to: production.storeLocation(in: destination), environment: production, progress: progress)
                }
            }
        }

        /// Describes the whole store: sizes, users, zones and record counts.
        public func storeInfo() throws -> StoreInfo {
            try authorize(.storeInfo)
            return try fogTry { try engine.maintenance.describe() }
        }

        /// Checks the whole store's internal consistency (every index entry points at a
        /// record, every record has its index entries, names and types agree). Reads one
        /// snapshot; changes nothing.
        public func checkIntegrity() throws -> IntegrityReport {
            try authorize(.checkIntegrity)
            return try fogTry { try engine.maintenance.checkIntegrity() }
        }

        /// Closes the administrator's hold on the store. The store closes once every
        /// container and administrator that opened its directory has closed. Calls on a
        /// closed administrator fail with ``FogError/Code/internalError``. Closing twice
        /// does nothing more.
        public func close() {
            if closed.set() { engine.close() }
        }

        func checkOpen() throws(FogError) {
            if closed.isSet { throw FogError(.internalError, message: "the administrator is closed") }
        }

        func authorize(_ call: AdministrativeCall) throws(FogError) {
            try checkOpen()
            try engine.access.check(.administer(call), AccessRequest(caller: .administrator))
        }
    }
}
