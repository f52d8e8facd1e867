import Foundation
import Synchronization

/// A snapshot of a client's ``Record`` taken when a save begins, so the save
/// works on values that no other task can change meanwhile.
///
/// A class: a request's items, plans and results copy it several times, and a struct's copy
/// would retain each of its fields every time. Its variables change only while
/// ``RecordWriter/prepareModify`` prepares the request, before the request reaches the
/// writer; from then on it is read only, which makes it safe to share.
final class ClientRecord: @unchecked Sendable {
    let record: Record
    let recordType: String
    let recordID: Record.ID
    var values: [String: FieldValue]
    let changedKeys: [String]
    let originalValues: [String: FieldValue?]
    let parent: Record.Reference?
    let parentChanged: Bool
    let changeTag: String?
    /// The type of each encrypted field's value before it was sealed (by stored name): its
    /// values are `bytes` from ``RecordWriter/prepareModify`` on.
    var encryptedTypes: [String: FieldType] = [:]
    /// The save's own rule (a Web Services operation, ``Database/modify(_:atomically:)``);
    /// `nil` follows the request's ``SavePolicy``.
    var rule: SaveRule?

    init(_ record: Record) {
        let state = record.state.withLock { $0 }
        self.record = record
        recordType = record.recordType
        recordID = record.recordID
        var values = state.values
        var changedKeys = state.changedKeys
        if let share = record as? Share {
            // A share's state travels in its reserved fields (`Share+Storage.swift`), always written.
            for (key, value) in share.storedValues() { values[key] = value }
            changedKeys += Share.internalKeys.sorted().filter { !changedKeys.contains($0) }
        }
        self.values = values
        self.changedKeys = changedKeys
        originalValues = state.originalValues
        parent = state.parent
        parentChanged = state.parentChanged
        changeTag = state.recordChangeTag
    }

    /// The record as the client last fetched it: its changed keys reverted.
    func ancestor() -> Record? {
        guard changeTag != nil else { return nil }
        let copy = record.copy()
        copy.state.withLock { state in
            state.materialize()
            for (key, original) in originalValues { state.decoded[key] = original }
            if let original = state.originalParent { state.parent = original }
            state.forgetChanges()
        }
        return copy
    }
}

/// How one save treats the stored record, whatever the request's ``SavePolicy``: the save
/// operations of CloudKit Web Services' `records/modify` (``WebServices/RecordOperation``).
enum SaveRule: Sendable, Hashable {
    /// A new record: a stored one fails the save with `serverRecordChanged`.
    case create
    /// The stored record, at the client's change tag: its changed keys are written.
    case update
    /// The changed keys written over the stored record, or a new record.
    case forceUpdate
    /// The stored record, at the client's change tag: its fields become the client's.
    case replace
    /// The client's fields replace the stored record's, or make a new record.
    case forceReplace

    /// Whether the save needs the client's change tag, and the stored record at that tag.
    var checksTag: Bool { self == .update || self == .replace }
    /// Whether the client's fields replace the stored record's (the fields it lacks are removed).
    var replacesFields: Bool { self == .replace || self == .forceReplace }
}
