extension Schema {
    /// A record type of a schema (`RECORD TYPE Name ( … )`): its fields, the index options of
    /// its system fields, and the permissions granted to roles.
    public struct RecordType: Sendable, Hashable {
        /// The fields the record type declares, by name; the system fields are not among them.
        public var fields: [Record.FieldKey: Field]
        private var systemIndexes: [SystemField: IndexOptions]
        private var grantedPermissions: [Role: Permissions]

        /// Creates a record type.
        public init(
            fields: [Record.FieldKey: Field] = [:], systemFieldIndexes: [SystemField: IndexOptions] = [:],
            grants: [Role: Permissions] = [:]
        ) {
            self.fields = fields
            self.systemIndexes = systemFieldIndexes.filter { !$0.value.isEmpty }
            self.grantedPermissions = grants.filter { !$0.value.isEmpty }
        }

        /// The index options declared on system fields. Every record type has the six system
        /// fields; one missing here has no index options (empty options are left out).
        public var systemFieldIndexes: [SystemField: IndexOptions] {
            get { systemIndexes }
            set { systemIndexes = newValue.filter { !$0.value.isEmpty } }
        }

        /// The permissions granted to each role (`GRANT READ, WRITE TO Editor`). A role missing
        /// here has none (empty permissions are left out). In CloudKit they apply to the public
        /// database only, and a record type with no grants cannot be used there.
        public var grants: [Role: Permissions] {
            get { grantedPermissions }
            set { grantedPermissions = newValue.filter { !$0.value.isEmpty } }
        }

        /// The index options of the record type's fields, keyed as
        /// ``Container/Administrator/setIndexes(_:ofRecordType:)`` takes them.
        ///
        /// Holds every declared field (with empty options when it has none) and every system
        /// field that takes indexes, under its ``SystemField/fieldKey`` (`recordID`,
        /// `creationDate`, …). As in CloudKit, a system field the schema does not declare has no
        /// index options, so applying these options leaves the declared fields and the system
        /// fields indexed exactly as the schema says; fields the schema does not name keep
        /// theirs.
        public var indexes: [Record.FieldKey: IndexOptions] {
            var result: [Record.FieldKey: IndexOptions] = [:]
            for (name, field) in fields { result[name] = field.indexes }
            for system in SystemField.allCases where !system.allowedIndexes.isEmpty {
                result[system.fieldKey] = systemIndexes[system] ?? []
            }
            return result
        }
    }

    /// A field of a record type: its type and its index options.
    public struct Field: Sendable, Hashable {
        /// The field's type, such as `STRING` or `LIST<REFERENCE>`.
        public var type: DataType
        /// The index options: `QUERYABLE`, `SORTABLE`, `SEARCHABLE`.
        public var indexes: IndexOptions

        /// Creates a field of `type` with index options `indexes`.
        public init(_ type: DataType, indexes: IndexOptions = []) {
            self.type = type
            self.indexes = indexes
        }
    }

    /// The six system fields every record type has. A schema declares one only to give it
    /// index options; its type is fixed.
    ///
    /// The cases are in canonical order, the order of their names.
    public enum SystemField: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// `___createTime TIMESTAMP`: the creation date.
        case createTime = "___createTime"
        /// `___createdBy REFERENCE`: the creator's user record.
        case createdBy = "___createdBy"
        /// `___etag STRING`: the record change tag.
        case etag = "___etag"
        /// `___modTime TIMESTAMP`: the modification date.
        case modTime = "___modTime"
        /// `___modifiedBy REFERENCE`: the last modifier's user record.
        case modifiedBy = "___modifiedBy"
        /// `___recordID REFERENCE`: the record ID (the dashboard's `recordName`).
        case recordID = "___recordID"

        /// The field's fixed type.
        public var type: DataType {
            switch self {
            case .createTime, .modTime: .timestamp
            case .createdBy, .modifiedBy, .recordID: .reference
            case .etag: .string
            }
        }

        /// The index options the field can have: the ones FogKit's indexes support on it.
        /// `___etag` takes none, the dates `QUERYABLE` and `SORTABLE`, the references
        /// `QUERYABLE`.
        public var allowedIndexes: IndexOptions {
            switch self {
            case .createTime, .modTime: [.queryable, .sortable]
            case .createdBy, .modifiedBy, .recordID: .queryable
            case .etag: []
            }
        }

        /// The key predicates, sort descriptors and
        /// ``Container/Administrator/setIndexes(_:ofRecordType:)`` use for the field, one of
        /// ``Record/SystemFieldKey`` (`recordChangeTag` for `___etag`).
        public var fieldKey: Record.FieldKey {
            switch self {
            case .createTime: Record.SystemFieldKey.creationDate
            case .createdBy: Record.SystemFieldKey.creatorUserRecordID
            case .etag: "recordChangeTag"
            case .modTime: Record.SystemFieldKey.modificationDate
            case .modifiedBy: Record.SystemFieldKey.lastModifiedUserRecordID
            case .recordID: Record.SystemFieldKey.recordID
            }
        }

        /// The field's name in the schema language, such as `___createTime`.
        public var description: String { rawValue }
    }
}
