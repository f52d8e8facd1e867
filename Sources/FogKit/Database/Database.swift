import Foundation
import Synchronization

/// One of a container's three databases (CloudKit's `CKDatabase`).
///
/// Get databases from a ``Container``: ``Container/publicCloudDatabase``,
/// ``Container/privateCloudDatabase`` and ``Container/sharedCloudDatabase``.
/// The async methods mirror CloudKit's convenience API. Reads run on the
/// calling task; writes are committed by the store's writer.
public final class Database: Sendable, CustomStringConvertible {
    /// Which database this is.
    public let databaseScope: Scope

    let engine: StoreEngine
    /// The context without its account; ``context`` adds the account of the moment.
    let baseContext: DatabaseContext
    /// The container's signed-in account, which ``context`` reads once per call.
    let account: Account
    /// The last context built, with the ``Account/version`` of the account it was built
    /// for: the account changes seldom, so most calls take it as it is.
    private let cachedContext: Mutex<(version: UInt64, context: DatabaseContext)>
    /// The container that made this database, while it exists.
    let link: ContainerLink
    let limits: RequestLimits
    /// How queries treat missing indexes.
    let environment: Container.Environment
    /// The queue that runs operations added with ``add(_:)``.
    let operationQueue: OperationQueue
    /// Set when the container that made this database is closed.
    let closedFlag: ClosedFlag

    /// Whether the container that made this database was closed.
    var isClosed: Bool { closedFlag.isSet }

    /// Throws when the container was closed.
    func checkOpen() throws(FogError) {
        if closedFlag.isSet { throw FogError(.internalError, message: "the container is closed") }
    }

    /// Who is asking, and in which database: the context of one call, for the account
    /// signed in now. Each call reads it once and passes it down, so that it acts for one
    /// account from start to end (one lock, no allocation).
    ///
    /// The context of the last account read is kept, with the account's version: while the
    /// version is the same the account is, and the kept context is returned. A sign-in, a
    /// sign-out or a status change moves the version before it returns, so the next call
    /// builds the context again from the new account.
    var context: DatabaseContext {
        let version = account.version
        if let context = cachedContext.withLock({ $0.version == version ? $0.context : nil }) { return context }
        let (state, current) = account.currentWithVersion
        let context = Self.build(baseContext, for: state)
        cachedContext.withLock { $0 = (current, context) }
        return context
    }

    /// `base` with the account `state`: its user, if usable, and its problem.
    private static func build(_ base: DatabaseContext, for state: Account.State) -> DatabaseContext {
        var context = base
        context.user = state.usableRecordName
        context.accountProblem = state.problem
        return context
    }

    init(
        scope: Scope, engine: StoreEngine, account: Account, configuration: Container.Configuration, closedFlag: ClosedFlag,
        faults: FaultInjector? = nil, link: ContainerLink = ContainerLink()
    ) {
        self.account = account
        self.link = link
        self.databaseScope = scope
        self.closedFlag = closedFlag
        self.operationQueue = OperationQueue()
        operationQueue.name = "FogKit.Database.\(scope)"
        self.engine = engine
        let baseContext = DatabaseContext(
            scope: scope, user: nil, tombstoneRetention: configuration.tombstoneRetention,
            notificationRetention: configuration.notificationRetention,
            feeds: configuration.changeFeeds.feedZones, schemaMode: configuration.environment.schemaMode, faults: faults,
            quotas: StorageQuotas(
                perUser: configuration.userStorageQuota.map(Int64.init),
                publicDatabase: configuration.publicStorageQuota.map(Int64.init)))
        self.baseContext = baseContext
        let (state, version) = account.currentWithVersion
        self.cachedContext = Mutex((version, Self.build(baseContext, for: state)))
        var limits = configuration.limits.requestLimits
        limits.maximumAssetSize = configuration.maximumAssetSize
        self.limits = limits
        self.environment = configuration.environment
    }

    /// The scope of a database (CloudKit's `CKDatabase.Scope`).
    public enum Scope: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The public database, shared by all users of the container.
        case `public` = 1
        /// A user's private database.
        case `private` = 2
        /// The zones other users share with a user.
        case shared = 3

        /// `public`, `private` or `shared`.
        public var description: String {
            switch self {
            case .public: "public"
            case .private: "private"
            case .shared: "shared"
            }
        }
    }

    /// `<Database scope>`.
    public var description: String { "<Database \(databaseScope)>" }
}

/// A flag a container sets when it closes, shared with its databases.
final class ClosedFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    /// Sets the flag; returns whether this call set it.
    func set() -> Bool {
        value.withLock { value in
            defer { value = true }
            return !value
        }
    }
}

/// A weak reference from a container's databases to the container, which owns them.
final class ContainerLink: Sendable {
    private struct Box: @unchecked Sendable { weak var container: Container? }
    private let box = Mutex(Box())

    /// The container, unless it was released.
    var container: Container? { box.withLock { $0.container } }

    func set(_ container: Container) { box.withLock { $0.container = container } }
}
