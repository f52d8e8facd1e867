import Foundation

// CloudKit's IDs are classes that adopt `NSSecureCoding`, so sync code archives them with
// `NSKeyedArchiver`. FogKit's IDs are values (see Docs/CloudKitDifferences.md), which
// `NSKeyedArchiver` cannot hold, so each has an `Archive` object that can. Ported code
// changes one line:
//
//     // CloudKit
//     let id = try NSKeyedUnarchiver.unarchivedObject(ofClass: CKRecord.ID.self, from: data)
//     // FogKit
//     let id = try NSKeyedUnarchiver.unarchivedObject(ofClass: Record.ID.Archive.self, from: data)?.recordID
//
// and archives `Record.ID.Archive(recordID)` (or `recordID.archive`) where it archived the
// ID. The IDs are `Codable` too, which needs no change at all.

/// An `NSSecureCoding` object that holds a zone ID, for `NSKeyedArchiver` (``RecordZone/ID/Archive``).
public final class RecordZoneIDArchive: NSObject, NSSecureCoding, @unchecked Sendable {
    /// The zone ID it holds.
    public let zoneID: RecordZone.ID

    /// Wraps `zoneID` for archiving.
    public init(_ zoneID: RecordZone.ID) { self.zoneID = zoneID }

    /// Always `true`.
    public static var supportsSecureCoding: Bool { true }

    /// Encodes the zone and owner names.
    public func encode(with coder: NSCoder) {
        coder.encode(zoneID.zoneName as NSString, forKey: "zoneName")
        coder.encode(zoneID.ownerName as NSString, forKey: "ownerName")
    }

    /// Decodes an archived zone ID; `nil` when a name is missing.
    public init?(coder: NSCoder) {
        guard let zoneName = coder.decodeObject(of: NSString.self, forKey: "zoneName") as String?,
            let ownerName = coder.decodeObject(of: NSString.self, forKey: "ownerName") as String?
        else { return nil }
        zoneID = RecordZone.ID(zoneName: zoneName, ownerName: ownerName)
    }

    /// Equal when the IDs are.
    public override func isEqual(_ object: Any?) -> Bool { (object as? RecordZoneIDArchive)?.zoneID == zoneID }
    /// The ID's hash.
    public override var hash: Int { zoneID.hashValue }
}

extension RecordZone.ID {
    /// The object that holds a zone ID for `NSKeyedArchiver`; top-level, as
    /// `NSKeyedArchiver` on Linux requires.
    public typealias Archive = RecordZoneIDArchive

    /// The ID in an object `NSKeyedArchiver` can archive.
    public var archive: Archive { Archive(self) }
}

/// An `NSSecureCoding` object that holds a record ID, for `NSKeyedArchiver` (``Record/ID/Archive``).
public final class RecordIDArchive: NSObject, NSSecureCoding, @unchecked Sendable {
    /// The record ID it holds.
    public let recordID: Record.ID

    /// Wraps `recordID` for archiving.
    public init(_ recordID: Record.ID) { self.recordID = recordID }

    /// Always `true`.
    public static var supportsSecureCoding: Bool { true }

    /// Encodes the record name and the zone ID.
    public func encode(with coder: NSCoder) {
        coder.encode(recordID.recordName as NSString, forKey: "recordName")
        coder.encode(recordID.zoneID.archive, forKey: "zoneID")
    }

    /// Decodes an archived record ID; `nil` when a part is missing.
    public init?(coder: NSCoder) {
        guard let recordName = coder.decodeObject(of: NSString.self, forKey: "recordName") as String?,
            let zone = coder.decodeObject(of: RecordZoneIDArchive.self, forKey: "zoneID")
        else { return nil }
        recordID = Record.ID(recordName: recordName, zoneID: zone.zoneID)
    }

    /// Equal when the IDs are.
    public override func isEqual(_ object: Any?) -> Bool { (object as? RecordIDArchive)?.recordID == recordID }
    /// The ID's hash.
    public override var hash: Int { recordID.hashValue }
}

extension Record.ID {
    /// The object that holds a record ID for `NSKeyedArchiver`; top-level, as
    /// `NSKeyedArchiver` on Linux requires.
    public typealias Archive = RecordIDArchive

    /// The ID in an object `NSKeyedArchiver` can archive.
    public var archive: Archive { Archive(self) }
}

/// An `NSSecureCoding` object that holds a reference, for `NSKeyedArchiver` (``Record/Reference/Archive``).
public final class ReferenceArchive: NSObject, NSSecureCoding, @unchecked Sendable {
    /// The reference it holds.
    public let reference: Record.Reference

    /// Wraps `reference` for archiving.
    public init(_ reference: Record.Reference) { self.reference = reference }

    /// Always `true`.
    public static var supportsSecureCoding: Bool { true }

    /// Encodes the target's ID and the action.
    public func encode(with coder: NSCoder) {
        coder.encode(reference.recordID.archive, forKey: "recordID")
        coder.encode(Int(reference.action.rawValue), forKey: "action")
    }

    /// Decodes an archived reference; `nil` when a part is missing or the action unknown.
    public init?(coder: NSCoder) {
        guard let id = coder.decodeObject(of: RecordIDArchive.self, forKey: "recordID"),
            let action = Record.ReferenceAction(rawValue: UInt(clamping: coder.decodeInteger(forKey: "action")))
        else { return nil }
        reference = Record.Reference(recordID: id.recordID, action: action)
    }

    /// Equal when the references are.
    public override func isEqual(_ object: Any?) -> Bool { (object as? ReferenceArchive)?.reference == reference }
    /// The reference's hash.
    public override var hash: Int { reference.hashValue }
}

extension Record.Reference {
    /// The object that holds a reference for `NSKeyedArchiver`; top-level, as
    /// `NSKeyedArchiver` on Linux requires.
    public typealias Archive = ReferenceArchive

    /// The reference in an object `NSKeyedArchiver` can archive.
    public var archive: Archive { Archive(self) }
}
