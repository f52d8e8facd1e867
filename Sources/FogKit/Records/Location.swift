import Foundation

/// A geographic location stored in a record field, the counterpart of `CLLocation`.
///
/// CoreLocation does not exist on Linux, so FogKit carries its own value with
/// the properties CloudKit stores: coordinates, altitude, accuracies, course,
/// speed and timestamp. Negative accuracies mean "invalid", as in CoreLocation.
public struct Location: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Latitude in degrees, -90...90.
    public var latitude: Double
    /// Longitude in degrees, -180...180.
    public var longitude: Double
    /// Altitude in metres above sea level.
    public var altitude: Double
    /// Radius of uncertainty of the coordinates, in metres; negative when invalid.
    public var horizontalAccuracy: Double
    /// Accuracy of the altitude, in metres; negative when invalid.
    public var verticalAccuracy: Double
    /// Direction of travel in degrees from true north; negative when invalid.
    public var course: Double
    /// Speed in metres per second; negative when invalid.
    public var speed: Double
    /// When the location was determined.
    public var timestamp: Date

    /// Creates a location from coordinates, as `CLLocation(latitude:longitude:)` does.
    public init(latitude: Double, longitude: Double) {
        self.init(
            latitude: latitude, longitude: longitude, altitude: 0, horizontalAccuracy: 0,
            verticalAccuracy: -1, course: -1, speed: -1, timestamp: Date())
    }

    /// Creates a location with every property.
    public init(
        latitude: Double, longitude: Double, altitude: Double, horizontalAccuracy: Double,
        verticalAccuracy: Double, course: Double = -1, speed: Double = -1, timestamp: Date
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.course = course
        self.speed = speed
        self.timestamp = timestamp
    }

    /// The great-circle distance to `other` in metres (haversine, mean Earth radius),
    /// ignoring altitude, like `CLLocation.distance(from:)`.
    public func distance(from other: Location) -> Double {
        let r = 6_371_008.8
        let phi1 = latitude * .pi / 180, phi2 = other.latitude * .pi / 180
        let dPhi = phi2 - phi1
        let dLambda = (other.longitude - longitude) * .pi / 180
        let a = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * r * atan2(a.squareRoot(), (1 - a).squareRoot())
    }

    /// Whether the coordinates are within range and finite.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }

    /// `<latitude,longitude>` with altitude and accuracy.
    public var description: String {
        "<\(latitude),\(longitude)> +/- \(horizontalAccuracy)m alt \(altitude)m"
    }
}
