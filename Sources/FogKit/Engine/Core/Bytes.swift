import Foundation

/// Appends the little-endian and varint encodings of the record format.
struct ByteWriter {
    var bytes: [UInt8]

    init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inline(__always) mutating func u8(_ v: UInt8) { bytes.append(v) }

    @inline(__always) mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    @inline(__always) mutating func varint(_ value: Int64) { varint(UInt64(bitPattern: value)) }
    @inline(__always) mutating func varint(_ value: Int) { varint(UInt64(bitPattern: Int64(value))) }

    @inline(__always) mutating func u64(_ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always) mutating func f64(_ v: Double) { u64(v.bitPattern) }

    @inline(__always) mutating func raw(_ s: String) {
        var s = s
        s.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// A varint length followed by the UTF-8 bytes.
    @inline(__always) mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            varint(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    @inline(__always) mutating func data(_ d: Data) {
        varint(d.count)
        bytes.append(contentsOf: d)
    }
}

/// Why stored bytes could not be decoded.
struct FormatError: Error, CustomStringConvertible {
    let message: String
    var description: String { "corrupt stored data: \(message)" }
}

/// Reads the encodings of ``ByteWriter`` from a buffer, checking bounds.
struct ByteReader {
    let buffer: UnsafeRawBufferPointer
    var offset: Int

    init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    var isAtEnd: Bool { offset >= buffer.count }

    @inline(__always) mutating func need(_ n: Int) throws {
        guard n >= 0, n <= buffer.count - offset else {
            throw FormatError(message: "truncated at byte \(offset) (need \(n) of \(buffer.count - offset))")
        }
    }

    @inline(__always) mutating func u8() throws -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return buffer[offset]
    }

    @inline(__always) mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try u8()
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw FormatError(message: "varint too long at byte \(offset)") }
        }
    }

    @inline(__always) mutating func int() throws -> Int {
        let v = try varint()
        guard v <= UInt64(Int.max) else { throw FormatError(message: "length out of range at byte \(offset)") }
        return Int(v)
    }

    @inline(__always) mutating func int64() throws -> Int64 { Int64(bitPattern: try varint()) }

    @inline(__always) mutating func u64() throws -> UInt64 {
        try need(8)
        defer { offset += 8 }
        return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always) mutating func f64() throws -> Double { Double(bitPattern: try u64()) }

    @inline(__always) mutating func rawString(count: Int) throws -> String {
        try need(count)
        defer { offset += count }
        // FogKit writes only valid UTF-8; decoding (which would repair a damaged byte)
        // avoids the generic validating initializer, a large part of a record's decode.
        return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count]), as: UTF8.self)
    }

    @inline(__always) mutating func string() throws -> String { try rawString(count: try int()) }

    @inline(__always) mutating func data(count: Int) throws -> Data {
        try need(count)
        defer { offset += count }
        return Data(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count]))
    }

    @inline(__always) mutating func data() throws -> Data { try data(count: try int()) }

    @inline(__always) mutating func skip(_ n: Int) throws {
        try need(n)
        offset += n
    }
}

/// An 8-byte big-endian key, for tables keyed by a sequential id (appends stay dense).
@inline(__always)
func bigEndianKey(_ id: Int64) -> [UInt8] {
    withUnsafeBytes(of: UInt64(bitPattern: id).bigEndian) { Array($0) }
}

/// Reads an 8-byte big-endian id.
@inline(__always)
func readBigEndianKey(_ buffer: UnsafeRawBufferPointer) throws -> Int64 {
    guard buffer.count == 8 else { throw FormatError(message: "id key of \(buffer.count) bytes") }
    return Int64(bitPattern: UInt64(bigEndian: buffer.loadUnaligned(as: UInt64.self)))
}

/// The 64-bit FNV-1a hash of `bytes`: stable across processes (unlike `Hasher`), so it can be
/// stored — in change token checksums and hashed index values.
func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
    // Contiguous bytes (a native string's UTF-8, an array) are read through a pointer: the
    // generic iterator of a string's UTF-8 view cost about 30 instructions a byte.
    bytes.withContiguousStorageIfAvailable(fnv1aLoop) ?? fnv1aLoop(bytes)
}

/// The FNV-1a loop over `bytes`, one byte at a time.
private func fnv1aLoop(_ bytes: some Sequence<UInt8>) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01b3
    }
    return hash
}
