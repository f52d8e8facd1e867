import Foundation

extension WebServices {
    /// A `LOCATION` value: `{latitude, longitude, horizontalAccuracy, verticalAccuracy,
    /// altitude, speed, course, timestamp}`; speeds in m/s, course in degrees, the timestamp
    /// in milliseconds. Only `latitude` and `longitude` are required; every number must be
    /// finite.
    public struct LocationDictionary: Codable, Sendable, Hashable {
        /// Degrees, -90…90.
        public var latitude: Double
        /// Degrees, -180…180.
        public var longitude: Double
        /// Metres; negative when invalid.
        public var horizontalAccuracy: Double?
        /// Metres; negative when invalid.
        public var verticalAccuracy: Double?
        /// Metres above sea level.
        public var altitude: Double?
        /// Metres per second; negative when invalid.
        public var speed: Double?
        /// Degrees from true north; negative when invalid.
        public var course: Double?
        /// Milliseconds since 1970.
        public var timestamp: Int64?

        /// The dictionary of a location, with every key.
        public init(_ location: Location) {
            latitude = location.latitude
            longitude = location.longitude
            horizontalAccuracy = location.horizontalAccuracy
            verticalAccuracy = location.verticalAccuracy
            altitude = location.altitude
            speed = location.speed
            course = location.course
            timestamp = Milliseconds.from(location.timestamp)
        }

        /// The location; missing keys take `CLLocation`'s defaults for "unknown" (accuracies
        /// and altitude 0, vertical accuracy, course and speed -1) and a missing timestamp is
        /// 1970-01-01.
        public var location: Location {
            Location(
                latitude: latitude, longitude: longitude, altitude: altitude ?? 0, horizontalAccuracy: horizontalAccuracy ?? 0,
                verticalAccuracy: verticalAccuracy ?? -1, course: course ?? -1, speed: speed ?? -1,
                timestamp: Milliseconds.date(timestamp ?? 0))
        }

        enum CodingKeys: String, CodingKey {
            case latitude, longitude, horizontalAccuracy, verticalAccuracy, altitude, speed, course, timestamp
        }

