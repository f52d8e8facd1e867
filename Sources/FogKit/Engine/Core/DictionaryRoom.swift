extension Dictionary {
    /// An empty dictionary with room for `capacity` entries, made by code the compiler
    /// specializes for `Key` and `Value`.
    ///
    /// `reserveCapacity(_:)` and `init(minimumCapacity:)` are not inlinable: they run in the
    /// standard library, generically, and look the dictionary's storage type up in the
    /// runtime's metadata cache on every call (1,312 instructions for a room of 8, 407 of
    /// them the lookup). `init(_:uniquingKeysWith:)` is inlinable and sizes its storage by
    /// the sequence's `underestimatedCount`: given an empty sequence that announces
    /// `capacity`, it makes the same room in specialized code.
    @inline(__always)
    init(room capacity: Int) {
        self.init(Room(underestimatedCount: capacity), uniquingKeysWith: { $1 })
    }
}

/// No elements, announcing `underestimatedCount` of them (``Swift/Dictionary/init(room:)``).
private struct Room<Element>: Sequence, IteratorProtocol {
    let underestimatedCount: Int

    mutating func next() -> Element? { nil }
}
