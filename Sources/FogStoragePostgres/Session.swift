import FogStorage
import Foundation
import PostgresNIO

/// One transaction on one pooled connection: runs the statements of a read or a write,
/// blocking the calling thread (never an event loop) until PostgreSQL answers.
///
/// A statement PostgreSQL refuses aborts the whole transaction on the server, so the session
/// remembers the first such failure (``failure``): a write whose body caught the error must not
/// commit, and one that failed on a conflict runs again.
final class Session {
    let connection: PostgresConnection
    let store: PostgresStore
    /// Whether the transaction writes.
    let writes: Bool
    /// Whether the transaction is one of ``PostgresStore/writeAloneAndWait(_:)``.
    let alone: Bool
    /// The first failure PostgreSQL reported in this transaction (it aborts the transaction).
    private(set) var failure: (any Error)?
    /// Layouts this transaction gave its tables (``PostgresWriteTransaction/replaceWithEmpty(_:)``),
    /// by table name; the store adopts them when it commits.
    var replacedLayouts: [String: TableLayout] = [:]
    /// Puts not sent yet (``PendingWrites``): sent before the next statement or the commit.
    private var pending = PendingWrites()
    /// Works held until the end of the request (``PostgresWriteTransaction/writeBeforeCommit(key:_:)``).
    let writesBeforeCommit = WritesBeforeCommit<PostgresWriteTransaction>()

    init(connection: PostgresConnection, store: PostgresStore, writes: Bool, alone: Bool) {
        self.connection = connection
        self.store = store
        self.writes = writes
        self.alone = alone
    }

    /// Runs `query` and collects its rows. `what` says what it does, for messages.
    @discardableResult
    func run(_ query: PostgresQuery, _ what: @autoclosure () -> String) throws(StorageError) -> PostgresQueryResult {
        try sendPendingWrites()
        return try execute(query, what())
    }

    /// Keeps a put of `value` under `key` in the table named `name` for the next statement
    /// (``PendingWrites``).
    func deferPut(_ value: [UInt8], forKey key: [UInt8], into name: String, multiValue: Bool) {
        pending.put(value, forKey: key, into: name, multiValue: multiValue)
    }

    /// Sends the pending puts, one statement per table. The store calls it before `COMMIT`.
    func sendPendingWrites() throws(StorageError) {
        guard !pending.isEmpty else { return }
        for (query, table) in pending.takeStatements() {
            try execute(query, "put values in \(table)")
        }
    }

    /// Runs `query` now, remembering a failure.
    @discardableResult
    private func execute(_ query: PostgresQuery, _ what: @autoclosure () -> String) throws(StorageError) -> PostgresQueryResult {
        if let failure {
            throw PostgresFailure.storageError(failure, what: "\(what()) after an earlier failure in the transaction", server: store.server)
        }
        do {
            return try Self.wait(for: query, on: connection)
        } catch {
            self.failure = error
            throw PostgresFailure.storageError(error, what: what(), server: store.server)
        }
    }

    /// Runs `query` outside the failure bookkeeping (BEGIN, COMMIT, ROLLBACK); the caller
    /// handles the error.
    func runControl(_ sql: String) throws -> PostgresQueryResult {
        try Self.wait(for: PostgresQuery(unsafeSQL: sql), on: connection)
    }

    /// Sends `query` on `connection` and blocks until its result.
    ///
    /// postgres-nio never completes a query written to a connection that has just closed (the
    /// write fails with nobody to tell), so this checks the connection before sending, and
    /// every second while waiting; a connection found closed twice in a row with no answer
    /// throws ``ConnectionLost``.
    static func wait(for query: PostgresQuery, on connection: PostgresConnection) throws -> PostgresQueryResult {
        if connection.isClosed { throw ConnectionLost() }
        let future = connection.query(query, logger: ConnectionPool.logger)
        let done = DispatchSemaphore(value: 0)
        future.whenComplete { _ in done.signal() }
        var closedChecks = 0
        while done.wait(timeout: .now() + .seconds(1)) == .timedOut {
            if connection.isClosed {
                closedChecks += 1
                if closedChecks >= 2 { throw ConnectionLost() }
            }
        }
        return try future.wait()
    }

    /// Whether a failure of this transaction was a conflict with another (it may run again).
    var failedOnConflict: Bool {
        guard let failure, let state = PostgresFailure.sqlState(failure) else { return false }
        return PostgresFailure.retryableStates.contains(state)
    }

    /// Whether a failure lost the connection.
    var lostConnection: Bool {
        guard let failure else { return false }
        return PostgresFailure.isConnectionLost(failure)
    }

    // MARK: - Tables

    /// The layout `table` has in this transaction.
    func layout(of table: Table) throws(StorageError) -> TableLayout {
        if let replaced = replacedLayouts[table.name] { return replaced }
        return try store.layout(of: table)
    }

    /// The qualified SQL name of `table`.
    func sqlName(_ table: Table) -> String { store.sqlName(of: table) }
}

/// The connection closed under a statement that got no answer.
struct ConnectionLost: Error, CustomStringConvertible {
    var description: String { "the connection closed" }
}

// MARK: - Checks

extension Session {
    /// Throws the error the contract gives for `key`: empty, or too long.
    @inline(__always)
    func check(key: [UInt8]) throws(StorageError) {
        if key.isEmpty { throw .emptyKey }
        if key.count > PostgresStore.maximumKeySize { throw .keyTooLarge }
    }

    /// Throws ``StorageError/valueTooLarge`` for a value too long for a multi-value table.
    @inline(__always)
    func check(multiValue value: [UInt8]) throws(StorageError) {
        if value.count > PostgresStore.maximumKeySize { throw .valueTooLarge }
    }

    /// Throws ``StorageError/incompatible`` unless `table` is multi-value.
    func requireMultiValue(_ table: Table) throws(StorageError) {
        guard try layout(of: table).isMultiValue else { throw .incompatible }
    }
}

extension PostgresRow {
    /// The bytes of column `index`, as a buffer (empty for NULL).
    @inline(__always)
    func bytes(at index: Int) -> ByteBuffer {
        var iterator = makeIterator()
        for _ in 0..<index { _ = iterator.next() }
        return iterator.next()?.bytes ?? ByteBuffer()
    }
}
