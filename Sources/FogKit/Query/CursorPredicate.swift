import Foundation

/// A cursor's predicate: the predicate of the query that made the cursor, or the text a
/// decoded cursor held.
///
/// Its canonical text (``QueryPredicate/description``) is what a cursor archives and
/// compares, but most cursors are never archived or compared: a query that has more
/// results makes one whether or not the caller continues. Formatting the text cost about
/// 21,000 instructions per query of the reference workload W3a (1.6% of it), so the text is
/// made only when asked for; a cursor continued in the same process uses the predicate as
/// it is instead of parsing its text again.
struct CursorPredicate: Sendable {
    private enum Source: Sendable {
        case predicate(QueryPredicate)
        case text(String)
    }
    private let source: Source

    /// The predicate of a query being run.
    init(_ predicate: QueryPredicate) { source = .predicate(predicate) }

    /// The text of a decoded cursor, parsed when the cursor is continued.
    init(text: String) { source = .text(text) }

    /// The canonical text.
    var text: String {
        switch source {
        case .predicate(let predicate): predicate.description
        case .text(let text): text
        }
    }

    /// The predicate; for a decoded cursor, its text parsed (throws when it does not parse).
    func parsed() throws -> QueryPredicate {
        switch source {
        case .predicate(let predicate): predicate
        case .text(let text): try QueryPredicate(format: text)
        }
    }
}

extension CursorPredicate: Hashable {
    static func == (a: CursorPredicate, b: CursorPredicate) -> Bool { a.text == b.text }
    func hash(into hasher: inout Hasher) { hasher.combine(text) }
}

/// Encoded as its text, as cursors have always held it.
extension CursorPredicate: Codable {
    init(from decoder: any Decoder) throws {
        self.init(text: try decoder.singleValueContainer().decode(String.self))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}
