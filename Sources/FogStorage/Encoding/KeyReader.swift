import Foundation

// MARK: - Reader

/// Reads the elements of a tuple key, one at a time, in order.
///
/// The typed reads (``readInt64()``, ``readDouble()``, ...) decode in place
/// without allocating; ``readString()`` and ``readBytes()`` allocate only the
/// result. Every read checks the bytes and throws ``KeyDecodingError`` (with
/// the byte offset) on truncated input, an unknown or unexpected tag, invalid
/// UTF-8, or an integer that ``KeyWriter`` could not have written; it never
/// traps on bad input. A failed read leaves ``offset`` where it was.
///
/// ```swift
/// var reader = KeyReader(key)
/// let table = try reader.readString()
/// let id = try reader.readInt64()
/// ```
public struct KeyReader {
    /// The deepest nesting of tuples that readers accept (and writers produce).
    /// A top-level nested tuple is depth 1.
    public static let maxNestingDepth = 64

    private enum Storage {
        case array([UInt8])
        case buffer(UnsafeRawBufferPointer)
    }

    private let storage: Storage
    /// The nesting depth this reader reads at: 0 for a whole key, more inside
    /// ``readNested(_:)``.
    private let depth: Int

    /// The byte offset of the next element.
    public private(set) var offset: Int

    /// Creates a reader over a key held in an array.
    public init(_ bytes: [UInt8]) {
        storage = .array(bytes)
        depth = 0
        offset = 0
    }

    /// Creates a reader over a key in memory that the caller keeps valid (for
    /// example an LMDB key during a cursor scan) for as long as the reader is used.
    /// Nothing is copied.
    public init(_ buffer: UnsafeRawBufferPointer) {
        storage = .buffer(buffer)
        depth = 0
        offset = 0
    }

    private init(storage: Storage, depth: Int, offset: Int) {
        self.storage = storage
        self.depth = depth
        self.offset = offset
    }

    /// Whether every element has been read: the end of the key, or inside
    /// ``readNested(_:)`` the end of the nested tuple.
    public var isAtEnd: Bool {
        withBuffer { buffer in
            KeyCursor(buffer, offset: offset).atTupleEnd(depth: depth)
        }
    }

    /// Runs `body` with a cursor at the current offset and advances past what it read.
    @inline(__always)
    private mutating func read<T>(_ body: (inout KeyCursor) throws(KeyDecodingError) -> T) throws(KeyDecodingError) -> T {
        switch storage {
        case .buffer(let buffer):
            var cursor = KeyCursor(buffer, offset: offset)
            let value = try body(&cursor)
            offset = cursor.offset
            return value
        case .array(let array):
            // `Array.withUnsafeBytes` rethrows untyped errors: carry the typed one out.
            let start = offset
            let (result, end) = array.withUnsafeBytes { buffer -> (Result<T, KeyDecodingError>, Int) in
                var cursor = KeyCursor(buffer, offset: start)
                let result = Result { () throws(KeyDecodingError) -> T in try body(&cursor) }
                return (result, cursor.offset)
            }
            let value = try result.get()
            offset = end
            return value
        }
    }

    @inline(__always)
    private func withBuffer<T>(_ body: (UnsafeRawBufferPointer) -> T) -> T {
        switch storage {
        case .array(let array): return array.withUnsafeBytes(body)
        case .buffer(let buffer): return body(buffer)
        }
    }

    /// Reads a null (`0x00`, or `0x00 0xFF` inside a nested tuple).
    public mutating func readNull() throws(KeyDecodingError) {
        let depth = self.depth
        try read { (cursor: inout KeyCursor) throws(KeyDecodingError) in
            guard try cursor.consumeNull(depth: depth) else {
                throw cursor.mismatch(expected: .null, depth: depth)
            }
        }
    }

    /// Reads a null if the next element is one and returns `true`; otherwise
    /// reads nothing and returns `false`.
    public mutating func readNullIfPresent() -> Bool {
        let depth = self.depth
        return
            (try? read { (cursor: inout KeyCursor) throws(KeyDecodingError) -> Bool in
                try cursor.consumeNull(depth: depth)
            }) ?? false
    }

