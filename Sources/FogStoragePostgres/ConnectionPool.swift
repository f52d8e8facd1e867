import FogStorage
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The connections of this process to one database of one server, shared by every
/// ``PostgresStore`` open on it (``shared(address:server:synchronousCommit:)``): at most
/// ``size`` at once (more only for a transaction begun while the same thread holds one of the
/// pool's connections), opened when first needed, kept when returned healthy, and dropped when
/// they fail. Sharing keeps a process within its few connections however many containers it
/// opens (a server opens one per user), so many processes fit PostgreSQL's connection limit.
final class ConnectionPool: Sendable {
    /// The most connections in use at once (and kept idle).
    let size: Int
    private let configuration: PostgresConnection.Configuration
    private let server: String
    private let permits: DispatchSemaphore
    private let state = Mutex(State())
    private let nextID = Atomic<Int>(0)

    static let logger = Logger(label: "FogStoragePostgres", factory: { _ in SwiftLogNoOpLogHandler() })

    private struct State {
        var idle: [PostgresConnection] = []
        var isClosed = false
    }

    init(address: PostgresAddress, server: String, synchronousCommit: Bool) {
        var configuration: PostgresConnection.Configuration
        if let socket = address.socketPath {
            configuration = .init(unixSocketPath: socket, username: address.user, password: address.password, database: address.database)
        } else {
            configuration = .init(
                host: address.host ?? "localhost", port: address.port, username: address.user, password: address.password,
                database: address.database, tls: .disable)
        }
        configuration.options.connectTimeout = .seconds(5)
        // The store's durability, for every transaction of the connection (no round trip).
        configuration.options.additionalStartupParameters = [("synchronous_commit", synchronousCommit ? "on" : "off")]
        self.configuration = configuration
        self.server = server
        self.size = address.poolSize
        self.permits = DispatchSemaphore(value: address.poolSize)
    }

    /// Opens one connection, blocking. Not on an event loop.
    static func connect(
        _ configuration: PostgresConnection.Configuration, id: Int, server: String
    ) throws(StorageError)
        -> PostgresConnection
    {
        do {
            return try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: id, logger: logger
            ).wait()
        } catch {
            throw .temporarilyUnavailable("PostgreSQL at \(server): cannot connect: \(PostgresFailure.reason(error))")
        }
    }

    // MARK: Sharing

    private struct Share {
        let pool: ConnectionPool
        var holders: Int
    }

    private static let shares = Mutex<[String: Share]>([:])
    /// The key of this pool in ``shares`` (empty for a pool of its own).
    private let shareKey = Mutex("")

    /// The pool of this process for `address`'s server, database, user, pool size and commit
    /// mode, made on first use. Balance each call with ``releaseShare()``.
    static func shared(address: PostgresAddress, server: String, synchronousCommit: Bool) -> ConnectionPool {
        let key = [
            address.socketPath ?? "", address.host ?? "", "\(address.port)", address.user, address.password ?? "", address.database,
            "\(address.poolSize)", "\(synchronousCommit)",
        ].joined(separator: "\u{0}")
        return shares.withLock { shares in
            if var share = shares[key], !share.pool.isClosed {
                share.holders += 1
                shares[key] = share
                return share.pool
            }
            let pool = ConnectionPool(address: address, server: server, synchronousCommit: synchronousCommit)
            pool.shareKey.withLock { $0 = key }
            shares[key] = Share(pool: pool, holders: 1)
            return pool
        }
    }

    /// Gives up one hold of a shared pool; the last one closes it. (A pool of its own closes.)
    func releaseShare() {
        let key = shareKey.withLock { $0 }
        guard !key.isEmpty else {
            close()
            return
        }
        let last = Self.shares.withLock { shares -> Bool in
            guard var share = shares[key], share.pool === self else { return true }
            share.holders -= 1
            shares[key] = share.holders == 0 ? nil : share
            return share.holders == 0
        }
        if last { close() }
    }

    var isClosed: Bool { state.withLock { $0.isClosed } }

    // MARK: Connections

    /// How many connections of each pool the current thread holds, and for each whether it
    /// took a permit (a stack: transactions nest).
    private static func heldPermits(_ pool: ConnectionPool) -> [Bool] {
        (Thread.current.threadDictionary[ObjectIdentifier(pool).debugDescription] as? [Bool]) ?? []
    }

    private static func setHeldPermits(_ pool: ConnectionPool, _ held: [Bool]) {
        Thread.current.threadDictionary[ObjectIdentifier(pool).debugDescription] = held.isEmpty ? nil : held
    }

    /// A connection for one transaction: an idle one, or a new one. Waits while ``size`` are in
    /// use, unless the calling thread holds one of this pool's already (`nested`, or a
    /// transaction of another store on the same server): waiting could deadlock.
    func acquire(nested: Bool) throws(StorageError) -> PostgresConnection {
        var held = Self.heldPermits(self)
        let takesPermit = !nested && held.isEmpty
        if takesPermit { permits.wait() }
        let connection: PostgresConnection
        do {
            connection = try connect(releasingPermitOnFailure: takesPermit)
        } catch {
            throw error
        }
        held.append(takesPermit)
        Self.setHeldPermits(self, held)
        return connection
    }

    private func connect(releasingPermitOnFailure takesPermit: Bool) throws(StorageError) -> PostgresConnection {
        do throws(StorageError) {
            while true {
                let idle = try state.withLock { state throws(StorageError) -> PostgresConnection? in
                    if state.isClosed { throw .closed }
                    return state.idle.popLast()
                }
                guard let idle else { break }
                if !idle.isClosed { return idle }
            }
            return try Self.connect(configuration, id: nextID.add(1, ordering: .relaxed).newValue, server: server)
        } catch {
            if takesPermit { permits.signal() }
            throw error
        }
    }

    /// Gives back a connection from ``acquire(nested:)``; `healthy` when its transaction ended
    /// cleanly (a connection whose state is unknown is closed).
    func release(_ connection: PostgresConnection, nested: Bool, healthy: Bool) {
        let kept = state.withLock { state -> Bool in
            guard healthy, !state.isClosed, !connection.isClosed, state.idle.count < size else { return false }
            state.idle.append(connection)
            return true
        }
        if !kept { Self.close(connection) }
        var held = Self.heldPermits(self)
        let tookPermit = held.popLast() ?? !nested
        Self.setHeldPermits(self, held)
        if tookPermit { permits.signal() }
    }

    /// Closes `connection` without waiting, keeping it alive until it is closed (postgres-nio
    /// asserts that a connection is closed before it goes away).
    static func close(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// Closes the idle connections; later acquisitions throw ``StorageError/closed``.
    func close() {
        let idle = state.withLock { state -> [PostgresConnection] in
            state.isClosed = true
            defer { state.idle.removeAll() }
            return state.idle
        }
        for connection in idle { try? connection.close().wait() }
    }
}
