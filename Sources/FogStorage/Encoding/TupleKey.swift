import Foundation

// MARK: - Layout
//
// Order-preserving tuple keys in the style of the FoundationDB tuple layer:
// `memcmp` order of keys == tuple order, and a tuple's key is a byte prefix of
// the key of any longer tuple that starts with it. The layout table is in the
// documentation of `KeyWriter`; `KeyReader` decodes it (strictly: only bytes
// that `KeyWriter` could have produced are accepted), `Tuple` and
// `TupleElement` are the generic, allocating form of the same encoding.

/// Type tags of the tuple key encoding.
enum KeyTag {
    static let null: UInt8 = 0x00
    static let bytes: UInt8 = 0x01
    static let string: UInt8 = 0x02
    static let nested: UInt8 = 0x05
    static let intMin: UInt8 = 0x0C
    static let intZero: UInt8 = 0x14
    static let intMax: UInt8 = 0x1C
    static let double: UInt8 = 0x21
    static let date: UInt8 = 0x22
    static let `false`: UInt8 = 0x26
    static let `true`: UInt8 = 0x27
    /// The byte after `0x00` that marks an escaped zero (in bytes and strings)
    /// or a null inside a nested tuple.
    static let escape: UInt8 = 0xFF
}

/// The sign bit of an IEEE 754 double.
private let signBit: UInt64 = 1 << 63

/// Maps a double's bit pattern to an unsigned integer with the same order:
/// negative values have all bits flipped, others only the sign bit.
@inline(__always)
private func orderedBits(_ value: Double) -> UInt64 {
    let bits = value.bitPattern
    return bits & signBit != 0 ? ~bits : bits ^ signBit
}

/// Inverse of ``orderedBits(_:)``.
@inline(__always)
private func double(fromOrderedBits ordered: UInt64) -> Double {
    Double(bitPattern: ordered & signBit != 0 ? ordered ^ signBit : ~ordered)
}

/// The index of the first `0x00` in `buffer` at or after `start`, if any.
@inline(__always)
private func firstZero(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
    guard start < buffer.count, let base = buffer.baseAddress else { return nil }
    guard let found = memchr(base + start, 0, buffer.count - start) else { return nil }
    return base.distance(to: UnsafeRawPointer(found))
}

// MARK: - Errors

/// An error thrown when bytes are not a valid tuple key.
///
/// ``offset`` is the byte offset of the element (its type tag) where decoding
/// failed; for a missing nested-tuple terminator it is where the terminator
/// was expected.
///
/// There is no "bad escape" case: in a string or byte payload `0x00 0xFF` is
/// always an escaped zero and `0x00` followed by anything else (or nothing)
/// ends the payload, because no type tag is `0xFF`. Corrupt escapes therefore
/// show up as ``Reason-swift.enum/truncated`` or as an error in a later element.
public struct KeyDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong with the bytes.
    public enum Reason: Hashable, Sendable {
        /// An element was expected but the key (or the enclosing nested tuple) ended.
        case endOfTuple
        /// The key ends in the middle of an element: missing payload bytes or a
        /// missing `0x00` terminator.
        case truncated
        /// The byte is not one of the type tags.
        case unknownTag(UInt8)
        /// A typed read found an element of another type (identified by its tag).
        case typeMismatch(expected: TupleElement.Kind, foundTag: UInt8)
        /// A string's payload is not valid UTF-8.
        case invalidUTF8
        /// An integer is not in its shortest form (for example `0x15 0x00`),
        /// so the bytes cannot have been written by ``KeyWriter``.
        case nonCanonicalInteger
        /// An 8-byte integer is outside the range of `Int64`.
        case integerOverflow
        /// Nested tuples are deeper than ``KeyReader/maxNestingDepth``.
        case nestingTooDeep
    }

    /// What was wrong.
    public var reason: Reason
    /// The byte offset in the key where the problem was found.
    public var offset: Int

    /// Creates an error for `reason` at byte `offset`.
    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// A readable description, including the byte offset.
    public var description: String {
        let what: String
        switch reason {
        case .endOfTuple: what = "expected an element, but the tuple ended"
        case .truncated: what = "element is truncated"
        case .unknownTag(let tag): what = "unknown type tag \(hex(tag))"
        case .typeMismatch(let expected, let tag):
            what = "expected \(expected.rawValue), found type tag \(hex(tag))"
        case .invalidUTF8: what = "string is not valid UTF-8"
        case .nonCanonicalInteger: what = "integer is not in its shortest form"
        case .integerOverflow: what = "integer does not fit in Int64"
        case .nestingTooDeep: what = "nested tuples deeper than \(KeyReader.maxNestingDepth)"
        }
        return "invalid tuple key at byte offset \(offset): \(what)"
    }
}

