import Foundation

extension SyncEngine {
    /// A change of a record the app wants sent (CloudKit's `CKSyncEngine.PendingRecordZoneChange`).
    /// It names the record only: the engine asks the delegate for the record when it sends.
    public enum PendingRecordZoneChange: Sendable, Hashable, Codable, CustomStringConvertible {
        /// Save the record with this ID.
        case saveRecord(Record.ID)
        /// Delete the record with this ID.
        case deleteRecord(Record.ID)

        /// The record the change is about.
        public var recordID: Record.ID {
            switch self {
            case .saveRecord(let id), .deleteRecord(let id): id
            }
        }

        /// `saveRecord(<id>)` or `deleteRecord(<id>)`.
        public var description: String {
            switch self {
            case .saveRecord(let id): "saveRecord(\(id))"
            case .deleteRecord(let id): "deleteRecord(\(id))"
            }
        }
    }

    /// A change of a zone the app wants sent (CloudKit's `CKSyncEngine.PendingDatabaseChange`).
    /// The engine sends zone changes before the records that live in them.
    public enum PendingDatabaseChange: Sendable, Hashable, Codable, CustomStringConvertible {
        /// Save (create) the zone.
        case saveZone(RecordZone)
        /// Delete the zone with this ID.
        case deleteZone(RecordZone.ID)

        /// The zone the change is about.
        public var zoneID: RecordZone.ID {
            switch self {
            case .saveZone(let zone): zone.zoneID
            case .deleteZone(let id): id
            }
        }

        /// `saveZone(<id>)` or `deleteZone(<id>)`.
        public var description: String {
            switch self {
            case .saveZone(let zone): "saveZone(\(zone.zoneID))"
            case .deleteZone(let id): "deleteZone(\(id))"
            }
        }

        /// Changes are equal when they are of one kind for one zone (whatever the
        /// capabilities of a zone to save).
        public static func == (a: PendingDatabaseChange, b: PendingDatabaseChange) -> Bool {
            switch (a, b) {
            case (.saveZone(let x), .saveZone(let y)): x.zoneID == y.zoneID
            case (.deleteZone(let x), .deleteZone(let y)): x == y
            default: false
            }
        }

        /// Hashes the kind and the zone ID.
        public func hash(into hasher: inout Hasher) {
            if case .saveZone = self { hasher.combine(0) } else { hasher.combine(1) }
            hasher.combine(zoneID)
        }

        private enum CodingKeys: String, CodingKey { case kind, zoneID }

        /// Decodes a change stored by ``encode(to:)``.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let zoneID = try c.decode(RecordZone.ID.self, forKey: .zoneID)
            switch try c.decode(String.self, forKey: .kind) {
            case "saveZone": self = .saveZone(RecordZone(zoneID: zoneID))
            case "deleteZone": self = .deleteZone(zoneID)
            case let other:
                throw DecodingError.dataCorruptedError(forKey: .kind, in: c, debugDescription: "unknown pending zone change '\(other)'")
            }
        }

        /// Encodes the kind and the zone ID (a zone's capabilities are the server's).
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .saveZone(let zone):
                try c.encode("saveZone", forKey: .kind)
                try c.encode(zone.zoneID, forKey: .zoneID)
            case .deleteZone(let id):
                try c.encode("deleteZone", forKey: .kind)
                try c.encode(id, forKey: .zoneID)
            }
        }
    }
}
