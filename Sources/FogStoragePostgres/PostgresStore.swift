import FogStorage
import Foundation
import PostgresNIO
import Synchronization

/// A FogStorage store kept by a PostgreSQL server: each table of the store is a table of
/// `bytea` keys (and values) in one PostgreSQL schema, beside a metadata table `fog_tables`
/// that records each table's layout.
///
/// Open one with ``open(at:configuration:)`` and a `postgres://` URL (see ``PostgresAddress``).
/// Several store objects (in one process or many) may use one store at once: PostgreSQL
/// isolates their transactions.
///
/// - Reads run on the calling thread in a `REPEATABLE READ READ ONLY` transaction: one
///   snapshot per ``read(_:)``.
/// - Writes run in `SERIALIZABLE` transactions. A conflict with another transaction
///   (SQLSTATE 40001 or 40P01) rolls the write back and runs its body again, after a short
///   random pause, up to ``maximumWriteAttempts`` times; then the write throws
///   ``StorageError/temporarilyUnavailable(_:)``.
/// - Each store object has a pool of at most ``PostgresAddress/poolSize`` connections (4 by
///   default; `?pool=N` in the URL), opened when first needed. A connection that fails is
///   dropped and a new one opened for the next transaction; while the server cannot be reached,
///   calls throw ``StorageError/temporarilyUnavailable(_:)``, and work again once it is back.
/// - Durability: ``StorageDurability/durable`` commits with `synchronous_commit = on`;
///   `relaxed` and `none` with `synchronous_commit = off` (a server crash may lose the last
///   commits, never corrupt the store).
public final class PostgresStore: Sendable {
    /// The store's address.
    public let address: PostgresAddress
    /// The configuration the store was opened with.
    public let configuration: StoreConfiguration
    /// The store's URL for messages (without the password).
    let server: String
    let pool: ConnectionPool
    private let tables: [String: Table]
    private let sqlNames: [String: String]
    /// The qualified name of the metadata table.
    let sqlMetadata: String
    /// Each table's layout in the store, as of the last commit of this object.
    private let layouts = Mutex<[String: TableLayout]>([:])
    private let state = Mutex(State())
    /// Left by each transaction that entered it: ``close()`` waits for the running ones.
    private let running = DispatchGroup()
    private let writeQueue = DispatchQueue(label: "FogStoragePostgres.write", attributes: .concurrent)
    private let commitCount = Atomic<Int>(0)
    private let requestCount = Atomic<Int>(0)

    /// Entries a scan fetches per round trip.
    public static let scanPageSize = 512
    /// How many times a write runs before a conflict with other transactions makes it throw.
    public static let maximumWriteAttempts = 20
    /// The key of the advisory lock under which opens create tables.
    static let creationLock: Int64 = 0x466F_674B_6974  // "FogKit"
    /// The key of the advisory lock writers of this store hold from before `BEGIN` until after
    /// `COMMIT` (FNV-1a of the database and schema): one writer at a time, in every process.
    let writerLock: Int64

    private struct State {
        var isClosed = false
    }

    init(address: PostgresAddress, url: URL, configuration: StoreConfiguration) {
        self.address = address
        self.configuration = configuration
        self.server = Self.displayName(of: url)
        self.pool = ConnectionPool.shared(address: address, server: server, synchronousCommit: configuration.durability == .durable)
        let schema = SQLNames.quote(address.schema)
        var tables: [String: Table] = [:]
        var sqlNames: [String: String] = [:]
        for (index, name) in Set(configuration.tables).sorted().enumerated() {
            tables[name] = Table(name: name, identifier: UInt32(index))
            sqlNames[name] = schema + "." + SQLNames.quote(SQLNames.table(name))
        }
        self.tables = tables
        self.sqlNames = sqlNames
        self.sqlMetadata = schema + "." + SQLNames.quote(SQLNames.metadata)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "FogKit writer \(address.database) \(address.schema)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        self.writerLock = Int64(bitPattern: hash)
    }

