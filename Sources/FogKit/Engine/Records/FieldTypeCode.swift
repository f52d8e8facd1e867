extension FieldType {
    /// The type whose stored code is `code`, `nil` for none: what `FieldType(rawValue:)`
    /// gives, without the out-of-line switch the compiler makes for it (about 16
    /// instructions a field, on every field of every record read).
    ///
    /// The codes are two runs, `1...8` and `0x11...0x18`, declared in that order, and a
    /// payload-free enum is stored as its case's index in declaration order.
    /// `FieldTypeCodeTests` checks all 256 codes against `FieldType(rawValue:)`.
    @inline(__always)
    static func decoded(_ code: UInt8) -> FieldType? {
        let index: UInt8
        if code &- 1 < 8 {
            index = code &- 1
        } else if code &- 0x11 < 8 {
            index = code &- 0x11 &+ 8
        } else {
            return nil
        }
        return unsafeBitCast(index, to: FieldType.self)
    }
}
