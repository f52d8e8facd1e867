import Foundation

/// The system fields of a record the store returns, as its stored header holds them: the
/// dates as seconds, the creator and last modifier as name ids, the change sequence, and the
/// name of the share that holds the record, if any.
///
/// A returned record keeps these instead of ``Record/SystemFields``, which is made only when a
/// system field is read (``decoded``) or changed. Most callers read a record's fields and
/// none of its metadata, and building the metadata (two dates, two user names looked up, their
/// copies into the record and their release) was about 440 instructions of each record a fetch,
/// a query or a change batch made.
///
/// The user names come from the request's ``FieldNameTable``, which learned them while the
/// request decoded (``FieldNameTable/registerUsers(of:names:)``), so reading them later needs
/// no transaction; the share's reference is in the table's zone.
struct StoredSystemFields: Sendable {
    let creationDate: Double
    let modificationDate: Double
    let creator: Int64
    let modifier: Int64
    let changeSequence: Int64
    let shareName: String?
    /// Knows the names of ``creator`` and ``modifier``, and the zone of the record.
    let names: FieldNameTable

    /// The fields of `view`, whose users `names` knows.
    init(_ view: RecordView, names: FieldNameTable) {
        creationDate = view.creationDate
        modificationDate = view.modificationDate
        creator = view.creator
        modifier = view.modifier
        changeSequence = view.changeSequence
        shareName = view.shareRange.map(view.string)
        self.names = names
    }

    /// The system fields as a record holds them once read or changed.
    var decoded: Record.SystemFields {
        Record.SystemFields(
            creationDate: Date(timeIntervalSinceReferenceDate: creationDate),
            modificationDate: Date(timeIntervalSinceReferenceDate: modificationDate), creatorName: names.userName(of: creator) ?? "",
            lastModifierName: names.userName(of: modifier) ?? "", changeSequence: changeSequence,
            share: shareName.map { Record.Reference(recordID: Record.ID(recordName: $0, zoneID: names.zoneID), action: .none) })
    }

    /// The change tag, without the rest (``Record/SystemFields/recordChangeTag``).
    var recordChangeTag: String { StoredRecord.tag(for: changeSequence) }
}
