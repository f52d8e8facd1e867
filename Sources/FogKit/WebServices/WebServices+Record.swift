import Foundation
import Synchronization

extension WebServices {
    /// A record dictionary: `recordName`, `recordType`, `recordChangeTag`, `fields`,
    /// `created`, `modified`, `deleted`, `zoneID` and `parent`.
    ///
    /// ```json
    /// {"recordName":"n1","recordType":"Note","recordChangeTag":"2s",
    ///  "fields":{"title":{"type":"STRING","value":"Groceries"}},
    ///  "created":{"deviceID":"FogKit","timestamp":1767300000123,"userRecordName":"_5d8a…"},
    ///  "modified":{"deviceID":"FogKit","timestamp":1767300000123,"userRecordName":"_5d8a…"},
    ///  "zoneID":{"ownerRecordName":"_5d8a…","zoneName":"Notes","zoneType":"REGULAR_CUSTOM_ZONE"}}
    /// ```
    ///
    /// Only `recordName` is required to decode; converting to a ``Record`` also needs
    /// `recordType`. Keys FogKit does not know (`pluginFields`, `shortGUID`, …) are ignored.
    public struct RecordDictionary: Codable, Sendable, Hashable {
        /// The record's name within its zone.
        public var recordName: String
        /// The record type.
        public var recordType: String?
        /// The store's version tag of the record.
        public var recordChangeTag: String?
        /// The fields by name.
        public var fields: [String: FieldValueDictionary]
        /// When and by whom the record was created.
        public var created: UserTimestamp?
        /// When and by whom the record was last modified.
        public var modified: UserTimestamp?
        /// `true` for a deleted record (a tombstone).
        public var deleted: Bool?
        /// The zone that holds the record.
        public var zoneID: ZoneID?
        /// The record's parent, `{"recordName": …}`.
        public var parent: ParentDictionary?

        /// Creates a record dictionary.
        public init(
            recordName: String, recordType: String? = nil, recordChangeTag: String? = nil, fields: [String: FieldValueDictionary] = [:],
            created: UserTimestamp? = nil, modified: UserTimestamp? = nil, deleted: Bool? = nil, zoneID: ZoneID? = nil,
            parent: ParentDictionary? = nil
        ) {
            self.recordName = recordName
            self.recordType = recordType
            self.recordChangeTag = recordChangeTag
            self.fields = fields
            self.created = created
            self.modified = modified
            self.deleted = deleted
            self.zoneID = zoneID
            self.parent = parent
        }

        enum CodingKeys: String, CodingKey {
            case recordName, recordType, recordChangeTag, fields, created, modified, deleted, zoneID, parent
        }

        /// Decodes a record dictionary, refusing a missing or empty `recordName`.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            guard let name = try c.decodeIfPresent(String.self, forKey: .recordName) else {
                throw FormatError(c.codingPath + [CodingKeys.recordName], "is missing")
            }
            guard !name.isEmpty else { throw FormatError(c.codingPath + [CodingKeys.recordName], "is empty") }
            recordName = name
            recordType = try c.decodeIfPresent(String.self, forKey: .recordType)
            recordChangeTag = try c.decodeIfPresent(String.self, forKey: .recordChangeTag)
            fields = try c.decodeIfPresent([String: FieldValueDictionary].self, forKey: .fields) ?? [:]
            created = try c.decodeIfPresent(UserTimestamp.self, forKey: .created)
            modified = try c.decodeIfPresent(UserTimestamp.self, forKey: .modified)
            deleted = try c.decodeIfPresent(Bool.self, forKey: .deleted)
            zoneID = try c.decodeIfPresent(ZoneID.self, forKey: .zoneID)
            parent = try c.decodeIfPresent(ParentDictionary.self, forKey: .parent)
        }
    }

    /// `created` and `modified`: `{"timestamp": ms, "userRecordName": …, "deviceID": …}`.
    /// FogKit writes all three (some clients drop the dictionary otherwise); its device ID is
    /// always `FogKit`.
    public struct UserTimestamp: Codable, Sendable, Hashable {
        /// Milliseconds since 1970.
        public var timestamp: Int64
        /// The user record name of the user who made the change.
        public var userRecordName: String?
        /// The device the change came from.
        public var deviceID: String?

        /// Creates the dictionary.
        public init(timestamp: Int64, userRecordName: String?, deviceID: String? = "FogKit") {
            self.timestamp = timestamp
            self.userRecordName = userRecordName
            self.deviceID = deviceID
        }

        /// The dictionary of a date and user; the date rounds to the nearest millisecond.
        public init(date: Date, userRecordName: String?) {
            self.init(timestamp: Milliseconds.from(date), userRecordName: userRecordName)
        }

        /// The date of ``timestamp``.
        public var date: Date { Milliseconds.date(timestamp) }

        enum CodingKeys: String, CodingKey { case timestamp, userRecordName, deviceID }

        /// Decodes the dictionary; `timestamp` must be integer milliseconds.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            timestamp = try c.decode(Milliseconds.self, forKey: .timestamp).value
            userRecordName = try c.decodeIfPresent(String.self, forKey: .userRecordName)
            deviceID = try c.decodeIfPresent(String.self, forKey: .deviceID)
        }
    }

    /// A record's parent: `{"recordName": …}` (the parent is always in the record's zone).
    public struct ParentDictionary: Codable, Sendable, Hashable {
        /// The parent record's name.
        public var recordName: String

        /// Creates the dictionary.
        public init(recordName: String) { self.recordName = recordName }
    }
}

