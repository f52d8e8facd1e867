import Foundation

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
        let same =
            string.utf8.withContiguousStorageIfAvailable { utf8 in
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
        case KeyTag.false:
            offset += 1
            return false
        case KeyTag.true:
            offset += 1
            return true
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
