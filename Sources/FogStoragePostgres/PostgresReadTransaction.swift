import FogStorage
import PostgresNIO

/// A read transaction of a ``PostgresStore``: a `REPEATABLE READ READ ONLY` transaction on one
/// pooled connection, so every call sees one snapshot; or the read view of a write, which sees
/// the write's own changes.
///
/// Each call is one statement (one round trip); a scan fetches ``PostgresStore/scanPageSize``
/// entries per round trip, so a large table is never read whole. Buffers handed to closures
/// are copies of what the server sent, valid only during the call.
public struct PostgresReadTransaction: StorageReadTransaction {
    let session: Session
    /// `false` for the read view of a write.
    public let isReadOnly: Bool

    init(session: Session, isReadOnly: Bool) {
        self.session = session
        self.isReadOnly = isReadOnly
    }

    /// Calls `body` with the value under `key` (a multi-value table's first value), or returns `nil`.
    public func withValue<R>(forKey key: [UInt8], in table: Table, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try session.check(key: key)
        let multi = try session.layout(of: table).isMultiValue
        var statement = SQLStatement()
        statement.append("SELECT v FROM \(session.sqlName(table)) WHERE k = \(statement.bind(key))")
        if multi { statement.append(" ORDER BY v LIMIT 1") }
        let result = try session.run(statement.query, "read a value of \(table)")
        guard let row = result.rows.first else { return nil }
        return try row.bytes(at: 0).withUnsafeReadableBytes(body)
    }

    /// ``withValue(forKey:in:_:)`` for a key given as raw bytes.
    public func withValue<R>(
        forKey key: UnsafeRawBufferPointer, in table: Table, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        try withValue(forKey: Array(key), in: table, body)
    }

    /// The value under `key`, copied out, or `nil`.
    public func value(forKey key: [UInt8], in table: Table) throws -> [UInt8]? {
        try withValue(forKey: key, in: table) { Array($0) }
    }

    /// Whether `key` is in `table`.
    public func contains(_ key: [UInt8], in table: Table) throws -> Bool {
        try session.check(key: key)
        var statement = SQLStatement()
        statement.append("SELECT 1 FROM \(session.sqlName(table)) WHERE k = \(statement.bind(key)) LIMIT 1")
        return try !session.run(statement.query, "look up a key of \(table)").rows.isEmpty
    }

    /// Visits the entries of `table` within `range`, a page of entries per round trip.
    public func scan(
        _ table: Table, range: ScanRange, reverse: Bool,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try scanPages(table, range: range, reverse: reverse, after: nil, body)
    }

    /// Visits the pairs of a multi-value table after `position`, a page per round trip.
    public func scan(
        _ table: Table, range: ScanRange, reverse: Bool, after position: (key: [UInt8], value: [UInt8]),
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try session.requireMultiValue(table)
        try scanPages(table, range: range, reverse: reverse, after: position, body)
    }

    /// The scan: pages ordered by key (and value), each starting after the last entry of the one before.
    private func scanPages(
        _ table: Table, range: ScanRange, reverse: Bool, after position: (key: [UInt8], value: [UInt8])?,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let multi = try session.layout(of: table).isMultiValue
        let pageSize = PostgresStore.scanPageSize
        let direction = reverse ? " DESC" : ""
        let order = multi ? "k\(direction), v\(direction)" : "k\(direction)"
        let comparison = reverse ? "<" : ">"
        var cursor: (key: [UInt8], value: [UInt8])? = position
        while true {
            var statement = SQLStatement()
            var extra: [String] = []
            if let cursor {
                extra.append(
                    multi
                        ? "(k, v) \(comparison) (\(statement.bind(cursor.key)), \(statement.bind(cursor.value)))"
                        : "k \(comparison) \(statement.bind(cursor.key))")
            }
            statement.append("SELECT k, v FROM \(session.sqlName(table))")
            statement.appendWhere(range, extra: extra)
            statement.append(" ORDER BY \(order) LIMIT \(pageSize)")
            let rows = try session.run(statement.query, "scan \(table)").rows
            var last: (ByteBuffer, ByteBuffer)?
            for row in rows {
                let key = row.bytes(at: 0)
                let value = row.bytes(at: 1)
                let goOn = try key.withUnsafeReadableBytes { k in try value.withUnsafeReadableBytes { v in try body(k, v) } }
                if !goOn { return }
                last = (key, value)
            }
            guard rows.count == pageSize, let last else { return }
            cursor = (Array(last.0.readableBytesView), multi ? Array(last.1.readableBytesView) : [])
        }
    }

    /// The number of values under `key`.
    public func valueCount(forKey key: [UInt8], in table: Table) throws -> Int {
        try session.check(key: key)
        var statement = SQLStatement()
        statement.append("SELECT count(*) FROM \(session.sqlName(table)) WHERE k = \(statement.bind(key))")
        return try count(session.run(statement.query, "count the values of a key of \(table)"))
    }

    /// The number of entries of `table`.
    public func count(of table: Table) throws -> Int {
        try count(session.run(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(session.sqlName(table))"), "count \(table)"))
    }

    /// The layout `table` was created with (from the store's metadata table).
    public func layout(of table: Table) throws -> TableLayout {
        try session.layout(of: table)
    }

    private func count(_ result: PostgresQueryResult) throws -> Int {
        guard let row = result.rows.first else { return 0 }
        return try row.decode(Int.self)
    }
}