    /// Opens the store at `url` with the tables of `configuration`, creating the schema and
    /// the missing tables when the configuration allows it (in one transaction, under an
    /// advisory lock, so concurrent opens are safe).
    ///
    /// - Throws: ``StorageError/notFound`` for a missing table the configuration does not create
    ///   (nothing is created); ``StorageError/temporarilyUnavailable(_:)`` when the server cannot
    ///   be reached; ``StorageError/other(_:)`` for a URL ``PostgresAddress`` does not read;
    ///   ``StorageError/incompatible`` for a table of a layout this version does not know.
    public static func open(at url: URL, configuration: StoreConfiguration) throws -> PostgresStore {
        let address: PostgresAddress
        do { address = try PostgresAddress(url) } catch { throw StorageError.other(error.description) }
        let store = PostgresStore(address: address, url: url, configuration: configuration)
        do {
            try store.prepareTables()
        } catch {
            store.pool.releaseShare()
            throw error
        }
        return store
    }

    /// Creates what is missing (when allowed) and reads the layouts of the tables.
    private func prepareTables() throws {
        let layouts = try transaction(.setup) { session throws -> [String: TableLayout] in
            try session.run(
                PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(\(Self.creationLock))"), "take the table creation lock")
            var statement = SQLStatement()
            statement.append(
                "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = \(statement.bind(text: address.schema)) AND tablename = 'fog_tables')"
            )
            let hasMetadata = try session.run(statement.query, "look for the store").rows.first?.decode(Bool.self) ?? false
            if !hasMetadata {
                guard configuration.createsMissingTables else { throw StorageError.notFound }
                try session.run(
                    PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(SQLNames.quote(address.schema))"), "create the schema")
                try session.run(
                    PostgresQuery(unsafeSQL: "CREATE TABLE IF NOT EXISTS \(sqlMetadata) (name text PRIMARY KEY, layout text NOT NULL)"),
                    "create the metadata table")
            }
            var stored: [String: TableLayout] = [:]
            for row in try session.run(PostgresQuery(unsafeSQL: "SELECT name, layout FROM \(sqlMetadata)"), "read the tables").rows {
                let (name, layoutName) = try row.decode((String, String).self)
                guard let layout = SQLNames.layout(named: layoutName) else { throw StorageError.incompatible }
                stored[name] = layout
            }
            for name in tables.keys.sorted() where stored[name] == nil {
                guard configuration.createsMissingTables else { throw StorageError.notFound }
                let layout = configuration.layout(ofTable: name)
                try session.run(
                    PostgresQuery(unsafeSQL: "CREATE TABLE IF NOT EXISTS \(sqlNames[name]!) \(SQLNames.columns(layout))"),
                    "create table \(name)")
                var insert = SQLStatement()
                insert.append(
                    "INSERT INTO \(sqlMetadata) (name, layout) VALUES (\(insert.bind(text: name)), \(insert.bind(text: SQLNames.layoutName(layout))))"
                )
                try session.run(insert.query, "record table \(name)")
                stored[name] = layout
            }
            return stored
        }
        self.layouts.withLock { $0 = layouts }
    }

    /// Closes the store: waits for the running transactions, then closes the pool's
    /// connections. Each store object is opened once, so one call closes it; later calls
    /// throw ``StorageError/closed`` (and more calls to `close()` do nothing).
    public func close() {
        let closing = state.withLock { state -> Bool in
            defer { state.isClosed = true }
            return !state.isClosed
        }
        guard closing else { return }
        precondition(TransactionDepth.current(of: self) == 0, "FogStorage misuse: close() called from inside a transaction")
        running.wait()
        pool.releaseShare()
    }

    /// Whether ``close()`` has closed the store.
    public var isClosed: Bool { state.withLock { $0.isClosed } }

    /// The durability of the store's commits: the configuration's.
    public var durability: StorageDurability { configuration.durability }

    // MARK: - Tables

    /// The table named `name`, which must be one of the configuration's tables.
    public func table(named name: String) -> Table {
        guard let table = tables[name] else {
            preconditionFailure("FogStorage misuse: table \(name) was not in the store's configuration")
        }
        return table
    }

    /// The qualified SQL name of `table`.
    func sqlName(of table: Table) -> String {
        guard let name = sqlNames[table.name] else {
            preconditionFailure("FogStorage misuse: table \(table) does not belong to this store")
        }
        return name
    }

    /// The layout of `table` as of the last commit of this object.
    func layout(of table: Table) throws(StorageError) -> TableLayout {
        guard let layout = layouts.withLock({ $0[table.name] }) else { throw .notFound }
        return layout
    }

    // MARK: - Transactions

    /// Runs `body` in a read-only snapshot (`REPEATABLE READ READ ONLY`) on the calling thread.
    ///
    /// - Throws: ``StorageError/temporarilyUnavailable(_:)`` when the server cannot be reached
    ///   or the connection drops.
    public func read<R>(_ body: (PostgresReadTransaction) throws -> R) throws -> R {
        try transaction(.read) { session in try body(PostgresReadTransaction(session: session, isReadOnly: true)) }
    }

    /// Runs `body` in a `SERIALIZABLE` transaction on a thread of the store's own (not Swift's
    /// cooperative pool) and commits it; see ``writeAndWait(_:)``.
    public func write<T: Sendable>(_ body: @escaping @Sendable (PostgresWriteTransaction) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            writeQueue.async {
                continuation.resume(with: Result { try self.writeAndWait(body) })
            }
        }
    }

    /// Runs `body` in a `SERIALIZABLE` transaction on the calling thread and commits it.
    ///
    /// A conflict with a concurrent transaction rolls it back and runs `body` again (up to
    /// ``maximumWriteAttempts`` times). If `body` throws, the transaction is rolled back and the
    /// error rethrown. When the connection drops, nothing of the transaction is kept (and if it
    /// dropped during the commit, whose outcome is then unknown, the write is not run again):
    /// the call throws ``StorageError/temporarilyUnavailable(_:)``.
    public func writeAndWait<T>(_ body: @escaping (PostgresWriteTransaction) throws -> T) throws -> T {
        try write(alone: false, body)
    }

    /// ``writeAndWait(_:)``, in the kind of transaction in which
    /// ``PostgresWriteTransaction/replaceWithEmpty(_:)`` may run. (Every write of this store is a
    /// transaction of its own.)
    public func writeAloneAndWait<T>(_ body: @escaping (PostgresWriteTransaction) throws -> T) throws -> T {
        try write(alone: true, body)
    }

    /// Runs `body` in a write transaction, then the works it held until the commit.
    private func write<T>(alone: Bool, _ body: (PostgresWriteTransaction) throws -> T) throws -> T {
        try transaction(.write(alone: alone)) { session in
            let txn = PostgresWriteTransaction(session: session)
            let result = try body(txn)
            try txn.runWritesBeforeCommit()
            return result
        }
    }

    /// A kind of transaction.
    enum Kind {
        case read
        case write(alone: Bool)
        /// Opening: `READ COMMITTED`, so that each statement sees what other opens committed
        /// before it took the creation lock.
        case setup

        var begin: String {
            switch self {
            case .read: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
            case .write: "BEGIN ISOLATION LEVEL SERIALIZABLE"
            case .setup: "BEGIN ISOLATION LEVEL READ COMMITTED"
            }
        }

        var writes: Bool {
            if case .read = self { return false }
            return true
        }
    }

    /// Runs `body` in a transaction of `kind` on a pooled connection of the calling thread.
    func transaction<R>(_ kind: Kind, _ body: (Session) throws -> R) throws -> R {
        try state.withLock { state throws(StorageError) in
            if state.isClosed { throw .closed }
            running.enter()
        }
        defer { running.leave() }
        let nested = TransactionDepth.enter(self) > 1
        defer { TransactionDepth.leave(self) }
        let alone = if case .write(alone: true) = kind { true } else { false }
        if case .write = kind { requestCount.add(1, ordering: .relaxed) }
        var attempt = 0
        var staleConnections = 0
        // Writers queue on the store's advisory lock, taken before `BEGIN` so that the
        // snapshot begins after the previous writer's commit. Every FogKit commit advances the
        // store's commit sequence, so writers could never commit in parallel; without the queue
        // they conflict and retry (twenty times in a row, seen with three processes). A write
        // nested in another transaction of this thread does not queue (it would wait for its
        // own outer transaction).
        let queues = kind.writes && !nested
        while true {
            attempt += 1
            let connection = try pool.acquire(nested: nested)
            let session = Session(connection: connection, store: self, writes: kind.writes, alone: alone)
            /// Gives the connection back, first leaving the writers' queue.
            func release(healthy: Bool) {
                var healthy = healthy
                if queues && healthy {
                    healthy = (try? session.runControl("SELECT pg_advisory_unlock(\(writerLock))")) != nil
                }
                pool.release(connection, nested: nested, healthy: healthy)
            }
            do {
                if queues { _ = try session.runControl("SELECT pg_advisory_lock(\(writerLock))") }
                _ = try session.runControl(kind.begin)
            } catch {
                // Unhealthy: the connection is closed, which also leaves the queue.
                pool.release(connection, nested: nested, healthy: false)
                // An idle connection the server closed meanwhile (a restart): nothing began.
                if PostgresFailure.isConnectionLost(error) && staleConnections < pool.size {
                    staleConnections += 1
                    attempt -= 1
                    continue
                }
                throw PostgresFailure.storageError(error, what: "begin a transaction", server: server)
            }
            let result: R
            do {
                result = try body(session)
                try session.sendPendingWrites()
                if let failure = session.failure {
                    // The body caught an error of PostgreSQL, which aborted the transaction:
                    // committing would roll it back.
                    throw PostgresFailure.storageError(failure, what: "commit after a failed statement", server: server)
                }
            } catch {
                let healthy = !session.lostConnection && (try? session.runControl("ROLLBACK")) != nil
                release(healthy: healthy)
                if session.failedOnConflict {
                    if case .write = kind, attempt < Self.maximumWriteAttempts {
                        Self.pause(beforeAttempt: attempt + 1)
                        continue
                    }
                    throw StorageError.temporarilyUnavailable(
                        "PostgreSQL at \(server): a write conflicted with concurrent transactions \(attempt) times in a row")
                }
                throw error
            }
            do {
                let outcome = try session.runControl("COMMIT")
                // An aborted transaction "commits" as ROLLBACK.
                if outcome.metadata.command != "COMMIT" {
                    release(healthy: true)
                    throw StorageError.other("PostgreSQL at \(server): the transaction was rolled back (\(outcome.metadata.command))")
                }
            } catch let error as StorageError {
                throw error
            } catch {
                let lost = PostgresFailure.isConnectionLost(error)
                release(healthy: !lost)
                if let state = PostgresFailure.sqlState(error), PostgresFailure.retryableStates.contains(state), kind.writes,
                    attempt < Self.maximumWriteAttempts
                {
                    Self.pause(beforeAttempt: attempt + 1)
                    continue
                }
                if lost && kind.writes {
                    throw StorageError.temporarilyUnavailable(
                        "PostgreSQL at \(server): the connection dropped during a commit, whose outcome is unknown: \(PostgresFailure.reason(error))"
                    )
                }
                throw PostgresFailure.storageError(error, what: "commit", server: server)
            }
            release(healthy: true)
            if case .write = kind {
                commitCount.add(1, ordering: .relaxed)
                if !session.replacedLayouts.isEmpty {
                    layouts.withLock { $0.merge(session.replacedLayouts) { _, new in new } }
                }
            }
            return result
        }
    }

    /// A random pause of up to 2^attempt milliseconds (at most 64), so that conflicting writers
    /// do not meet again at once.
    private static func pause(beforeAttempt attempt: Int) {
        let ceiling = 1 << min(attempt, 6)
        usleep(UInt32(Int.random(in: 0...(ceiling * 1000))))
    }

    // MARK: - Maintenance

    /// Write transactions committed through this object.
    var commits: Int { commitCount.load(ordering: .relaxed) }
    /// Write requests made of this object (those that threw too; each is one request however
    /// many times it ran).
    var writeRequests: Int { requestCount.load(ordering: .relaxed) }
}

/// How many transactions of a store the current thread is in: a transaction begun inside
/// another does not wait for a pooled connection (waiting could deadlock).
enum TransactionDepth {
    private static func key(_ store: PostgresStore) -> String {
        "FogStoragePostgres.depth.\(UInt(bitPattern: ObjectIdentifier(store)))"
    }

    static func current(of store: PostgresStore) -> Int {
        (Thread.current.threadDictionary[key(store)] as? NSNumber)?.intValue ?? 0
    }

    /// Enters a transaction; returns the new depth.
    static func enter(_ store: PostgresStore) -> Int {
        let depth = current(of: store) + 1
        Thread.current.threadDictionary[key(store)] = NSNumber(value: depth)
        return depth
    }

    static func leave(_ store: PostgresStore) {
        let depth = current(of: store) - 1
        Thread.current.threadDictionary[key(store)] = depth == 0 ? nil : NSNumber(value: depth)
    }
}
