import FogStorage
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The connections of one ``PostgresStore``: at most ``size`` at once (more only for a read
/// nested in a transaction of the same thread), opened when first needed, kept when returned
/// healthy, and dropped when they fail.
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

    /// A connection for one transaction: an idle one, or a new one. Waits while ``size`` are in
    /// use, unless `nested` (the calling thread holds one already: waiting could deadlock).
    func acquire(nested: Bool) throws(StorageError) -> PostgresConnection {
        if !nested { permits.wait() }
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
            if !nested { permits.signal() }
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
        if !nested { permits.signal() }
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