extension WebServices.RecordDictionary {
    /// The dictionary of a record: its name, type, change tag, fields (each typed), creation
    /// and modification, zone ID and parent.
    ///
    /// - Parameters:
    ///   - record: The record.
    ///   - zoneID: The zone ID to write; by default the record's own (whose owner is left out
    ///     when it is ``CurrentUserDefaultName``).
    ///   - locate: Where each asset's bytes are, for its `downloadURL`.
    /// - Throws: ``WebServices/FormatError`` for a value JSON cannot hold (a double that is not
    ///   finite), naming the field.
    public init(
        _ record: Record, zoneID: WebServices.ZoneID? = nil, locate: WebServices.AssetLocator = WebServices.fileURL(of:)
    ) throws {
        var fields: [String: WebServices.FieldValueDictionary] = [:]
        for key in record.allKeys() {
            guard let value = record.fieldValue(forKey: key) else { continue }
            fields[key] = try WebServices.FieldValueDictionary(value, path: "fields.\(key).value", locate: locate)
        }
        // Encrypted fields in plain, flagged `isEncrypted` (a key is never both kinds).
        let encrypted = record.encryptedValues
        for key in encrypted.allKeys() {
            guard let value = encrypted.fieldValue(forKey: key) else { continue }
            var dictionary = try WebServices.FieldValueDictionary(value, path: "fields.\(key).value", locate: locate)
            dictionary.isEncrypted = true
            fields[key] = dictionary
        }
        self.init(
            recordName: record.recordID.recordName, recordType: record.recordType, recordChangeTag: record.recordChangeTag,
            fields: fields,
            created: record.creationDate.map {
                WebServices.UserTimestamp(date: $0, userRecordName: record.creatorUserRecordID?.recordName)
            },
            modified: record.modificationDate.map {
                WebServices.UserTimestamp(date: $0, userRecordName: record.lastModifiedUserRecordID?.recordName)
            },
            zoneID: zoneID ?? WebServices.ZoneID(record.recordID.zoneID),
            parent: record.parent.map { WebServices.ParentDictionary(recordName: $0.recordID.recordName) })
    }
}

extension Record {
    /// A record made from a Web Services record dictionary, ready to save: every field counts
    /// as changed. The change tag, creation and modification the dictionary carries are kept on
    /// the record for reading, but a save does not send them: the store assigns its own.
    ///
    /// - Parameters:
    ///   - dictionary: The record dictionary.
    ///   - zoneID: The zone to put the record in; by default the dictionary's `zoneID` (the
    ///     default zone when it has none). References that name no zone, and the parent,
    ///     are in this zone; references whose zone has the dictionary's zone name follow the
    ///     record into `zoneID`.
    ///   - assetBase: The folder that relative asset `downloadURL`s are in.
    /// - Throws: ``WebServices/FormatError`` naming the field: no `recordType`, a deleted
    ///   record, or a value FogKit cannot store.
    public convenience init(
        _ dictionary: WebServices.RecordDictionary, zoneID: RecordZone.ID? = nil, assetBase: URL? = nil
    ) throws(WebServices.FormatError) {
        guard let type = dictionary.recordType, !type.isEmpty else {
            throw WebServices.FormatError(field: "recordType", reason: "is missing")
        }
        guard dictionary.deleted != true else {
            throw WebServices.FormatError(field: "deleted", reason: "is true: a deleted record cannot be made into a record")
        }
        let ownZone = dictionary.zoneID?.recordZoneID ?? .default
        let zone = zoneID ?? ownZone
        var values = [FieldKey: FieldValue](room: dictionary.fields.count)
        for (key, field) in dictionary.fields {
            guard var value = try field.fieldValue(defaultZone: zone, assetBase: assetBase, field: "fields.\(key).value") else {
                continue
            }
            if zone != ownZone { value = Self.moving(value, from: ownZone.zoneName, to: zone) }
            // A field flagged `isEncrypted` is one of the record's encrypted values.
            values[field.isEncrypted == true ? Record.encryptedKey(key) : key] = value
        }
        self.init(recordType: type, recordID: ID(recordName: dictionary.recordName, zoneID: zone))
        let parent = dictionary.parent.map { Reference(recordID: ID(recordName: $0.recordName, zoneID: zone), action: .none) }
        state.withLock { state in
            state.decoded = values
            state.changedKeys = values.keys.sorted()
            state.originalValues = Dictionary(uniqueKeysWithValues: values.keys.map { ($0, FieldValue?.none) })
            if let parent {
                state.parent = parent
                state.parentChanged = true
            }
            state.system.recordChangeTag = dictionary.recordChangeTag
            state.system.creationDate = dictionary.created?.date
            state.system.creatorName = dictionary.created?.userRecordName
            state.system.modificationDate = dictionary.modified?.date
            state.system.lastModifierName = dictionary.modified?.userRecordName
        }
    }

    /// `value` with its references into the zone named `zoneName` moved to `zone`.
    private static func moving(_ value: FieldValue, from zoneName: String, to zone: RecordZone.ID) -> FieldValue {
        func move(_ r: Reference) -> Reference {
            r.recordID.zoneID.zoneName == zoneName
                ? Reference(recordID: ID(recordName: r.recordID.recordName, zoneID: zone), action: r.action) : r
        }
        switch value {
        case .reference(let r): return .reference(move(r))
        case .referenceList(let l): return .referenceList(l.map(move))
        default: return value
        }
    }
}
