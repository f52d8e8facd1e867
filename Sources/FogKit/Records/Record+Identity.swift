extension Record: Hashable {
    /// Whether two references name the same record object, as CloudKit's `CKRecord`
    /// (an `NSObject`) compares: two fetches of one stored record are two objects, and not
    /// equal. Compare ``recordID`` and ``recordChangeTag`` to compare stored versions.
    public static func == (lhs: Record, rhs: Record) -> Bool { lhs === rhs }

    /// Hashes the object's identity, consistent with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
