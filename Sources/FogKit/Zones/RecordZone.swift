/// A record zone: a group of records with its own capabilities (CloudKit's `CKRecordZone`).
///
/// Every database has a default zone (``RecordZone/default()``), which has no
/// capabilities. Custom zones exist only in the private database; saved custom
/// zones support fetching changes, atomic commits and sharing.
public final class RecordZone: Sendable, Hashable, CustomStringConvertible {
    /// The zone's identifier.
    public let zoneID: ID
    /// What the zone supports. Only meaningful on zones returned by the store;
    /// a zone created locally reports no capabilities until it is saved.
    public let capabilities: Capabilities

    /// Creates a zone with the given name, owned by the current user.
    public convenience init(zoneName: String) {
        self.init(zoneID: ID(zoneName: zoneName))
    }

    /// Creates a zone with the given identifier.
    public init(zoneID: ID) {
        self.zoneID = zoneID
        self.capabilities = []
    }

    init(zoneID: ID, capabilities: Capabilities) {
        self.zoneID = zoneID
        self.capabilities = capabilities
    }

    /// The default zone.
    public static func `default`() -> RecordZone { RecordZone(zoneID: .default) }

    /// Zones are equal when their identifiers and capabilities are equal.
    public static func == (lhs: RecordZone, rhs: RecordZone) -> Bool {
        lhs.zoneID == rhs.zoneID && lhs.capabilities == rhs.capabilities
    }

    /// Hashes the zone ID.
    public func hash(into hasher: inout Hasher) { hasher.combine(zoneID) }

    /// The zone ID and capabilities.
    public var description: String { "<RecordZone \(zoneID) \(capabilities)>" }

    /// What a zone supports (CloudKit's `CKRecordZone.Capabilities`).
    public struct Capabilities: OptionSet, Sendable, Hashable, CustomStringConvertible {
        /// The raw bits, as CloudKit numbers them.
        public let rawValue: UInt
        /// Creates capabilities from raw bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// The zone has a change feed (`fetchChanges`, 1).
        public static let fetchChanges = Capabilities(rawValue: 1 << 0)
        /// Batches commit all-or-nothing in the zone (`atomic`, 2).
        public static let atomic = Capabilities(rawValue: 1 << 1)
        /// Record hierarchies in the zone can be shared (`sharing`, 4).
        public static let sharing = Capabilities(rawValue: 1 << 2)
        /// The whole zone can be shared (`zoneWideSharing`, 8).
        public static let zoneWideSharing = Capabilities(rawValue: 1 << 3)

        /// The capabilities of a new custom zone in the private database.
        static let customZone: Capabilities = [.fetchChanges, .atomic, .sharing, .zoneWideSharing]

        /// The names of the set capabilities.
        public var description: String {
            var names: [String] = []
            if contains(.fetchChanges) { names.append("fetchChanges") }
            if contains(.atomic) { names.append("atomic") }
            if contains(.sharing) { names.append("sharing") }
            if contains(.zoneWideSharing) { names.append("zoneWideSharing") }
            return "[" + names.joined(separator: ", ") + "]"
        }
    }
}