private func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return byte < 0x10 ? "0x0" + digits : "0x" + digits
}

// MARK: - Writer

/// Builds an order-preserving tuple key by appending elements.
///
/// A key is the concatenation of its elements' encodings, in the style of the
/// FoundationDB tuple layer. Comparing keys with `memcmp` (shorter first on a
/// tie) gives tuple order, and the key of a tuple is a byte prefix of the key
/// of every longer tuple that starts with it:
///
/// ```swift
/// var key = KeyWriter()
/// key.append("Users")
/// key.append(Int64(42))
/// // key.bytes == [0x02, 0x55, 0x73, 0x65, 0x72, 0x73, 0x00, 0x15, 0x2A]
/// ```
///
/// Layout of each element (tag byte first):
///
/// | Element      | Bytes                                                          |
/// |--------------|----------------------------------------------------------------|
/// | null         | `00` (`00 FF` inside a nested tuple)                           |
/// | bytes        | `01`, payload with each `00` written `00 FF`, `00`             |
/// | string       | `02`, UTF-8 with each `00` written `00 FF`, `00`               |
/// | nested tuple | `05`, elements, `00`                                           |
/// | Int64        | `0C`...`1C`: `14` is zero; `14+n` and `n` big-endian bytes if positive; `14-n` and the one's complement of the magnitude in `n` bytes if negative |
/// | Double       | `21`, 8 big-endian bytes of the bit pattern, all bits flipped if negative, else only the sign bit |
/// | Date         | `22`, the Double layout of `timeIntervalSinceReferenceDate`    |
/// | Bool         | `26` false, `27` true                                          |
///
/// Elements of different types order by tag:
/// null < bytes < string < nested tuple < Int64 < Double < Date < false < true.
/// (The data model never mixes types in one position, so in practice this only
/// places nulls first.)
public struct KeyWriter: Sendable {
    /// The encoded key so far.
    public private(set) var bytes: [UInt8]

    /// How many ``appendNested(_:)`` calls enclose the current position.
    private var nestingDepth = 0

    /// Creates an empty key with room for `capacity` bytes.
    public init(capacity: Int = 32) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the key so the writer can be reused, keeping its storage by default.
    public mutating func removeAll(keepingCapacity: Bool = true) {
        precondition(nestingDepth == 0, "KeyWriter.removeAll called inside appendNested")
        bytes.removeAll(keepingCapacity: keepingCapacity)
    }

    /// Appends a null: `0x00`, or `0x00 0xFF` inside a nested tuple.
    ///
    /// Null sorts before every other value.
    public mutating func appendNull() {
        bytes.append(KeyTag.null)
        if nestingDepth > 0 { bytes.append(KeyTag.escape) }
    }

    /// Appends a string: `0x02`, its UTF-8 bytes with each `0x00` written as
    /// `0x00 0xFF`, then `0x00`.
    ///
    /// Strings order by their UTF-8 bytes (which is Unicode scalar order), not by
    /// Swift's `String` comparison; canonically equivalent strings with different
    /// scalars are different keys.
    public mutating func append(_ value: String) {
        bytes.append(KeyTag.string)
        let done: Void? = value.utf8.withContiguousStorageIfAvailable { appendEscaped(UnsafeRawBufferPointer($0)) }
        if done == nil {
            for byte in value.utf8 {
                bytes.append(byte)
                if byte == 0 { bytes.append(KeyTag.escape) }
            }
        }
        bytes.append(0x00)
    }

