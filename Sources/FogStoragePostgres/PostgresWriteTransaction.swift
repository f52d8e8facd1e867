import FogStorage
import PostgresNIO

/// A write transaction of a ``PostgresStore``: a `SERIALIZABLE` transaction on one pooled
/// connection. Each call is one statement (one round trip), but puts, which answer nothing,
/// wait and go together with the next statement (``PendingWrites``); its reads see its writes.
public struct PostgresWriteTransaction: StorageWriteTransaction {
    let session: Session

    init(session: Session) { self.session = session }

    /// This transaction as a read transaction (same connection and transaction), which
    /// sees its writes.
    public var readView: PostgresReadTransaction { PostgresReadTransaction(session: session, isReadOnly: false) }

    /// `false`.
    public var isReadOnly: Bool { false }

    // MARK: - Reads

    /// See ``PostgresReadTransaction/withValue(forKey:in:_:)-(_,_,_)``.
    public func withValue<R>(forKey key: [UInt8], in table: Table, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try readView.withValue(forKey: key, in: table, body)
    }

    /// See ``PostgresReadTransaction/withValue(forKey:in:_:)-(UnsafeRawBufferPointer,_,_)``.
    public func withValue<R>(
        forKey key: UnsafeRawBufferPointer, in table: Table, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        try readView.withValue(forKey: key, in: table, body)
    }

    /// See ``PostgresReadTransaction/value(forKey:in:)``.
    public func value(forKey key: [UInt8], in table: Table) throws -> [UInt8]? { try readView.value(forKey: key, in: table) }

    /// See ``PostgresReadTransaction/contains(_:in:)``.
    public func contains(_ key: [UInt8], in table: Table) throws -> Bool { try readView.contains(key, in: table) }

    /// See ``PostgresReadTransaction/scan(_:range:reverse:_:)``.
    public func scan(
        _ table: Table, range: ScanRange, reverse: Bool,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try readView.scan(table, range: range, reverse: reverse, body)
    }

    /// See ``PostgresReadTransaction/scan(_:range:reverse:after:_:)``.
    public func scan(
        _ table: Table, range: ScanRange, reverse: Bool, after position: (key: [UInt8], value: [UInt8]),
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try readView.scan(table, range: range, reverse: reverse, after: position, body)
    }

    /// See ``PostgresReadTransaction/valueCount(forKey:in:)``.
    public func valueCount(forKey key: [UInt8], in table: Table) throws -> Int { try readView.valueCount(forKey: key, in: table) }

    /// See ``PostgresReadTransaction/count(of:)``.
    public func count(of table: Table) throws -> Int { try readView.count(of: table) }

    /// See ``PostgresReadTransaction/layout(of:)``.
    public func layout(of table: Table) throws -> TableLayout { try session.layout(of: table) }

    // MARK: - Writes

