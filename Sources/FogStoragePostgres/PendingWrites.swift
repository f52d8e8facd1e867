import FogStorage
import PostgresNIO

/// The puts of a write transaction not sent yet: a put answers nothing, so it waits in the
/// session until the transaction's next statement or its commit, and the puts of one table
/// then go as one statement (`unnest` of two `bytea` arrays) instead of one round trip each.
///
/// Every other statement of the transaction is sent after the pending puts (``Session/run(_:_:)``
/// flushes them first), so its reads see the puts and its writes apply after them, in the
/// order the caller made them. A put PostgreSQL refuses is reported by the statement that
/// sent it, which may be the next call or the commit; either way the transaction does not commit.
struct PendingWrites {
    /// Puts into one table, by qualified SQL name.
    private var tables: [String: PendingTable] = [:]
    /// The tables in the order of their first put (statements go in that order).
    private var order: [String] = []

    /// Whether nothing is waiting.
    var isEmpty: Bool { order.isEmpty }

    /// Adds a put of `value` under `key` into the table named `name` (single-value: the last
    /// value of a key wins; multi-value: adds the pair, once).
    mutating func put(_ value: [UInt8], forKey key: [UInt8], into name: String, multiValue: Bool) {
        if tables[name] == nil {
            tables[name] = PendingTable(multiValue: multiValue)
            order.append(name)
        }
        tables[name]!.add(key: key, value: value)
    }

    /// The statements that send every pending put, one per table, and empties the list.
    mutating func takeStatements() -> [(query: PostgresQuery, table: String)] {
        defer {
            tables = [:]
            order = []
        }
        return order.map { name in (tables[name]!.statement(into: name), name) }
    }
}

/// The pending puts of one table.
private struct PendingTable {
    let multiValue: Bool
    /// Single-value tables: the latest value of each key, and the keys in first-put order
    /// (one row per key: `ON CONFLICT DO UPDATE` may not touch a row twice in one statement).
    private var latest: [[UInt8]: Int] = [:]
    private var keys: [[UInt8]] = []
    private var values: [[UInt8]] = []

    init(multiValue: Bool) { self.multiValue = multiValue }

    mutating func add(key: [UInt8], value: [UInt8]) {
        if !multiValue, let index = latest[key] {
            values[index] = value
            return
        }
        if !multiValue { latest[key] = keys.count }
        keys.append(key)
        values.append(value)
    }

    /// One `INSERT … SELECT FROM unnest(…)`: an upsert for a single-value table, an insert of
    /// new pairs for a multi-value one (a pair already there, or twice in the list, is kept once).
    func statement(into name: String) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(keys.map { ByteBuffer(bytes: $0) })
        bindings.append(values.map { ByteBuffer(bytes: $0) })
        let conflict = multiValue ? "ON CONFLICT DO NOTHING" : "ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"
        return PostgresQuery(
            unsafeSQL: "INSERT INTO \(name) (k, v) SELECT * FROM unnest($1::bytea[], $2::bytea[]) \(conflict)", binds: bindings)
    }
}
