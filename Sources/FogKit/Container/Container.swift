import FogStorage
import Foundation
import Synchronization

/// A container: one store on disk, with a public, a private and a shared
/// database (CloudKit's `CKContainer`).
///
/// A container lives in a directory and is opened on behalf of a user — a
/// name of your choosing that FogKit maps to a CloudKit-style user record ID —
/// or of nobody, in which case only the public database can be read. The signed-in user
/// can change while the container is open (``signIn(as:)``, ``signOut()``), as on a device
/// whose iCloud account changes; the container posts
/// ``Foundation/Notification/Name/AccountChanged`` when it does.
/// Container-level administration (indexes, backups, store information, integrity
/// checks) is not a container's: it belongs to ``Container/Administrator``.
///
/// ```swift
/// let container = try Container(identifier: "iCloud.com.example.notes",
///                               directory: URL(fileURLWithPath: "notes-store"),
///                               user: "alice")
/// let notes = container.privateCloudDatabase
/// ```
///
/// Several containers may open the same directory in one process, for the same
/// or different users; they share one open store, whose commits get the strongest
/// durability any of them asked for (``configuration`` tells which).
public final class Container: Sendable {
    /// The container's identifier, such as `"iCloud.com.example.notes"`.
    public let containerIdentifier: String?
    /// The directory that holds the store; for a store on a database server, its URL.
    public let directory: URL
    /// Where the store is, and which backend keeps it.
    public let store: StoreLocation
    /// The options the container was opened with, with the durability its commits get:
    /// the one it asked for, or a stronger one when another container or administrator
    /// of this process has the same directory open with a stronger one (commits of one
    /// store are shared, so they get the strongest durability asked for).
    public var configuration: Configuration { requestedConfiguration.committing(with: engine) }
    private let requestedConfiguration: Configuration

    let engine: StoreEngine
    let closed = ClosedFlag()
    /// The fault plan's state, shared by the three databases (see ``faultPlan``).
    let faults = FaultInjector()
    /// The signed-in account, shared by the three databases (see ``signIn(as:)``).
    let account: Account
    /// The streams of ``accountChanges``.
    let accountWatchers = AccountWatchers()
    /// The record name (`_` and 32 hex digits) of the signed-in user whose account is
    /// usable, or `nil` for nobody (or a restricted or temporarily unavailable account).
    var userRecordName: String? { account.current.usableRecordName }

    /// The public database: readable by everyone, writable by users.
    public let publicCloudDatabase: Database
    /// The user's private database.
    public let privateCloudDatabase: Database
    /// The database of zones other users share with this user.
    public let sharedCloudDatabase: Database

    /// The user name a container uses when none is given.
    public static let defaultUser = "defaultUser"

    /// Opens (or creates) the container stored in `directory`.
    ///
    /// - Parameters:
    ///   - identifier: The container identifier; a directory belongs to one identifier.
    ///   - directory: Where the store lives; created when missing.
    ///   - user: The identity to act for, or `nil` for nobody. Defaults to ``defaultUser``.
    ///   - configuration: Durability and limits.
    /// - Throws: ``FogError`` when the store cannot be opened, belongs to another
    ///   container, or was written by an incompatible version;
    ///   ``FogError/Code/permissionFailure`` for a store of an older format version, which
    ///   only a ``Container/Administrator`` migrates.
    public convenience init(
        identifier: String, directory: URL, user: String? = Container.defaultUser,
        configuration: Configuration = Configuration()
    ) throws {
        try self.init(
            identifier: identifier, store: .directory(directory), user: user, configuration: configuration, advisor: IndexAdvisor())
    }