    /// Stores `value` under `key` (an upsert); in a multi-value table, adds the pair.
    ///
    /// The put is sent with the transaction's next statement or its commit, together with
    /// the other puts into the same table (one statement for all of them); a refusal is
    /// thrown by that statement, and the transaction does not commit.
    public func put(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws {
        try session.check(key: key)
        let multiValue = try session.layout(of: table).isMultiValue
        if multiValue { try session.check(multiValue: value) }
        session.deferPut(value, forKey: key, into: session.sqlName(table), multiValue: multiValue)
    }

    /// Stores a value of `count` bytes that `fill` writes (into a buffer then sent); `append` is
    /// only a hint and changes nothing here.
    public func put(
        count: Int, forKey key: [UInt8], in table: Table, append: Bool, _ fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws {
        let value = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
        try put(value, forKey: key, in: table)
    }

    /// Stores `value` under `key` when the key is absent.
    @discardableResult
    public func insert(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws -> Bool {
        try session.check(key: key)
        let name = session.sqlName(table)
        var statement = SQLStatement()
        if try session.layout(of: table).isMultiValue {
            try session.check(multiValue: value)
            let k = statement.bind(key)
            statement.append(
                "INSERT INTO \(name) (k, v) SELECT \(k), \(statement.bind(value)) WHERE NOT EXISTS (SELECT 1 FROM \(name) WHERE k = \(k))"
            )
        } else {
            statement.append(
                "INSERT INTO \(name) (k, v) VALUES (\(statement.bind(key)), \(statement.bind(value))) ON CONFLICT (k) DO NOTHING")
        }
        return try session.run(statement.query, "insert into \(table)").metadata.rows == 1
    }

    /// Removes `key` with all its values.
    @discardableResult
    public func delete(_ key: [UInt8], in table: Table) throws -> Bool {
        try session.check(key: key)
        var statement = SQLStatement()
        statement.append("DELETE FROM \(session.sqlName(table)) WHERE k = \(statement.bind(key))")
        return try (session.run(statement.query, "delete a key of \(table)").metadata.rows ?? 0) > 0
    }

    /// Removes every key within `range` in one statement; returns how many entries went.
    @discardableResult
    public func deleteAll(in table: Table, range: ScanRange) throws -> Int {
        var statement = SQLStatement()
        statement.append("DELETE FROM \(session.sqlName(table))")
        statement.appendWhere(range)
        return try session.run(statement.query, "delete a range of \(table)").metadata.rows ?? 0
    }

    /// Removes every entry of `table` (`DELETE`, not `TRUNCATE`, which would empty the table
    /// under the snapshots of concurrent reads).
    public func clear(_ table: Table) throws {
        try session.run(PostgresQuery(unsafeSQL: "DELETE FROM \(session.sqlName(table))"), "clear \(table)")
    }

    /// Adds the pair (`key`, `value`) to a multi-value table; `appending` is only a hint.
    @discardableResult
    public func addValue(_ value: [UInt8], forKey key: [UInt8], in table: Table, appending: Bool) throws -> Bool {
        try session.check(key: key)
        try session.requireMultiValue(table)
        try session.check(multiValue: value)
        var statement = SQLStatement()
        statement.append(
            "INSERT INTO \(session.sqlName(table)) (k, v) VALUES (\(statement.bind(key)), \(statement.bind(value))) ON CONFLICT DO NOTHING")
        return try session.run(statement.query, "add a value to \(table)").metadata.rows == 1
    }

    /// Adds the pair (`key`, `value`), which must sort after every pair of the table: it reads
    /// the last pair first (one more round trip) and throws ``StorageError/keyExists`` when the
    /// new pair does not come after it.
    public func appendValue(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws {
        try session.check(key: key)
        try session.requireMultiValue(table)
        try session.check(multiValue: value)
        let last = try session.run(
            PostgresQuery(unsafeSQL: "SELECT k, v FROM \(session.sqlName(table)) ORDER BY k DESC, v DESC LIMIT 1"),
            "read the last pair of \(table)"
        ).rows.first
        if let last {
            let lastKey = Array(last.bytes(at: 0).readableBytesView)
            let lastValue = Array(last.bytes(at: 1).readableBytesView)
            let after = lastKey == key ? lastValue.lexicographicallyPrecedes(value) : lastKey.lexicographicallyPrecedes(key)
            if !after { throw StorageError.keyExists }
        }
        try addValue(value, forKey: key, in: table, appending: true)
    }

    /// Removes the pair (`key`, `value`) from a multi-value table.
    @discardableResult
    public func removeValue(_ value: [UInt8], forKey key: [UInt8], in table: Table) throws -> Bool {
        try session.check(key: key)
        try session.requireMultiValue(table)
        var statement = SQLStatement()
        statement.append("DELETE FROM \(session.sqlName(table)) WHERE k = \(statement.bind(key)) AND v = \(statement.bind(value))")
        return try session.run(statement.query, "remove a value from \(table)").metadata.rows == 1
    }

    /// Drops `table` and creates it again, empty, with the layout the store's configuration
    /// gives it, recording the layout in the metadata table. Only in
    /// ``PostgresStore/writeAloneAndWait(_:)``.
    public func replaceWithEmpty(_ table: Table) throws {
        guard session.alone else {
            throw StorageError.other("FogStorage misuse: replaceWithEmpty(\(table)) outside writeAloneAndWait")
        }
        let layout = session.store.configuration.layout(ofTable: table.name)
        let name = session.sqlName(table)
        try session.run(PostgresQuery(unsafeSQL: "DROP TABLE \(name)"), "drop \(table)")
        try session.run(PostgresQuery(unsafeSQL: "CREATE TABLE \(name) \(SQLNames.columns(layout))"), "create \(table)")
        var statement = SQLStatement()
        statement.append(
            "UPDATE \(session.store.sqlMetadata) SET layout = \(statement.bind(text: SQLNames.layoutName(layout))) WHERE name = \(statement.bind(text: table.name))"
        )
        try session.run(statement.query, "record the layout of \(table)")
        session.replacedLayouts[table.name] = layout
    }
}
