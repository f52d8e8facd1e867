import Foundation

/// A record as the engine stores it: names instead of client-facing IDs, and
/// the commit sequence of its last change.
struct StoredRecord: Sendable {
    var recordType: String
    var recordName: String
    var zone: Int64
    var values: [String: FieldValue]
    /// The parent's record name (same zone; action is always `none`).
    var parent: String?
    /// The share record's name, if the record is shared.
    var share: String?
    var creationDate: Date
    var modificationDate: Date
    var creator: String
    var modifier: String
    /// The commit sequence of the last change; the change tag derives from it.
    var changeSequence: Int64

    /// The change tag clients see: the sequence in base 36.
    var changeTag: String { Self.tag(for: changeSequence) }

    static func tag(for sequence: Int64) -> String { String(sequence, radix: 36) }

    /// The record as a client sees it, with IDs in `zoneID` and asset URLs in `assetDirectory`.
    func makeRecord(zoneID: RecordZone.ID, assetDirectory: URL) -> Record {
        let system = Record.SystemFields(
            creationDate: creationDate, modificationDate: modificationDate, creatorName: creator, lastModifierName: modifier,
            changeSequence: changeSequence,
            share: share.map { Record.Reference(recordID: Record.ID(recordName: $0, zoneID: zoneID), action: .none) })
        var values = values
        for (key, value) in values where value.needsResolution {
            values[key] = value.resolved(zoneID: zoneID, assetDirectory: assetDirectory)
        }
        let record = Record(
            recordType: recordType, recordID: Record.ID(recordName: recordName, zoneID: zoneID), values: values,
            parent: parent.map { Record.Reference(recordID: Record.ID(recordName: $0, zoneID: zoneID), action: .none) },
            system: system)
        return recordType == Record.SystemType.share ? Share.restore(from: record) : record
    }
}

extension FieldValue {
    /// Whether ``resolved(zoneID:assetDirectory:)`` may change the value.
    var needsResolution: Bool {
        switch self {
        case .asset, .assetList, .reference, .referenceList: true
        default: false
        }
    }

    /// The value with references pointing into `zoneID` (stored references keep
    /// only the record name, because a reference never leaves its zone) and
    /// assets pointing into `assetDirectory`.
    func resolved(zoneID: RecordZone.ID, assetDirectory: URL) -> FieldValue {
        switch self {
        case .asset(let a):
            return .asset(Asset(storedName: a.storedName ?? "", size: a.storedSize, directory: assetDirectory))
        case .assetList(let list):
            return .assetList(list.map { Asset(storedName: $0.storedName ?? "", size: $0.storedSize, directory: assetDirectory) })
        case .reference(let r) where r.recordID.zoneID != zoneID:
            return .reference(Record.Reference(recordID: Record.ID(recordName: r.recordID.recordName, zoneID: zoneID), action: r.action))
        case .referenceList(let list) where list.contains(where: { $0.recordID.zoneID != zoneID }):
            return .referenceList(
                list.map {
                    Record.Reference(recordID: Record.ID(recordName: $0.recordID.recordName, zoneID: zoneID), action: $0.action)
                })
        default:
            return self
        }
    }
}