        /// Decodes a location, refusing numbers that are not finite and coordinates out of range.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            func finite(_ key: CodingKeys) throws -> Double? {
                guard let v = try c.decodeIfPresent(Double.self, forKey: key) else { return nil }
                guard v.isFinite else { throw FormatError(c.codingPath + [key], "is not a finite number") }
                return v
            }
            latitude = try finite(.latitude) ?? { throw FormatError(c.codingPath + [CodingKeys.latitude], "is missing") }()
            longitude = try finite(.longitude) ?? { throw FormatError(c.codingPath + [CodingKeys.longitude], "is missing") }()
            guard (-90...90).contains(latitude) else { throw FormatError(c.codingPath + [CodingKeys.latitude], "is out of -90…90") }
            guard (-180...180).contains(longitude) else {
                throw FormatError(c.codingPath + [CodingKeys.longitude], "is out of -180…180")
            }
            horizontalAccuracy = try finite(.horizontalAccuracy)
            verticalAccuracy = try finite(.verticalAccuracy)
            altitude = try finite(.altitude)
            speed = try finite(.speed)
            course = try finite(.course)
            timestamp = try c.decodeIfPresent(Milliseconds.self, forKey: .timestamp)?.value
        }
    }

    /// A `REFERENCE` value: `{recordName, zoneID, action}`. A missing `zoneID` means the
    /// zone of the record that holds the reference; a missing `action` means `NONE`.
    public struct ReferenceDictionary: Codable, Sendable, Hashable {
        /// The referenced record's name.
        public var recordName: String
        /// The referenced record's zone, when given.
        public var zoneID: ZoneID?
        /// What deleting the referenced record does to the referencing one.
        public var action: Action?

        /// Reference actions as Web Services spells them.
        public enum Action: String, Codable, Sendable, Hashable {
            /// `NONE`: nothing happens (``Record/ReferenceAction/none``).
            case none = "NONE"
            /// `DELETE_SELF`: the referencing record is deleted too (``Record/ReferenceAction/deleteSelf``).
            case deleteSelf = "DELETE_SELF"
            /// `VALIDATE`: CloudKit refuses to delete the target; FogKit cannot store it.
            case validate = "VALIDATE"
        }

        /// Creates a reference dictionary.
        public init(recordName: String, zoneID: ZoneID? = nil, action: Action? = Action.none) {
            self.recordName = recordName
            self.zoneID = zoneID
            self.action = action
        }

        /// The dictionary of a FogKit reference, with its zone and action.
        public init(_ reference: Record.Reference) {
            self.init(
                recordName: reference.recordID.recordName, zoneID: ZoneID(reference.recordID.zoneID),
                action: reference.action == .deleteSelf ? .deleteSelf : Action.none)
        }

        /// The FogKit reference; the zone defaults to `zone` when the dictionary has none.
        /// - Throws: ``FormatError`` for `VALIDATE`, which FogKit does not support.
        public func reference(defaultZone zone: RecordZone.ID, field: String) throws(FormatError) -> Record.Reference {
            let action: Record.ReferenceAction
            switch self.action ?? Action.none {
            case .none: action = .none
            case .deleteSelf: action = .deleteSelf
            case .validate: throw FormatError(field: field, reason: "reference action VALIDATE is not supported by FogKit")
            }
            return Record.Reference(recordID: Record.ID(recordName: recordName, zoneID: zoneID?.recordZoneID ?? zone), action: action)
        }

        enum CodingKeys: String, CodingKey { case recordName, zoneID, action }

        /// Decodes a reference, refusing an empty record name or an unknown action.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            recordName = try c.decode(String.self, forKey: .recordName)
            guard !recordName.isEmpty else { throw FormatError(c.codingPath + [CodingKeys.recordName], "is empty") }
            zoneID = try c.decodeIfPresent(ZoneID.self, forKey: .zoneID)
            if let name = try c.decodeIfPresent(String.self, forKey: .action) {
                guard let known = Action(rawValue: name) else {
                    throw FormatError(c.codingPath + [CodingKeys.action], "unknown reference action \"\(name)\"")
                }
                action = known
            }
        }
    }

    /// An `ASSETID` value: `{fileChecksum, size, referenceChecksum, wrappingKey, receipt,
    /// downloadURL}`.
    ///
    /// FogKit reads an asset's bytes from ``downloadURL``: a `file:` URL, or a path relative
    /// to the folder the caller names (`fog import` resolves `assets/…` against the export's
    /// folder). The other keys are kept as they are and not checked.
    public struct AssetDictionary: Codable, Sendable, Hashable {
        /// A checksum of the file, as the upload step returned it (opaque).
        public var fileChecksum: String?
        /// The number of bytes.
        public var size: Int64?
        /// Encryption material (opaque).
        public var referenceChecksum: String?
        /// Encryption material (opaque).
        public var wrappingKey: String?
        /// Proof of upload (opaque).
        public var receipt: String?
        /// Where the bytes are.
        public var downloadURL: String?

        /// Creates an asset dictionary.
        public init(
            downloadURL: String?, size: Int64?, fileChecksum: String? = nil, receipt: String? = nil, referenceChecksum: String? = nil,
            wrappingKey: String? = nil
        ) {
            self.downloadURL = downloadURL
            self.size = size
            self.fileChecksum = fileChecksum
            self.receipt = receipt
            self.referenceChecksum = referenceChecksum
            self.wrappingKey = wrappingKey
        }

        /// The asset whose bytes ``downloadURL`` names: a `file:` URL as it is, a relative
        /// path against `base`.
        /// - Throws: ``FormatError`` when there is no URL, it is relative and there is no
        ///   base, or it is not a file URL.
        public func asset(relativeTo base: URL?, field: String) throws(FormatError) -> Asset {
            guard let downloadURL, !downloadURL.isEmpty else {
                throw FormatError(field: field, reason: "the asset has no downloadURL, so its bytes cannot be found")
            }
            if let url = URL(string: downloadURL), let scheme = url.scheme {
                guard scheme == "file" else {
                    throw FormatError(field: field, reason: "downloadURL \(downloadURL) is not a file URL or a relative path")
                }
                return Asset(fileURL: url)
            }
            guard let base else {
                throw FormatError(field: field, reason: "downloadURL \(downloadURL) is relative and there is no folder to resolve it in")
            }
            guard !downloadURL.hasPrefix("/"), !downloadURL.split(separator: "/").contains("..") else {
                throw FormatError(field: field, reason: "downloadURL \(downloadURL) leaves the export's folder")
            }
            return Asset(fileURL: base.appendingPathComponent(downloadURL))
        }
    }
}

/// Milliseconds since 1970, read from an integer (or an integral number) and converted to
/// and from `Date` exactly for whole milliseconds.
struct Milliseconds: Decodable {
    let value: Int64

    /// Milliseconds between 1970 and 2001 (the reference date).
    static let referenceOffset: Int64 = 978_307_200_000

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let v = try? c.decode(Int64.self) {
            value = v
            return
        }
        let d = try c.decode(Double.self)
        guard d.isFinite, d.rounded() == d, abs(d) < 9.2e18 else {
            throw WebServices.FormatError(c.codingPath, "is not an integer number of milliseconds")
        }
        value = Int64(d)
    }

    /// The date rounded to the nearest millisecond (dates beyond ±292 million years clamp).
    static func from(_ date: Date) -> Int64 {
        let ms = (date.timeIntervalSinceReferenceDate * 1000).rounded()
        guard ms.isFinite else { return ms > 0 ? .max : .min }
        let bound = 9.0e18
        return Int64(max(-bound, min(bound, ms))) &+ referenceOffset
    }

    /// The date of `ms`: the double nearest to the whole milliseconds, so a date saved with
    /// whole milliseconds comes back bit for bit.
    static func date(_ ms: Int64) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(ms &- referenceOffset) / 1000)
    }
}
