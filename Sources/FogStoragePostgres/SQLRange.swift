import FogStorage
import PostgresNIO

/// An SQL statement being built: its text, with `$n` placeholders for the bytes bound to it
/// (key bytes are always bound, never written into the text).
struct SQLStatement {
    private(set) var sql = ""
    private(set) var binds = PostgresBindings()

    /// Binds `bytes` and returns its placeholder.
    mutating func bind(_ bytes: [UInt8]) -> String {
        binds.append(ByteBuffer(bytes: bytes))
        return "$\(binds.count)"
    }

    /// Binds `text` and returns its placeholder.
    mutating func bind(text: String) -> String {
        binds.append(text)
        return "$\(binds.count)"
    }

    /// Appends SQL text (identifiers this module derived, keywords, placeholders).
    mutating func append(_ text: String) { sql += text }

    /// Appends ` WHERE` and the conditions of `range` on column `k`, and `extra`, when there are any.
    mutating func appendWhere(_ range: ScanRange, extra: [String] = []) {
        var conditions: [String] = []
        if let lower = range.lower { conditions.append("k \(range.lowerInclusive ? ">=" : ">") \(bind(lower))") }
        if let upper = range.upper { conditions.append("k \(range.upperInclusive ? "<=" : "<") \(bind(upper))") }
        conditions += extra
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
    }

    /// The statement as a query.
    var query: PostgresQuery { PostgresQuery(unsafeSQL: sql, binds: binds) }
}
