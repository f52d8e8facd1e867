import Foundation

extension WebServices {
    /// A zone ID dictionary: `{"zoneName": …, "ownerRecordName": …, "zoneType": …}`.
    ///
    /// `zoneName` defaults to `_defaultZone` when the key is left out, as CloudKit JS does.
    /// `ownerRecordName` is the owner's user record name; left out, it means the caller.
    /// Decoding also accepts `ownerName`, which some clients send.
    public struct ZoneID: Codable, Sendable, Hashable {
        /// The zone's name; `_defaultZone` for the default zone.
        public var zoneName: String
        /// The owner's user record name, or `nil` for the current user.
        public var ownerRecordName: String?
        /// Whether the zone is the default zone or a custom one (responses carry it).
        public var zoneType: ZoneType?

        /// The kinds of zone CloudKit names in zone IDs.
        public enum ZoneType: String, Codable, Sendable, Hashable {
            /// `DEFAULT_ZONE`: a database's default zone.
            case defaultZone = "DEFAULT_ZONE"
            /// `REGULAR_CUSTOM_ZONE`: a custom zone.
            case regularCustomZone = "REGULAR_CUSTOM_ZONE"
        }

        /// Creates a zone ID dictionary.
        public init(zoneName: String = RecordZone.ID.defaultZoneName, ownerRecordName: String? = nil, zoneType: ZoneType? = nil) {
            self.zoneName = zoneName
            self.ownerRecordName = ownerRecordName
            self.zoneType = zoneType
        }

        /// The dictionary of a FogKit zone ID, with its zone type; the owner is left out when
        /// it is ``CurrentUserDefaultName`` (the current user).
        public init(_ zoneID: RecordZone.ID) {
            self.init(
                zoneName: zoneID.zoneName, ownerRecordName: zoneID.ownerName == CurrentUserDefaultName ? nil : zoneID.ownerName,
                zoneType: zoneID.isDefaultZone ? .defaultZone : .regularCustomZone)
        }

        /// The FogKit zone ID; a missing owner becomes ``CurrentUserDefaultName``.
        public var recordZoneID: RecordZone.ID {
            RecordZone.ID(zoneName: zoneName, ownerName: ownerRecordName ?? CurrentUserDefaultName)
        }

        enum CodingKeys: String, CodingKey {
            case zoneName, ownerRecordName, zoneType, ownerName
        }

        /// Decodes a zone ID, accepting `ownerName` as an alias of `ownerRecordName`.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            zoneName = try c.decodeIfPresent(String.self, forKey: .zoneName) ?? RecordZone.ID.defaultZoneName
            guard !zoneName.isEmpty else { throw FormatError(c.codingPath + [CodingKeys.zoneName], "is empty") }
            ownerRecordName =
                try c.decodeIfPresent(String.self, forKey: .ownerRecordName) ?? c.decodeIfPresent(String.self, forKey: .ownerName)
            if let type = try c.decodeIfPresent(String.self, forKey: .zoneType) {
                guard let known = ZoneType(rawValue: type) else {
                    throw FormatError(c.codingPath + [CodingKeys.zoneType], "unknown zone type \"\(type)\"")
                }
                zoneType = known
            }
        }

        /// Encodes `zoneName`, and `ownerRecordName` and `zoneType` when known.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(zoneName, forKey: .zoneName)
            try c.encodeIfPresent(ownerRecordName, forKey: .ownerRecordName)
            try c.encodeIfPresent(zoneType, forKey: .zoneType)
        }
    }
}
