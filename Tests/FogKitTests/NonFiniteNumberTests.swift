import FogKit
import FogKitTesting
import Foundation
import Testing

/// NaN and infinite numbers, dates and coordinates are refused with `invalidArguments` on
/// every numeric path — record fields, predicate arguments, the typed builder and sort
/// descriptors — while every finite value, however extreme, saves, fetches, prints and
/// queries (`Docs/Reliability.md`, "Bad input").
@Suite struct NonFiniteNumberTests {
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    /// The edge values drawn from: every kind of non-finite double, and finite extremes.
    static let edges: [Double] = [
        .nan, -.nan, .signalingNaN, .infinity, -.infinity,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
        .leastNormalMagnitude, 0, -0.0, 1, -1, 0.5, 90, -90, 180, -180, 90.000_000_1, -180.000_1,
        9_007_199_254_740_992, Double(Int64.max), Double(Int64.min), 1e300, -1e300, 63_113_904_000,
    ]

    static func coordinateIsValid(latitude: Double, longitude: Double) -> Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
    }

    /// A field value holding `v` somewhere, and whether it is acceptable.
    static func value(holding v: Double, shape: Int, rng: inout SplitMix64) -> (FieldValue, valid: Bool) {
        let finite = v.isFinite
        let other = rng.pick(edges.filter(\.isFinite))
        switch shape {
        case 0: return (.double(v), finite)
        case 1: return (.doubleList([other, v, other].shuffled(using: &rng)), finite)
        case 2: return (.date(Date(timeIntervalSinceReferenceDate: v)), finite)
        case 3: return (.dateList([Date(timeIntervalSinceReferenceDate: other), Date(timeIntervalSinceReferenceDate: v)]), finite)
        case 4: return (.location(Location(latitude: v, longitude: 0)), coordinateIsValid(latitude: v, longitude: 0))
        case 5: return (.location(Location(latitude: 0, longitude: v)), coordinateIsValid(latitude: 0, longitude: v))
        case 6:
            let l = Location(
                latitude: 10, longitude: 20, altitude: v, horizontalAccuracy: other, verticalAccuracy: v, course: v, speed: v,
                timestamp: Date(timeIntervalSinceReferenceDate: v))
            return (.location(l), finite && other.isFinite)
        default:
            let l = Location(latitude: rng.chance(0.5) ? v : 1, longitude: rng.chance(0.5) ? v : 2)
            return (
                .locationList([Location(latitude: 1, longitude: 1), l]), coordinateIsValid(latitude: l.latitude, longitude: l.longitude)
            )
        }
    }

    @Test func recordsRefuseNonFiniteValuesNamingTheFieldAndKeepFiniteExtremes() async throws {
        try await store.admin.setIndexes(
            ["f0": [.queryable, .sortable], "f1": .queryable, "f2": [.queryable, .sortable], "f3": .queryable, "f4": .queryable],
            ofRecordType: "Edge")
        var rng = SplitMix64(seed: 0x4E61_4E21)
        for i in 0..<240 {
            let v = rng.pick(Self.edges)
            let shape = rng.int(0...7)
            let (value, valid) = Self.value(holding: v, shape: shape, rng: &rng)
            // Each shape has a field of its own (a field's type is fixed); the number and date
            // fields are indexed (queryable, sortable), so index keys see the value too.
            let key = "f\(shape)"
            let record = Record(recordType: "Edge", recordID: .init(recordName: "r\(i)"))
            record[key] = value
            let context = "case \(i): \(v) in shape \(shape)"
            if valid {
                let saved = try await db.save(record)
                let fetched = try await db.record(for: saved.recordID)
                #expect(fetched.fieldValue(forKey: key) == value, "\(context)")
                _ = "\(fetched) \(saved)"  // printing must not trap
            } else {
                let error = await expectFogError(.invalidArguments, "\(context)") { try await db.save(record) }
                #expect(error?.message.contains("'\(key)'") == true, "the message names the field: \(error?.message ?? "")")
                await expectNotStored(record.recordID, in: db)
            }
        }
        #expect(try store.admin.checkIntegrity().problems.isEmpty)
    }

    @Test func aNaNDateInAnAtomicRequestFailsOnlyThatItemWithInvalidArguments() async throws {
        let good = Record(recordType: "Edge", recordID: .init(recordName: "good"))
        good["when"] = Date(timeIntervalSinceReferenceDate: 0)
        let bad = Record(recordType: "Edge", recordID: .init(recordName: "bad"))
        bad["when"] = Date(timeIntervalSinceReferenceDate: .nan)
        let result = try await db.modifyRecords(saving: [good, bad], deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: false)
        #expect(result.saveResults[good.recordID]?.succeeded == true)
        #expect(result.saveResults[bad.recordID]?.fogCode == .invalidArguments)
    }

    @Test func formatArgumentsThatAreNotFiniteAreRefusedNamingTheArgument() throws {
        var rng = SplitMix64(seed: 0xF0_2A7)
        for _ in 0..<200 {
            let v = rng.pick(Self.edges)
            let date = Date(timeIntervalSinceReferenceDate: v)
            let formats: [(String, [Any], valid: Bool)] = [
                ("when == %@", [date], v.isFinite),
                ("when < %@", [date], v.isFinite),
                ("when BETWEEN %@", [[Date(timeIntervalSinceReferenceDate: 0), date]], v.isFinite),
                ("when IN %@", [[date]], v.isFinite),
                ("tags CONTAINS %@", [date], v.isFinite),
                ("n > %@", [v], v.isFinite),
                ("n > %f", [v], v.isFinite),
                ("n IN %@", [[1.0, v]], v.isFinite),
                ("n IN %@", [FieldValue.doubleList([v])], v.isFinite),
                ("when IN %@", [FieldValue.dateList([date])], v.isFinite),
                ("when == CAST(%@, \"NSDate\")", [v], v.isFinite),
                (
                    "distanceToLocation:fromLocation:(place, %@) < 5", [Location(latitude: v, longitude: 0)],
                    Self.coordinateIsValid(latitude: v, longitude: 0)
                ),
                ("distanceToLocation:fromLocation:(place, %@) < %@", [Location(latitude: 0, longitude: 0), v], v.isFinite && v >= 0),
            ]
            for (format, arguments, valid) in formats {
                do {
                    let predicate = try QueryPredicate(format: format, argumentArray: arguments)
                    #expect(valid, "\(format) with \(v) was accepted: \(predicate)")
                    // The canonical text parses back to an equal predicate.
                    #expect(try QueryPredicate(format: predicate.description) == predicate)
                } catch let error as FogError {
                    #expect(!valid, "\(format) with \(v): \(error)")
                    #expect(error.code == .invalidArguments)
                    if !valid && !format.contains("CAST") && v.isFinite == false {
                        #expect(error.message.contains("argument"), "names the argument: \(error.message)")
                    }
                }
            }
        }
    }

    @Test func theBuilderRefusesValuesThatAreNotFiniteAndNeverTraps() throws {
        var rng = SplitMix64(seed: 0xB01_1DE5)
        for _ in 0..<200 {
            let v = rng.pick(Self.edges)
            let date = Date(timeIntervalSinceReferenceDate: v)
            let field = try QueryPredicate.field("when")
            let attempts: [(String, () throws -> QueryPredicate, valid: Bool)] = [
                ("== date", { try field == date }, v.isFinite),
                ("!= date", { try field != date }, v.isFinite),
                ("< date", { try field < date }, v.isFinite),
                (">= date", { try field >= date }, v.isFinite),
                ("between dates", { try field.between(Date(timeIntervalSinceReferenceDate: 0), date) }, v.isFinite),
                ("in dates", { try field.in([date]) }, v.isFinite),
                ("contains date", { try field.contains(date) }, v.isFinite),
                ("containsAny dates", { try field.containsAny([date]) }, v.isFinite),
                ("creationDate <", { try QueryPredicate.creationDate < date }, v.isFinite),
                ("== double", { try field == v }, v.isFinite),
                ("> double", { try field > v }, v.isFinite),
                ("in doubles", { try field.in([1.0, v]) }, v.isFinite),
                ("== float", { try field == Float(v) }, Float(v).isFinite),
                (
                    "distance from", { try field.distance(from: Location(latitude: v, longitude: v)) < 1 },
                    Self.coordinateIsValid(latitude: v, longitude: v)
                ),
                ("distance radius", { try field.distance(from: Location(latitude: 0, longitude: 0)) <= v }, v.isFinite && v >= 0),
            ]
            for (name, make, valid) in attempts {
                do {
                    let predicate = try make()
                    #expect(valid, "\(name) with \(v) was accepted: \(predicate)")
                } catch let error as FogError {
                    #expect(!valid, "\(name) with \(v): \(error)")
                    #expect(error.code == .invalidArguments)
                }
            }
        }
    }

    @Test func queriesWithFiniteExtremesRunOnEveryIndexAndSortByDistanceRefusesBadCentres() async throws {
        try await store.admin.setIndexes(
            ["when": [.queryable, .sortable], "n": [.queryable, .sortable], "place": .queryable], ofRecordType: "Edge")
        let finite = Self.edges.filter(\.isFinite)
        for (i, v) in finite.enumerated() {
            let record = Record(recordType: "Edge", recordID: .init(recordName: "r\(i)"))
            record["when"] = Date(timeIntervalSinceReferenceDate: v)
            record["n"] = v
            if Self.coordinateIsValid(latitude: v, longitude: v) { record["place"] = Location(latitude: v, longitude: v) }
            try await db.save(record)
        }
        for v in finite {
            let byDate = Query(recordType: "Edge", predicate: try QueryPredicate.field("when") <= Date(timeIntervalSinceReferenceDate: v))
            byDate.sortDescriptors = [.init(key: "when", ascending: false)]
            let dates = try await db.records(matching: byDate).matchResults.map { try $0.1.get()["when"] as Date? }
            #expect(dates.count == finite.filter { $0 <= v }.count, "when <= \(v)")
            let byNumber = Query(recordType: "Edge", predicate: try QueryPredicate(format: "n == %@", v))
            #expect(try await db.records(matching: byNumber).matchResults.count == finite.filter { $0 == v }.count, "n == \(v)")
        }
        for v in Self.edges {
            let query = Query(recordType: "Edge", predicate: QueryPredicate(value: true))
            query.sortDescriptors = [LocationSortDescriptor(key: "place", relativeLocation: Location(latitude: v, longitude: 0))]
            if Self.coordinateIsValid(latitude: v, longitude: 0) {
                _ = try await db.records(matching: query)
            } else {
                let error = await expectFogError(.invalidArguments, "centre \(v)") { try await db.records(matching: query) }
                #expect(error?.message.contains("'place'") == true, "\(error?.message ?? "")")
            }
        }
    }
}
