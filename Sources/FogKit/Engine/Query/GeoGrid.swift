import Foundation

/// The grid of the location index: cells of a tenth of a degree (about 11 km of latitude),
/// no finer than CloudKit's documented 10 km resolution.
///
/// A distance search reads, for each row of cells its circle's bounding box crosses, the
/// run of cells across the box, then checks the exact distance of each record found.
enum GeoGrid {
    static let cellsPerDegree = 10.0
    static let earthRadiusKilometres = 6_371.0088

    /// The cell of a location: (latitude row 0…1800, longitude column 0…3600).
    static func cell(_ location: Location) -> (latitude: Int64, longitude: Int64) {
        (row(location.latitude), column(location.longitude))
    }

    /// The row of a latitude. Records and predicates never hold a coordinate that is not
    /// finite (``Validation/locationProblem(_:)``); should one come from a damaged store, it
    /// takes row 0 rather than trap.
    static func row(_ latitude: Double) -> Int64 { cellIndex((latitude + 90) * cellsPerDegree) }

    /// The column of a longitude; 180° is the same meridian as -180°, column 0.
    static func column(_ longitude: Double) -> Int64 {
        let c = rawColumn(longitude)
        return c >= columns ? c - columns : c
    }

    private static func rawColumn(_ longitude: Double) -> Int64 { cellIndex((longitude + 180) * cellsPerDegree) }

    /// `Int64(x.rounded(.down))`, with 0 for a value that is not finite or is out of range.
    private static func cellIndex(_ x: Double) -> Int64 {
        guard x.isFinite, abs(x) < 1e15 else { return 0 }
        return Int64(x.rounded(.down))
    }

    static let columns: Int64 = 3600
    static let lastRow = row(90)
    static let lastColumn = columns - 1

    /// Runs of cells, one latitude row each, that hold every location within `radius`
    /// kilometres of `center` (and some more).
    static func runs(around center: Location, radius: Double) -> [(row: Int64, columns: ClosedRange<Int64>)] {
        guard radius.isFinite, radius >= 0 else {
            return radius > 0 ? (0...lastRow).map { ($0, 0...lastColumn) } : []
        }
        let angular = radius / earthRadiusKilometres  // radians
        let latitude = center.latitude * .pi / 180
        var low = latitude - angular
        var high = latitude + angular
        var columns: [ClosedRange<Int64>]
        if low > -.pi / 2, high < .pi / 2, angular < .pi / 2 {
            let ratio = sin(angular) / cos(latitude)
            if ratio >= 1 {
                columns = [0...lastColumn]
            } else {
                let spread = asin(ratio) * 180 / .pi
                columns = wrapped(from: center.longitude - spread, to: center.longitude + spread)
            }
        } else {
            // The circle reaches a pole: every longitude.
            low = max(low, -.pi / 2)
            high = min(high, .pi / 2)
            columns = [0...lastColumn]
        }
        // One cell of margin for rounding at the edges.
        let firstRow = max(0, row(low * 180 / .pi) - 1)
        let endRow = min(lastRow, row(high * 180 / .pi) + 1)
        guard firstRow <= endRow else { return [] }
        var result: [(Int64, ClosedRange<Int64>)] = []
        for r in firstRow...endRow {
            for c in columns { result.append((r, c)) }
        }
        return result
    }

    /// The columns between two longitudes (with a cell of margin each side), which may
    /// cross the antimeridian: the run is taken modulo the 3,600 columns.
    private static func wrapped(from west: Double, to east: Double) -> [ClosedRange<Int64>] {
        if east - west >= 359 { return [0...lastColumn] }
        let lo = rawColumn(west) - 1, hi = rawColumn(east) + 1
        if lo < 0 { return [(lo + columns)...lastColumn, 0...min(hi, lastColumn)] }
        if hi > lastColumn { return [lo...lastColumn, 0...(hi - columns)] }
        return [lo...hi]
    }

    /// The great-circle distance between two locations in kilometres.
    static func distance(_ a: Location, _ b: Location) -> Double { a.distance(from: b) / 1000 }
}