    /// Appends a byte string: `0x01`, the bytes with each `0x00` written as
    /// `0x00 0xFF`, then `0x00`.
    ///
    /// Byte strings order lexicographically, a prefix first.
    public mutating func append(bytes value: some Collection<UInt8>) {
        bytes.append(KeyTag.bytes)
        let done: Void? = value.withContiguousStorageIfAvailable { appendEscaped(UnsafeRawBufferPointer($0)) }
        if done == nil {
            for byte in value {
                bytes.append(byte)
                if byte == 0 { bytes.append(KeyTag.escape) }
            }
        }
        bytes.append(0x00)
    }

    /// Appends `payload`, escaping each `0x00` as `0x00 0xFF`.
    private mutating func appendEscaped(_ payload: UnsafeRawBufferPointer) {
        var start = 0
        while let zero = firstZero(in: payload, from: start) {
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: payload[start...zero]))
            bytes.append(KeyTag.escape)
            start = zero + 1
        }
        if start < payload.count {
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: payload[start...]))
        }
    }

    /// Appends a signed integer in 1 to 9 bytes.
    ///
    /// Layout: `0x14` for zero; `0x14 + n` then the value in `n` big-endian bytes
    /// when positive; `0x14 - n` then the one's complement of the magnitude in
    /// `n` big-endian bytes when negative, where `n` (1...8) is the fewest bytes
    /// that hold the magnitude. `Int64.min` is `0x0C 7F FF FF FF FF FF FF FF`.
    public mutating func append(_ value: Int64) {
        if value == 0 {
            bytes.append(KeyTag.intZero)
            return
        }
        let magnitude = value.magnitude
        let count = (64 - magnitude.leadingZeroBitCount + 7) / 8
        if value > 0 {
            bytes.append(KeyTag.intZero + UInt8(count))
            appendBigEndian(magnitude, count: count)
        } else {
            bytes.append(KeyTag.intZero - UInt8(count))
            appendBigEndian(~magnitude, count: count)
        }
    }

    /// Appends an `Int` as an `Int64` (same layout).
    public mutating func append(_ value: Int) {
        append(Int64(value))
    }

    /// Appends a double: `0x21` then 8 big-endian bytes of the bit pattern with
    /// all bits flipped when the sign bit is set, otherwise only the sign bit.
    ///
    /// This orders doubles numerically, with `-0.0` before `+0.0`, negative NaNs
    /// before `-infinity` and positive NaNs after `+infinity` (NaNs by bit pattern).
    /// Every bit pattern, NaN payloads included, round-trips exactly.
    public mutating func append(_ value: Double) {
        bytes.append(KeyTag.double)
        appendBigEndian(orderedBits(value), count: 8)
    }

    /// Appends a date: `0x22` then the 8-byte ``append(_:)-(Double)`` layout of
    /// `timeIntervalSinceReferenceDate`, so dates round-trip exactly and sort
    /// chronologically.
    public mutating func append(_ value: Date) {
        bytes.append(KeyTag.date)
        appendBigEndian(orderedBits(value.timeIntervalSinceReferenceDate), count: 8)
    }

    /// Appends a boolean: `0x26` for false, `0x27` for true.
    public mutating func append(_ value: Bool) {
        bytes.append(value ? KeyTag.true : KeyTag.false)
    }

    /// Appends a nested tuple: `0x05`, the elements that `body` appends, then `0x00`.
    ///
    /// Inside, nulls are written `0x00 0xFF` so they are not read as the
    /// terminator. Nesting deeper than ``KeyReader/maxNestingDepth`` is a
    /// programming error (the key could not be read back) and traps.
    public mutating func appendNested(_ body: (inout KeyWriter) -> Void) {
        precondition(nestingDepth < KeyReader.maxNestingDepth, "KeyWriter: nested tuples deeper than \(KeyReader.maxNestingDepth)")
        let depth = nestingDepth
        bytes.append(KeyTag.nested)
        nestingDepth = depth + 1
        body(&self)
        nestingDepth = depth
        bytes.append(0x00)
    }

    /// Appends one element of any type, in the layout of its type.
    public mutating func append(_ element: TupleElement) {
        switch element {
        case .null: appendNull()
        case .bytes(let value): append(bytes: value)
        case .string(let value): append(value)
        case .int(let value): append(value)
        case .double(let value): append(value)
        case .date(let value): append(value)
        case .bool(let value): append(value)
        case .tuple(let elements):
            appendNested { writer in
                for element in elements { writer.append(element) }
            }
        }
    }

    /// Appends the low `count` bytes of `value`, most significant first.
    @inline(__always)
    private mutating func appendBigEndian(_ value: UInt64, count: Int) {
        var shift = (count - 1) * 8
        while shift >= 0 {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            shift -= 8
        }
    }
}

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
        return (try? read { (cursor: inout KeyCursor) throws(KeyDecodingError) -> Bool in
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

// MARK: - Cursor

/// The decoding core: a position in a borrowed buffer. All bounds are checked
/// before each byte is read.
struct KeyCursor {
    let buffer: UnsafeRawBufferPointer
    var offset: Int

    @inline(__always)
    init(_ buffer: UnsafeRawBufferPointer, offset: Int) {
        self.buffer = buffer
        self.offset = offset
    }

    @inline(__always)
    var count: Int { buffer.count }

    /// Whether the cursor is at the end of the tuple it reads at `depth`.
    @inline(__always)
    func atTupleEnd(depth: Int) -> Bool {
        if offset >= count { return true }
        guard depth > 0, buffer[offset] == 0 else { return false }
        return offset + 1 >= count || buffer[offset + 1] != KeyTag.escape
    }

    /// Returns the tag of the next element, throwing `.endOfTuple` at the end of
    /// the tuple read at `depth`.
    @inline(__always)
    func peekTag(depth: Int) throws(KeyDecodingError) -> UInt8 {
        guard !atTupleEnd(depth: depth) else { throw KeyDecodingError(.endOfTuple, at: offset) }
        return buffer[offset]
    }

    /// The error for finding something other than `expected` at the cursor.
    func mismatch(expected: TupleElement.Kind, depth: Int) -> KeyDecodingError {
        if atTupleEnd(depth: depth) { return KeyDecodingError(.endOfTuple, at: offset) }
        let tag = buffer[offset]
        if TupleElement.Kind(tag: tag) == nil { return KeyDecodingError(.unknownTag(tag), at: offset) }
        return KeyDecodingError(.typeMismatch(expected: expected, foundTag: tag), at: offset)
    }

    /// Consumes a null if one is next.
    @inline(__always)
    mutating func consumeNull(depth: Int) throws(KeyDecodingError) -> Bool {
        guard try peekTag(depth: depth) == KeyTag.null else { return false }
        offset += depth > 0 ? 2 : 1
        return true
    }

    /// Scans an escaped payload (bytes or string) starting after its tag.
    /// Returns the payload range and whether it contains escapes; moves past the terminator.
    @inline(__always)
    mutating func scanEscaped() throws(KeyDecodingError) -> (start: Int, end: Int, escaped: Bool) {
        let tagOffset = offset
        let start = offset + 1
        var index = start
        var escaped = false
        while let zero = firstZero(in: buffer, from: index) {
            if zero + 1 < count, buffer[zero + 1] == KeyTag.escape {
                escaped = true
                index = zero + 2
                continue
            }
            offset = zero + 1
            return (start, zero, escaped)
        }
        throw KeyDecodingError(.truncated, at: tagOffset)
    }

    /// The payload in `start..<end` with each `0x00 0xFF` turned back into `0x00`.
    func unescaped(_ start: Int, _ end: Int) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(end - start)
        let payload = UnsafeRawBufferPointer(rebasing: buffer[..<end])
        var segment = start
        while let zero = firstZero(in: payload, from: segment) {
            result.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[segment...zero]))
            segment = zero + 2
        }
        if segment < end {
            result.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[segment..<end]))
        }
        return result
    }

    mutating func readBytes(depth: Int) throws(KeyDecodingError) -> [UInt8] {
        guard try peekTag(depth: depth) == KeyTag.bytes else { throw mismatch(expected: .bytes, depth: depth) }
        let (start, end, escaped) = try scanEscaped()
        if escaped { return unescaped(start, end) }
        return Array(UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
    }

    mutating func readString(depth: Int) throws(KeyDecodingError) -> String {
        guard try peekTag(depth: depth) == KeyTag.string else { throw mismatch(expected: .string, depth: depth) }
        let tagOffset = offset
        let (start, end, escaped) = try scanEscaped()
        let string: String?
        if escaped {
            string = unescaped(start, end).withUnsafeBytes { validUTF8String($0) }
        } else {
            string = validUTF8String(UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
        }
        guard let string else {
            offset = tagOffset
            throw KeyDecodingError(.invalidUTF8, at: tagOffset)
        }
        return string
    }

    /// The string whose UTF-8 is exactly `bytes`, or `nil` if `bytes` is not valid UTF-8.
    ///
    /// `String(decoding:as:)` has a fast specialized path for contiguous UTF-8 but
    /// repairs invalid input; its output is always valid UTF-8, so it equals the
    /// input exactly when the input was valid. (`String(validating:as:)` gives the
    /// same answer but goes through an unspecialized generic path, several times slower.)
    @inline(__always)
    func validUTF8String(_ bytes: UnsafeRawBufferPointer) -> String? {
        let string = String(decoding: bytes, as: UTF8.self)
        guard string.utf8.count == bytes.count else { return nil }
        guard let base = bytes.baseAddress else { return string }
        let same = string.utf8.withContiguousStorageIfAvailable { utf8 in
            memcmp(utf8.baseAddress!, base, bytes.count) == 0
        } ?? string.utf8.elementsEqual(bytes)
        return same ? string : nil
    }

    /// Reads `count` big-endian bytes starting at `start` (bounds already checked).
    @inline(__always)
    func bigEndian(at start: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in start..<(start + count) {
            value = value << 8 | UInt64(buffer[index])
        }
        return value
    }

    mutating func readInt64(depth: Int) throws(KeyDecodingError) -> Int64 {
        let tag = try peekTag(depth: depth)
        guard tag >= KeyTag.intMin, tag <= KeyTag.intMax else { throw mismatch(expected: .int, depth: depth) }
        let tagOffset = offset
        if tag == KeyTag.intZero {
            offset += 1
            return 0
        }
        let length = Int(tag > KeyTag.intZero ? tag - KeyTag.intZero : KeyTag.intZero - tag)
        guard count - tagOffset - 1 >= length else { throw KeyDecodingError(.truncated, at: tagOffset) }
        let first = buffer[tagOffset + 1]
        let raw = bigEndian(at: tagOffset + 1, count: length)
        let value: Int64
        if tag > KeyTag.intZero {
            guard first != 0 else { throw KeyDecodingError(.nonCanonicalInteger, at: tagOffset) }
            guard raw <= UInt64(Int64.max) else { throw KeyDecodingError(.integerOverflow, at: tagOffset) }
            value = Int64(raw)
        } else {
            guard first != 0xFF else { throw KeyDecodingError(.nonCanonicalInteger, at: tagOffset) }
            let mask: UInt64 = length == 8 ? ~0 : (1 << UInt64(length * 8)) - 1
            let magnitude = ~raw & mask
            guard magnitude <= signBit else { throw KeyDecodingError(.integerOverflow, at: tagOffset) }
            value = magnitude == signBit ? Int64.min : -Int64(magnitude)
        }
        offset = tagOffset + 1 + length
        return value
    }

    mutating func readDouble(tag expected: UInt8, kind: TupleElement.Kind, depth: Int) throws(KeyDecodingError) -> Double {
        guard try peekTag(depth: depth) == expected else { throw mismatch(expected: kind, depth: depth) }
        guard count - offset > 8 else { throw KeyDecodingError(.truncated, at: offset) }
        let value = double(fromOrderedBits: bigEndian(at: offset + 1, count: 8))
        offset += 9
        return value
    }

    mutating func readBool(depth: Int) throws(KeyDecodingError) -> Bool {
        switch try peekTag(depth: depth) {
        case KeyTag.false: offset += 1; return false
        case KeyTag.true: offset += 1; return true
        default: throw mismatch(expected: .bool, depth: depth)
        }
    }

    /// Consumes the `0x05` of a nested tuple read at `depth`, checking the depth limit.
    mutating func enterNested(depth: Int) throws(KeyDecodingError) {
        guard try peekTag(depth: depth) == KeyTag.nested else { throw mismatch(expected: .tuple, depth: depth) }
        guard depth < KeyReader.maxNestingDepth else { throw KeyDecodingError(.nestingTooDeep, at: offset) }
        offset += 1
    }

    /// Skips what is left of a nested tuple read at `depth` (≥ 1) and its terminator.
    mutating func finishNested(depth: Int) throws(KeyDecodingError) {
        while !atTupleEnd(depth: depth) {
            try skipElement(depth: depth)
        }
        guard offset < count else { throw KeyDecodingError(.truncated, at: offset) }
        offset += 1
    }

    mutating func readElement(depth: Int) throws(KeyDecodingError) -> TupleElement {
        let tag = try peekTag(depth: depth)
        switch tag {
        case KeyTag.null:
            offset += depth > 0 ? 2 : 1
            return .null
        case KeyTag.bytes: return .bytes(try readBytes(depth: depth))
        case KeyTag.string: return .string(try readString(depth: depth))
        case KeyTag.nested:
            try enterNested(depth: depth)
            var elements: [TupleElement] = []
            while !atTupleEnd(depth: depth + 1) {
                elements.append(try readElement(depth: depth + 1))
            }
            guard offset < count else { throw KeyDecodingError(.truncated, at: offset) }
            offset += 1
            return .tuple(elements)
        case KeyTag.intMin...KeyTag.intMax: return .int(try readInt64(depth: depth))
        case KeyTag.double: return .double(try readDouble(tag: KeyTag.double, kind: .double, depth: depth))
        case KeyTag.date:
            return .date(Date(timeIntervalSinceReferenceDate: try readDouble(tag: KeyTag.date, kind: .date, depth: depth)))
        case KeyTag.false, KeyTag.true: return .bool(try readBool(depth: depth))
        default: throw KeyDecodingError(.unknownTag(tag), at: offset)
        }
    }

    mutating func skipElement(depth: Int) throws(KeyDecodingError) {
        let tag = try peekTag(depth: depth)
        switch tag {
        case KeyTag.null:
            offset += depth > 0 ? 2 : 1
        case KeyTag.bytes, KeyTag.string:
            _ = try scanEscaped()
        case KeyTag.nested:
            try enterNested(depth: depth)
            try finishNested(depth: depth + 1)
        case KeyTag.intMin...KeyTag.intMax:
            let length = Int(tag > KeyTag.intZero ? tag - KeyTag.intZero : KeyTag.intZero - tag)
            guard count - offset - 1 >= length else { throw KeyDecodingError(.truncated, at: offset) }
            offset += 1 + length
        case KeyTag.double, KeyTag.date:
            guard count - offset > 8 else { throw KeyDecodingError(.truncated, at: offset) }
            offset += 9
        case KeyTag.false, KeyTag.true:
            offset += 1
        default:
            throw KeyDecodingError(.unknownTag(tag), at: offset)
        }
    }
}

// MARK: - Ranges

/// Helpers for turning key prefixes into scan bounds.
public enum KeyRange {
    /// The smallest byte string greater than every string that starts with
    /// `prefix`: trailing `0xFF` bytes removed, then the last byte incremented.
    /// `nil` when there is none (the prefix is empty or all `0xFF`).
    ///
    /// Use it as the exclusive upper bound of a prefix scan. For a tuple
    /// prefix, the result is greater than every key of a longer tuple starting
    /// with it.
    public static func successor(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        guard let last = prefix.lastIndex(where: { $0 != 0xFF }) else { return nil }
        var result = Array(prefix[...last])
        result[last] += 1
        return result
    }
}
