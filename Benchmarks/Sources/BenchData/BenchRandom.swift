// The data generator of ../shared/bench (splitmix64 and its text and names), shared by
// fog-bench and the micro-benchmarks so that they make the reference data byte for byte.

/// The reference generator (splitmix64), which every column shares.
public struct BenchRandom: Sendable {
    /// The generator's state.
    public var s: UInt64
    /// A generator seeded as the reference workloads seed theirs.
    public init(_ seed: UInt64) { s = seed }
    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        s &+= 0x9E37_79B9_7F4A_7C15
        var z = s
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A number in `0..<n` (by remainder, as the reference does).
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

extension BenchRandom {
    /// A 36-character uppercase UUID-like name, as the reference generator makes it.
    public mutating func uuid() -> String {
        let a = next(), b = next()
        var out: [UInt8] = []
        out.reserveCapacity(36)
        func hex(_ v: UInt64, _ digits: Int) {
            for i in stride(from: digits - 1, through: 0, by: -1) {
                let d = UInt8((v >> UInt64(i * 4)) & 0xF)
                out.append(d < 10 ? 48 + d : 55 + d)
            }
        }
        hex(a >> 32, 8)
        out.append(45)
        hex((a >> 16) & 0xFFFF, 4)
        out.append(45)
        hex(a & 0xFFFF, 4)
        out.append(45)
        hex(b >> 48, 4)
        out.append(45)
        hex(b & 0xFFFF_FFFF_FFFF, 12)
        return String(decoding: out, as: UTF8.self)
    }

    /// `length` lowercase letters and spaces, as the reference generator makes them.
    public mutating func text(_ length: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz ".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        for _ in 0..<length { bytes.append(alphabet[below(27)]) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
