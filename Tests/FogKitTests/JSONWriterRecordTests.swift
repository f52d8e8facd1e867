import FogKit
import FogKitTesting
import Foundation
import Testing

/// `JSONWriter.write(_: Record, …)`, which a server uses for every record it returns, writes
/// the bytes of the record dictionary path: `RecordDictionary(record)` with `deleted`, the
/// desired keys and extra members, written by `write(_: RecordDictionary, …)`.
@Suite struct JSONWriterRecordTests {
    /// The dictionary path, as FogServer wrote records before.
    static func viaDictionary(
        _ record: Record, zoneID: WebServices.ZoneID?, deleted: Bool?, desiredKeys: Set<String>?, extra: [(key: String, value: String?)]
    ) throws -> [UInt8] {
        var dictionary = try WebServices.RecordDictionary(record, zoneID: zoneID)
        dictionary.deleted = deleted
        if let desiredKeys { dictionary.fields = dictionary.fields.filter { desiredKeys.contains($0.key) } }
        var writer = WebServices.JSONWriter()
        try writer.write(dictionary, extra: extra)
        return writer.bytes
    }

    static func direct(
        _ record: Record, zoneID: WebServices.ZoneID?, deleted: Bool?, desiredKeys: Set<String>?, extra: [(key: String, value: String?)]
    ) throws -> [UInt8] {
        var writer = WebServices.JSONWriter()
        try writer.write(record, zoneID: zoneID, deleted: deleted, desiredKeys: desiredKeys, extra: extra)
        return writer.bytes
    }

    /// Extra members that sort before, between and after the dictionary's own, and unset ones.
    static let extraCandidates: [(key: String, value: String?)] = [
        ("aaa", "first"), ("database", "private"), ("shortGUID", "0abc\"d"), ("user", nil), ("zzz", "last"), ("recordNamf", "x"),
    ]

    /// Random selections of `keys` (or none), extras and `deleted`, for one record: both paths
    /// write the same bytes.
    static func expectSameBytes<G: RandomNumberGenerator>(
        _ record: Record, keys: [String], using generator: inout G, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let desired: Set<String>? =
            Bool.random(using: &generator) ? nil : Set(keys.filter { _ in Bool.random(using: &generator) } + ["absent"])
        let extra = extraCandidates.filter { _ in Int.random(in: 0..<3, using: &generator) == 0 }.shuffled(using: &generator)
        let deleted: Bool? = [nil, false, true].randomElement(using: &generator)!
        let zoneID: WebServices.ZoneID? =
            Bool.random(using: &generator)
            ? nil : WebServices.ZoneID(zoneName: "Z", ownerRecordName: "_owner", zoneType: .regularCustomZone)
        let a = try viaDictionary(record, zoneID: zoneID, deleted: deleted, desiredKeys: desired, extra: extra)
        let b = try direct(record, zoneID: zoneID, deleted: deleted, desiredKeys: desired, extra: extra)
        #expect(
            String(decoding: a, as: UTF8.self) == String(decoding: b, as: UTF8.self),
            "desired \(String(describing: desired)), extra \(extra)",
            sourceLocation: sourceLocation)
    }

    /// A record with a random selection of every value type, some of them encrypted (not the
    /// assets and references, which cannot be), and
    /// sometimes a parent.
    static func randomRecord<G: RandomNumberGenerator>(_ n: Int, assets: URL, using generator: inout G) throws -> (Record, [String]) {
        let source = try InterchangeTests.everyType(assets: assets)
        let record = Record(recordType: "Random", recordID: Record.ID(recordName: "r\(n)", zoneID: InterchangeTests.zone))
        var keys: [String] = []
        for key in source.allKeys() where Int.random(in: 0..<3, using: &generator) == 0 {
            let value = source.fieldValue(forKey: key)
            // Assets and references cannot be encrypted.
            let encryptable = !(key.contains("asset") || key.contains("Asset") || key.contains("eference"))
            if encryptable, Int.random(in: 0..<4, using: &generator) == 0 {
                record.encryptedValues.setFieldValue(value, forKey: key + "Secret")
                keys.append(key + "Secret")
            } else {
                record.setFieldValue(value, forKey: key)
                keys.append(key)
            }
        }
        if Bool.random(using: &generator) { record.setParent(Record.ID(recordName: "parent", zoneID: InterchangeTests.zone)) }
        return (record, keys)
    }

    @Test func recordsMadeByTheClientWriteAsTheirDictionaries() throws {
        let directory = try TemporaryDirectory("json-writer")
        var generator = SplitMix64(seed: 20_261_128)
        for n in 0..<300 {
            let (record, keys) = try Self.randomRecord(n, assets: directory.url, using: &generator)
            try Self.expectSameBytes(record, keys: keys, using: &generator)
        }
    }

    @Test func storedRecordsWriteAsTheirDictionaries() async throws {
        let directory = try TemporaryDirectory("json-writer-stored")
        let container = try Container(
            identifier: "iCloud.test.jsonwriter", directory: directory.appending("store"), user: "alice",
            configuration: .init(durability: .none))
        defer { container.close() }
        let database = container.privateCloudDatabase
        try await database.save(RecordZone(zoneID: InterchangeTests.zone))
        try await database.save(
            Record(recordType: "Random", recordID: Record.ID(recordName: "parent", zoneID: InterchangeTests.zone)))
        try await database.save(
            Record(recordType: "Random", recordID: Record.ID(recordName: "target", zoneID: InterchangeTests.zone)))
        var generator = SplitMix64(seed: 42)
        var saved: [(Record.ID, [String])] = []
        for n in 0..<40 {
            let (record, keys) = try Self.randomRecord(n, assets: directory.url, using: &generator)
            try await database.save(record)
            saved.append((record.recordID, keys))
        }
        // Fetched records keep their fields encoded and carry system fields.
        for (id, keys) in saved {
            let fetched = try await database.record(for: id)
            #expect(fetched.recordChangeTag != nil && fetched.creationDate != nil)
            try Self.expectSameBytes(fetched, keys: keys, using: &generator)
        }
    }

    @Test func aDoubleThatIsNotFiniteIsRefusedNamingTheField() throws {
        let record = Record(recordType: "Bad")
        record.setFieldValue(.double(.infinity), forKey: "ratio")
        var writer = WebServices.JSONWriter()
        #expect {
            try writer.write(record)
        } throws: { error in
            (error as? WebServices.FormatError)?.field == "fields.ratio.value"
        }
    }
}
