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
    var context: DatabaseContext {
        let state = account.current
        var context = baseContext
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
        self.baseContext = DatabaseContext(
            scope: scope, user: nil, tombstoneRetention: configuration.tombstoneRetention,
            notificationRetention: configuration.notificationRetention,
            feeds: configuration.changeFeeds.feedZones, schemaMode: configuration.environment.schemaMode, faults: faults,
            quotas: StorageQuotas(
                perUser: configuration.userStorageQuota.map(Int64.init),
                publicDatabase: configuration.publicStorageQuota.map(Int64.init)))
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