    /// Reads a string element (`0x02`) and validates its UTF-8.
    public mutating func readString() throws(KeyDecodingError) -> String {
        let depth = self.depth
        return try read { (cursor: inout KeyCursor) throws(KeyDecodingError) -> String in
            try cursor.readString(depth: depth)
        }
    }

    /// Reads a byte-string element (`0x01`).
    public mutating func readBytes() throws(KeyDecodingError) -> [UInt8] {
        let depth = self.depth
        return try read { (cursor: inout KeyCursor) throws(KeyDecodingError) -> [UInt8] in
            try cursor.readBytes(depth: depth)
        }
    }

    /// Reads an integer element (`0x0C`...`0x1C`).
    public mutating func readInt64() throws(KeyDecodingError) -> Int64 {
        let depth = self.depth
        return try read { (cursor: inout KeyCursor) throws(KeyDecodingError) -> Int64 in
            try cursor.readInt64(depth: depth)
        }
    }

    /// Reads a double element (`0x21`), restoring its exact bit pattern.
    public mutating func readDouble() throws(KeyDecodingError) -> Double {
        let depth = self.depth
        return try read { (cursor: inout KeyCursor) throws(KeyDecodingError) -> Double in
            try cursor.readDouble(tag: KeyTag.double, kind: .double, depth: depth)
        }
    }

    /// Reads a date element (`0x22`), restoring its exact `timeIntervalSinceReferenceDate`.
    public mutating func readDate() throws(KeyDecodingError) -> Date {
        let depth = self.depth
        let interval = try read { (cursor: inout KeyCursor) throws(KeyDecodingError) -> Double in
            try cursor.readDouble(tag: KeyTag.date, kind: .date, depth: depth)
        }
        return Date(timeIntervalSinceReferenceDate: interval)
    }

    /// Reads a boolean element (`0x26` false, `0x27` true).
    public mutating func readBool() throws(KeyDecodingError) -> Bool {
        let depth = self.depth
        return try read { (cursor: inout KeyCursor) throws(KeyDecodingError) -> Bool in
            try cursor.readBool(depth: depth)
        }
    }

    /// Reads the next element, whatever its type; nested tuples are read whole.
    public mutating func readElement() throws(KeyDecodingError) -> TupleElement {
        let depth = self.depth
        return try read { (cursor: inout KeyCursor) throws(KeyDecodingError) -> TupleElement in
            try cursor.readElement(depth: depth)
        }
    }

    /// Steps over the next element without decoding it.
    ///
    /// Checks the structure (tags, lengths, terminators, nesting depth) but not
    /// the UTF-8 of strings or the canonical form and range of integers.
    public mutating func skipElement() throws(KeyDecodingError) {
        let depth = self.depth
        try read { (cursor: inout KeyCursor) throws(KeyDecodingError) in
            try cursor.skipElement(depth: depth)
        }
    }

    /// Reads a nested tuple element (`0x05`, elements, `0x00`) with `body`.
    ///
    /// `body` gets a reader over the nested tuple's elements: it starts at the
    /// first one, and its ``isAtEnd`` becomes true at the nested tuple's
    /// terminator. Elements that `body` leaves unread are skipped (structurally
    /// checked, as in ``skipElement()``). Nothing is allocated. If `body` or the
    /// skipping throws, ``offset`` stays at the nested tuple's tag.
    public mutating func readNested<T>(_ body: (inout KeyReader) throws(KeyDecodingError) -> T) throws(KeyDecodingError) -> T {
        let depth = self.depth
        let start = offset
        try read { (cursor: inout KeyCursor) throws(KeyDecodingError) in
            try cursor.enterNested(depth: depth)
        }
        var inner = KeyReader(storage: storage, depth: depth + 1, offset: offset)
        let value: T
        do {
            value = try body(&inner)
        } catch {
            offset = start
            throw error
        }
        let innerOffset = inner.offset
        offset = innerOffset
        do {
            try read { (cursor: inout KeyCursor) throws(KeyDecodingError) in
                try cursor.finishNested(depth: depth + 1)
            }
        } catch {
            offset = start
            throw error
        }
        return value
    }
}
