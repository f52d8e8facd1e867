/// Why schema text did not parse, and where: the error ``Schema/init(parsing:)`` throws.
///
/// ``line`` and ``column`` are 1-based and point at the first character of the token that is
/// wrong (columns count Unicode scalars, a tab counts one). The ``message`` says what was
/// expected there, or which rule the text breaks:
///
/// ```
/// 4:20: expected a field type after `title`, found `,`
/// ```
public struct SchemaParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The line of the problem, from 1.
    public let line: Int
    /// The column of the problem, from 1.
    public let column: Int
    /// What was expected, or which rule the text breaks.
    public let message: String

    /// Creates an error at `line` and `column`.
    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    /// `line:column: message`.
    public var description: String { "\(line):\(column): \(message)" }
}
