import Foundation
import Synchronization

extension Record {
    /// The key under which ``encodeSystemFields(with:)`` stores its bytes.
    static let systemFieldsCoderKey = "FogKitSystemFields"
    private static let archiveVersion: UInt8 = 1

    /// Archives the record's system fields — type, ID, change tag, dates, user IDs,
    /// parent and share — but no user fields and no changed keys, as CloudKit's
    /// `encodeSystemFields(with:)` does. Use it to keep a local cache of records
    /// and save later edits with conflict detection:
    ///
    /// ```swift
    /// let archiver = NSKeyedArchiver(requiringSecureCoding: true)
    /// record.encodeSystemFields(with: archiver)
    /// let data = archiver.encodedData
    /// // later
    /// let restored = Record(coder: try NSKeyedUnarchiver(forReadingFrom: data))!
    /// ```
    public func encodeSystemFields(with coder: NSCoder) {
        coder.encode(systemFieldsData() as NSData, forKey: Self.systemFieldsCoderKey)
    }

    /// Restores a record from system fields archived with ``encodeSystemFields(with:)``;
    /// `nil` when the coder holds no such archive or it is damaged.
    public convenience init?(coder: NSCoder) {
        guard let data = coder.decodeObject(of: NSData.self, forKey: Self.systemFieldsCoderKey) as Data? else {
            return nil
        }
        do { try self.init(systemFieldsData: data) } catch { return nil }
    }

    /// The record's system fields as bytes (the payload of ``encodeSystemFields(with:)``).
    public func systemFieldsData() -> Data {
        let s = state.withLock { $0 }
        var w = ByteWriter(capacity: 128)
        w.u8(Self.archiveVersion)
        w.string(recordType)
        w.string(recordID.recordName)
        w.string(recordID.zoneID.zoneName)
        w.string(recordID.zoneID.ownerName)
        func optionalString(_ v: String?) {
            if let v {
                w.u8(1)
                w.string(v)
            } else {
                w.u8(0)
            }
        }
        func optionalDate(_ v: Date?) {
            if let v {
                w.u8(1)
                w.f64(v.timeIntervalSinceReferenceDate)
            } else {
                w.u8(0)
            }
        }
        func optionalReference(_ v: Reference?) {
            if let v {
                w.u8(1)
                w.string(v.recordID.recordName)
                w.u8(UInt8(v.action.rawValue))
            } else {
                w.u8(0)
            }
        }
        optionalString(s.system.recordChangeTag)
        optionalDate(s.system.creationDate)
        optionalDate(s.system.modificationDate)
        optionalString(s.system.creatorUserRecordID?.recordName)
        optionalString(s.system.lastModifiedUserRecordID?.recordName)
        optionalReference(s.parent)
        optionalReference(s.system.share)
        return Data(w.bytes)
    }

    /// Restores a record from ``systemFieldsData()``: the same type, ID and system
    /// fields, no user fields, no changed keys.
    /// - Throws: ``FogError/Code/invalidArguments`` when the bytes are not such an archive.
    public convenience init(systemFieldsData data: Data) throws {
        let decoded = try Self.decodeSystemFields(data)
        self.init(recordType: decoded.type, recordID: decoded.id, values: [:], parent: decoded.parent, system: decoded.system)
    }

    private static func decodeSystemFields(
        _ data: Data
    ) throws(FogError) -> (type: String, id: ID, parent: Reference?, system: SystemFields) {
        do {
            return try data.withUnsafeBytes { buffer in
                var r = ByteReader(buffer)
                let version = try r.u8()
                guard version == archiveVersion else { throw FormatError(message: "archive version \(version)") }
                let type = try r.string()
                let name = try r.string()
                let zone = RecordZone.ID(zoneName: try r.string(), ownerName: try r.string())
                let id = ID(recordName: name, zoneID: zone)
                func optionalString() throws -> String? { try r.u8() == 1 ? try r.string() : nil }
                func optionalDate() throws -> Date? {
                    try r.u8() == 1 ? Date(timeIntervalSinceReferenceDate: try r.f64()) : nil
                }
                func optionalReference() throws -> Reference? {
                    guard try r.u8() == 1 else { return nil }
                    let target = try r.string()
                    guard let action = ReferenceAction(rawValue: UInt(try r.u8())) else {
                        throw FormatError(message: "reference action")
                    }
                    return Reference(recordID: ID(recordName: target, zoneID: zone), action: action)
                }
                var system = SystemFields()
                system.recordChangeTag = try optionalString()
                system.creationDate = try optionalDate()
                system.modificationDate = try optionalDate()
                system.creatorUserRecordID = try optionalString().map { ID(recordName: $0) }
                system.lastModifiedUserRecordID = try optionalString().map { ID(recordName: $0) }
                let parent = try optionalReference()
                system.share = try optionalReference()
                guard r.isAtEnd else { throw FormatError(message: "stray bytes") }
                return (type, id, parent, system)
            }
        } catch {
            throw FogError(.invalidArguments, message: "not a FogKit system-fields archive: \(error)")
        }
    }
}
