extension Record {
    /// What happens to a record when the record it references is deleted
    /// (CloudKit's `CKRecord.ReferenceAction`).
    public enum ReferenceAction: UInt, Sendable, Hashable, Codable {
        /// Nothing: the reference keeps the deleted record's ID.
        case none = 0
        /// The referencing record is deleted too (cascading, immediately).
        case deleteSelf = 1
    }

    /// A link from one record to another record in the same zone
    /// (CloudKit's `CKRecord.Reference`). In queries a reference compares by
    /// record ID only.
    public struct Reference: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The referenced record's ID.
        public let recordID: Record.ID
        /// What deleting the referenced record does to the referencing one.
        public let action: ReferenceAction

        /// Creates a reference to the record with `recordID`.
        public init(recordID: Record.ID, action: ReferenceAction) {
            self.recordID = recordID
            self.action = action
        }

        /// Creates a reference to `record`.
        public init(record: Record, action: ReferenceAction) {
            self.init(recordID: record.recordID, action: action)
        }

        /// The target's name and the action.
        public var description: String { "<Reference \(recordID.recordName) \(action)>" }
    }
}
