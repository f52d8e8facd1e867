/// The placeholder owner name that stands for the current user, `"__defaultOwner__"`
/// (CloudKit's `CKCurrentUserDefaultName`).
public let CurrentUserDefaultName = "__defaultOwner__"

extension RecordZone {
    /// Identifies a record zone: a zone name and the name of the user who owns it
    /// (CloudKit's `CKRecordZone.ID`).
    public struct ID: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The zone's name.
        public let zoneName: String
        /// The owner's user record name, or ``CurrentUserDefaultName`` for the current user.
        public let ownerName: String

        /// The default zone's name, `"_defaultZone"`.
        public static let defaultZoneName = "_defaultZone"
        /// The default zone of a database.
        public static let `default` = ID()

        /// Creates a zone ID; both names default to the current user's default zone.
        public init(zoneName: String = ID.defaultZoneName, ownerName: String = CurrentUserDefaultName) {
            self.zoneName = zoneName
            self.ownerName = ownerName
        }

        /// Whether this is the default zone's ID.
        public var isDefaultZone: Bool { zoneName == Self.defaultZoneName }

        /// `zoneName:ownerName`.
        public var description: String { "\(zoneName):\(ownerName)" }

        /// Hashes the zone name alone (equal IDs have equal names).
        public func hash(into hasher: inout Hasher) { hasher.combine(zoneName) }
    }
}
