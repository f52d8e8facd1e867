import Foundation

extension Record {
    /// Identifies a record: a record name and the zone that holds it (CloudKit's `CKRecord.ID`).
    ///
    /// Record names are ASCII, at most 255 characters, and must not begin with
    /// `_`; the store checks this when the record is saved and reports a bad name
    /// as ``FogError/Code/invalidArguments``.
    public struct ID: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The record's name, unique within its zone.
        public let recordName: String
        /// The zone that holds the record.
        public let zoneID: RecordZone.ID

        /// Creates a record ID; the name defaults to a new UUID string and the zone
        /// to the default zone.
        public init(recordName: String = UUID().uuidString, zoneID: RecordZone.ID = .default) {
            self.recordName = recordName
            self.zoneID = zoneID
        }

        /// `recordName` in `zoneID`.
        public var description: String { "<Record.ID \(recordName) in \(zoneID)>" }

        /// Hashes the record name alone: IDs that are equal have equal names, and names
        /// rarely repeat across zones, so hashing one string instead of three is enough.
        public func hash(into hasher: inout Hasher) { hasher.combine(recordName) }
    }

    /// A record type name, such as `"Note"` (CloudKit's `CKRecord.RecordType`).
    public typealias RecordType = String
    /// A field name (CloudKit's `CKRecord.FieldKey`).
    public typealias FieldKey = String

    /// Record types the system defines (CloudKit's `CKRecord.SystemType`).
    public enum SystemType {
        /// The type of user records, `"Users"`.
        public static let userRecord: RecordType = "Users"
        /// The type of share records, `"cloudkit.share"`.
        public static let share: RecordType = "cloudkit.share"
    }

    /// Keys of system fields, for predicates and sort descriptors (CloudKit's
    /// `CKRecord.SystemFieldKey`). Their values are the property names apps
    /// write in predicate strings.
    public enum SystemFieldKey {
        /// The record ID.
        public static let recordID: FieldKey = "recordID"
        /// The creation date.
        public static let creationDate: FieldKey = "creationDate"
        /// The creator's user record ID.
        public static let creatorUserRecordID: FieldKey = "creatorUserRecordID"
        /// The modification date.
        public static let modificationDate: FieldKey = "modificationDate"
        /// The last modifier's user record ID.
        public static let lastModifiedUserRecordID: FieldKey = "lastModifiedUserRecordID"
        /// The parent reference.
        public static let parent: FieldKey = "parent"
        /// The share reference.
        public static let share: FieldKey = "share"
    }
}