    /// Opens (or creates) the container kept in `store`: an embedded store in a folder
    /// (``StoreLocation/directory(_:)``), or one on a database server (`.postgres(_:)`, with
    /// `import FogStoragePostgres`).
    ///
    /// ```swift
    /// let container = try Container(
    ///     identifier: "iCloud.com.example.notes", store: try .postgres("postgres://fog@db.example.com/notes"))
    /// ```
    ///
    /// - Parameters:
    ///   - identifier: The container identifier; a store belongs to one identifier.
    ///   - store: Where the store is; created when missing (a server's database must exist).
    ///   - user: The identity to act for, or `nil` for nobody. Defaults to ``defaultUser``.
    ///   - configuration: Durability and limits.
    /// - Throws: ``FogError`` as ``init(identifier:directory:user:configuration:)`` does, and
    ///   ``FogError/Code/serviceUnavailable`` (with ``FogError/retryAfterSeconds``) when the
    ///   store's server cannot be reached.
    public convenience init(
        identifier: String, store: StoreLocation, user: String? = Container.defaultUser,
        configuration: Configuration = Configuration()
    ) throws {
        try self.init(identifier: identifier, store: store, user: user, configuration: configuration, advisor: IndexAdvisor())
    }

    /// Opens the container, collecting index advice in `advisor` (an administrator's, for
    /// the containers it makes).
    init(identifier: String, store: StoreLocation, user: String?, configuration: Configuration, advisor: IndexAdvisor) throws {
        let directory = store.url
        guard !identifier.isEmpty else { throw FogError(.badContainer, message: "the container identifier is empty") }
        if let user, user.isEmpty || user.utf8.count > 255 {
            throw FogError(.invalidArguments, message: "the user identity must be 1 to 255 bytes long; pass nil for nobody")
        }
        try configuration.validate()
        self.containerIdentifier = identifier
        self.directory = directory
        self.store = store
        self.requestedConfiguration = configuration
        // The caller's kind is all opening asks the policy (only the administrator migrates).
        let engine = try StoreEngine(
            location: configuration.environment.storeLocation(in: store), identifier: identifier,
            durability: configuration.durability.storage, caller: Caller(user: user),
            advisor: advisor, encryptionKey: configuration.encryptionKey
        )
        self.engine = engine
        let account: Account
        do {
            let recordName = try user.map { try engine.users.userRecordName(for: $0) }
            account = Account(Account.State(identity: user, recordName: recordName, status: user == nil ? .noAccount : .available))
        } catch {
            engine.close()
            throw FogError.wrapping(error)
        }
        self.account = account
        let closed = self.closed
        let faults = self.faults
        let link = ContainerLink()
        publicCloudDatabase = Database(
            scope: .public, engine: engine, account: account, configuration: configuration, closedFlag: closed, faults: faults,
            link: link)
        privateCloudDatabase = Database(
            scope: .private, engine: engine, account: account, configuration: configuration, closedFlag: closed, faults: faults,
            link: link)
        sharedCloudDatabase = Database(
            scope: .shared, engine: engine, account: account, configuration: configuration, closedFlag: closed, faults: faults,
            link: link)
        link.set(self)
    }

    /// The database for `databaseScope`; the same instance as the matching property.
    public func database(with databaseScope: Database.Scope) -> Database {
        switch databaseScope {
        case .public: publicCloudDatabase
        case .private: privateCloudDatabase
        case .shared: sharedCloudDatabase
        }
    }

    /// The signed-in user's record ID, in the default zone.
    /// - Throws: ``FogError/Code/notAuthenticated`` when nobody is signed in or the account
    ///   is restricted; ``FogError/Code/accountTemporarilyUnavailable`` when it is
    ///   temporarily unavailable.
    public func userRecordID() async throws -> Record.ID {
        let context = privateCloudDatabase.context
        try engine.access.check(.currentUser, in: context)
        return Record.ID(recordName: context.user ?? "")
    }

    /// Closes the container. The store closes once every container that opened
    /// its directory has closed; until then the others keep working. Calls on a
    /// closed store fail with ``FogError/Code/internalError``. Closing twice does
    /// nothing more.
    ///
    /// A container is not closed when it is released, because its databases may
    /// outlive it (`let db = try Container(...).privateCloudDatabase`).
    public func close() {
        if closed.set() {
            engine.close()
            accountWatchers.finish()
        }
    }
}
