import Foundation

extension WebServices {
    /// One operation of CloudKit Web Services' `records/modify`, with its semantics:
    /// ``Database/modify(_:atomically:)`` runs a batch of them, each with its own rule.
    ///
    /// The operations that check a change tag take it from the record
    /// (``Record/recordChangeTag``, which a record made from a ``RecordDictionary`` with a
    /// `recordChangeTag` carries) or, for ``delete(_:recordChangeTag:)``, from the operation.
    /// The "update" operations write only the record's changed keys (every field of a record
    /// made from a dictionary, and the keys set to `nil` since, which are removed); the
    /// "replace" operations make the record's fields the stored record's whole set.
    ///
    /// ```swift
    /// let record = try Record(WebServices.RecordDictionary(
    ///     recordName: "n1", recordType: "Note", recordChangeTag: tag,
    ///     fields: ["title": .init(value: .string("Groceries"))]))
    /// let results = try await database.modify([.update(record), .forceDelete(oldID)], atomically: false)
    /// ```
    public enum RecordOperation: Sendable {
        /// Creates a new record. A stored record with its ID fails the operation with
        /// ``FogError/Code/serverRecordChanged`` (Web Services' `EXISTS`), the stored record in
        /// ``FogError/serverRecord``. The record's change tag, if any, is ignored.
        case create(Record)
        /// Updates a stored record at the record's ``Record/recordChangeTag``: writes only its
        /// changed keys (a key set to `nil` is removed) and keeps the other stored fields.
        /// Fails with ``FogError/Code/serverRecordChanged`` (with ``FogError/serverRecord``)
        /// when the stored tag differs, ``FogError/Code/unknownItem`` when the record is not
        /// stored, ``FogError/Code/invalidArguments`` when the record has no change tag.
        case update(Record)
        /// Writes the record's changed keys over the stored record without checking a change
        /// tag, keeping the other stored fields; creates the record when it is not stored (as
        /// ``RecordSavePolicy/changedKeys`` does).
        case forceUpdate(Record)
        /// Replaces a stored record's fields at the record's ``Record/recordChangeTag``: the
        /// stored fields the record does not hold are removed. Fails as ``update(_:)`` does.
        case replace(Record)
        /// Replaces the stored record's fields (as ``replace(_:)``) without checking a change
        /// tag; creates the record when it is not stored.
        case forceReplace(Record)
        /// Deletes a stored record whose change tag is `recordChangeTag`. Fails with
        /// ``FogError/Code/serverRecordChanged`` (with ``FogError/serverRecord``) when the
        /// stored tag differs, ``FogError/Code/unknownItem`` when the record is not stored.
        case delete(Record.ID, recordChangeTag: String)
        /// Deletes a record without checking a change tag, as
        /// ``Database/modifyRecords(saving:deleting:savePolicy:atomically:)`` does
        /// (``FogError/Code/unknownItem`` when it is not stored).
        case forceDelete(Record.ID)

        /// The ID of the record the operation changes.
        public var recordID: Record.ID {
            switch self {
            case .create(let r), .update(let r), .forceUpdate(let r), .replace(let r), .forceReplace(let r): r.recordID
            case .delete(let id, _), .forceDelete(let id): id
            }
        }
    }
}
