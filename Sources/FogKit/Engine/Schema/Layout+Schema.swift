import FogStorage

/// Keys of the schema catalog in the `schema` table, beside the names (`"n"`, `"i"`), the
/// field types (`"f"`) and the index entries (`"x"`, `"b"`, `"d"`):
///
/// | entry | key | value |
/// |---|---|---|
/// | a record type | ("t", type id) | ∅ |
/// | a custom role | ("r", role name) | ∅ |
/// | a grant | ("g", type id, role name) | one byte of ``Schema/Permissions`` |
///
/// `Docs/OnDiskFormat.md` describes them; change both together.
extension Layout {
    /// The value of a `"t"` entry whose record type an import removed while records of it may
    /// remain (an entry with the empty value is a type of the schema).
    static let retiredRecordType: [UInt8] = [1]

    /// `schema`: ("t", record type id) → ∅: the record type is in the schema; → `[1]`: an
    /// import removed it (``retiredRecordType``).
    static func recordTypeKey(_ type: Int64) -> [UInt8] {
        var w = KeyWriter(capacity: 12)
        w.append("t")
        w.append(type)
        return w.bytes
    }

    /// ("t"): every record type entry.
    static let recordTypePrefix: [UInt8] = tagPrefix("t")

    /// ("f"): every field type entry.
    static let fieldTypePrefix: [UInt8] = tagPrefix("f")

    /// ("f", record type id): the field type entries of one record type.
    static func fieldTypePrefix(type: Int64) -> [UInt8] {
        var w = KeyWriter(capacity: 12)
        w.append("f")
        w.append(type)
        return w.bytes
    }

    /// `schema`: ("r", role name) → ∅: a custom security role.
    static func roleKey(_ role: String) -> [UInt8] {
        var w = KeyWriter(capacity: 4 + role.utf8.count)
        w.append("r")
        w.append(role)
        return w.bytes
    }

    /// ("r"): every role entry.
    static let rolePrefix: [UInt8] = tagPrefix("r")

    /// `schema`: ("g", record type id, role name) → one byte of permissions.
    static func grantKey(type: Int64, role: String) -> [UInt8] {
        var w = KeyWriter(capacity: 14 + role.utf8.count)
        w.append("g")
        w.append(type)
        w.append(role)
        return w.bytes
    }

    /// ("g", record type id): the grants of one record type (all of them with `type` nil).
    static func grantPrefix(type: Int64?) -> [UInt8] {
        var w = KeyWriter(capacity: 12)
        w.append("g")
        if let type { w.append(type) }
        return w.bytes
    }

    private static func tagPrefix(_ tag: String) -> [UInt8] {
        var w = KeyWriter(capacity: 4)
        w.append(tag)
        return w.bytes
    }
}
