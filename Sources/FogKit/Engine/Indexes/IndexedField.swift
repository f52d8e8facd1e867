import FogStorage

/// One indexed field of a record type as an update compares it, resolved once per request:
/// its options, its name id, and whether the record's header holds it (a system field).
struct IndexedField {
    let name: String
    let options: IndexOptions
    /// The name id; `nil` when the name was not interned yet (then look again: a record of
    /// the same request may intern it).
    let id: Int64?
    /// Whether the value comes from the record's system fields.
    let isSystem: Bool
    /// Whether the field has value or cell entries (a searchable-only field has tokens only).
    var hasEntries: Bool { !options.isDisjoint(with: [.queryable, .sortable]) }

    /// The system fields an index may name (the record ID has no entries).
    private static let systemKeys: Set<String> = [
        Record.SystemFieldKey.creationDate, Record.SystemFieldKey.creatorUserRecordID, Record.SystemFieldKey.modificationDate,
        Record.SystemFieldKey.lastModifiedUserRecordID, Record.SystemFieldKey.parent, Record.SystemFieldKey.share,
    ]

    /// The indexed fields of `indexes` in name order, without the record ID.
    static func fields<Store>(of indexes: TypeIndexes, names: inout NameResolver<Store>) throws -> [IndexedField] {
        try indexes.fields.keys.sorted().compactMap { name in
            guard name != Record.SystemFieldKey.recordID else { return nil }
            return IndexedField(name: name, options: indexes.fields[name]!, id: try names.id(name), isSystem: systemKeys.contains(name))
        }
    }
}
