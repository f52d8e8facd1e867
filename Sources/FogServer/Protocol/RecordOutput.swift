import FogKit
import Foundation

/// Writes records, tombstones and zone IDs as a response gives them: every field with its
/// `type`, `created`/`modified` with `timestamp`, `userRecordName` and `deviceID`, `deleted`,
/// and the zone ID with `zoneName`, `ownerRecordName` and `zoneType`.
struct RecordOutput {
    let call: EndpointCall
    /// The caller's record name, the owner of its own zones.
    let callerRecordName: String?
    /// Number fields as strings (`numbersAsStrings`), for JavaScript's sake.
    var numbersAsStrings = false

    init(_ call: EndpointCall, callerRecordName: String?, numbersAsStrings: Bool? = nil) {
        self.call = call
        self.callerRecordName = callerRecordName
        self.numbersAsStrings = numbersAsStrings ?? false
    }

    /// The zone ID dictionary of `zoneID`.
    func zoneID(_ zoneID: RecordZone.ID) -> WebServices.ZoneID {
        // The public database's zone belongs to no user: Web Services calls its owner `_defaultOwner`.
        let own = call.route.scope == .public ? RecordOutput.publicOwner : (callerRecordName ?? RecordOutput.publicOwner)
        let owner = zoneID.ownerName == CurrentUserDefaultName ? own : zoneID.ownerName
        return WebServices.ZoneID(
            zoneName: zoneID.zoneName, ownerRecordName: owner, zoneType: zoneID.isDefaultZone ? .defaultZone : .regularCustomZone)
    }

    func zoneIDJSON(_ zoneID: RecordZone.ID) -> JSON {
        let z = self.zoneID(zoneID)
        return .object([
            ("zoneName", .string(z.zoneName)), ("ownerRecordName", .string(z.ownerRecordName ?? RecordOutput.publicOwner)),
            ("zoneType", .string(z.zoneType?.rawValue ?? "REGULAR_CUSTOM_ZONE")),
        ])
    }

    /// The record dictionary of `record`.
    func record(_ record: Record, desiredKeys: [String]? = nil) throws -> JSON {
        var writer = WebServices.JSONWriter()
        // A share carries its link as a short GUID (`records/resolve`, `records/accept`).
        let shortGUID = (record as? Share)?.url.map(ShareEndpoints.shortGUID(of:))
        let locate: WebServices.AssetLocator = { asset in AssetLinks.downloadURL(for: asset, call: call) }
        if numbersAsStrings {
            var dictionary = try WebServices.RecordDictionary(record, zoneID: zoneID(record.recordID.zoneID), locate: locate)
            dictionary.deleted = false
            if let desiredKeys {
                let wanted = Set(desiredKeys)
                dictionary.fields = dictionary.fields.filter { wanted.contains($0.key) }
            }
            for key in dictionary.fields.keys {
                dictionary.fields[key]!.value = dictionary.fields[key]!.value.map(Self.stringifyingNumbers)
            }
            dictionary.created?.deviceID = Self.deviceID
            dictionary.modified?.deviceID = Self.deviceID
            try writer.write(dictionary, extra: [("shortGUID", shortGUID)])
        } else {
            // Straight from the record: every field has its type, `created` and `modified`
            // FogKit's device ID.
            try writer.write(
                record, zoneID: zoneID(record.recordID.zoneID), deleted: false, desiredKeys: desiredKeys.map(Set.init),
                locate: locate, extra: [("shortGUID", shortGUID)])
        }
        // A shared record's `share`, a share's participants: members after the written ones.
        let sharing = ShareOutput.members(of: record, output: self)
        guard !sharing.isEmpty, writer.bytes.last == UInt8(ascii: "}") else { return .raw(writer.bytes) }
        var bytes = writer.bytes
        bytes.removeLast()
        for (key, value) in sharing {
            bytes.append(UInt8(ascii: ","))
            JSON.writeString(key, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            value.write(into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return .raw(bytes)
    }

    /// A deleted record: `{recordName, deleted: true, zoneID}` and its type when known.
    func tombstone(_ id: Record.ID, recordType: String? = nil) -> JSON {
        var members: [(String, JSON)] = [("recordName", .string(id.recordName))]
        if let recordType { members.append(("recordType", .string(recordType))) }
        members.append(("deleted", .bool(true)))
        members.append(("zoneID", zoneIDJSON(id.zoneID)))
        return .object(members)
    }

    /// A failed item of a records batch.
    func error(_ error: any Error, recordName: String) -> JSON {
        ServerError(error, signIn: call.state.signInURL).item([("recordName", .string(recordName))])
    }

    /// The owner name of the public database's zone in Web Services.
    static let publicOwner = "_defaultOwner"

    /// The `deviceID` of `created` and `modified`: FogKit does not record devices.
    static let deviceID = "FogKit"

    static func stringifyingNumbers(_ value: WebServices.Value) -> WebServices.Value {
        switch value {
        case .int64(let i): .string(String(i))
        case .double(let d): .string(String(d))
        case .list(let items): .list(items.map(stringifyingNumbers))
        default: value
        }
    }
}
