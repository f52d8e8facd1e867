import Foundation

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
