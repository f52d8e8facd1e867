/// How a save treats the stored version of a record
/// (CloudKit's `CKModifyRecordsOperation.RecordSavePolicy`).
public enum RecordSavePolicy: Int, Sendable, Hashable, CaseIterable {
    /// Save only if the record's ``Record/recordChangeTag`` matches the stored
    /// record's, and refuse to overwrite an existing record with a new one; either
    /// conflict fails with ``FogError/Code/serverRecordChanged``. Sends the changed keys.
    case ifServerRecordUnchanged = 0
    /// Write the changed keys over the stored record without checking tags.
    case changedKeys = 1
    /// Write every key the local record holds (and removals of changed keys) over the
    /// stored record without checking tags; keys only the stored record has stay.
    case allKeys = 2
}

extension RecordSavePolicy {
    /// The engine's form of this policy.
    var savePolicy: SavePolicy {
        switch self {
        case .ifServerRecordUnchanged: .ifServerRecordUnchanged
        case .changedKeys: .changedKeys
        case .allKeys: .allKeys
        }
    }
}
