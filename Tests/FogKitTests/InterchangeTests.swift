import FogKit
import FogKitTesting
import Foundation
import Testing

/// The CloudKit Web Services encoding (`WebServices`): every value type round-trips exactly,
/// and malformed dictionaries fail with an error naming the field.
@Suite struct InterchangeTests {
    /// A date that is a whole number of milliseconds (the precision TIMESTAMP keeps), in the
    /// form decoding produces.
    static func ms(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(milliseconds - 978_307_200_000) / 1000)
    }

    static let zone = RecordZone.ID(zoneName: "Interchange")

    static let location = Location(
        latitude: -33.8688, longitude: 151.2093, altitude: 58.5, horizontalAccuracy: 4.25, verticalAccuracy: -1, course: 359.9,
        speed: 0.5, timestamp: ms(1_767_300_000_123))

    /// A record with a field of every type, lists of every type (some empty), extremes and
    /// unicode; assets point at files in `directory`.
    static func everyType(assets directory: URL) throws -> Record {
        let record = Record(recordType: "Everything", recordID: Record.ID(recordName: "every-type", zoneID: zone))
        let small = directory.appendingPathComponent("small.bin")
        try Data((0...255).map { UInt8($0) }).write(to: small)
        let empty = directory.appendingPathComponent("empty.bin")
        try Data().write(to: empty)
        let target = Record.ID(recordName: "target", zoneID: zone)
        let values: [String: FieldValue] = [
            "string": .string("plain"),
            "unicode": .string("é 中文 😀👩‍👩‍👧 \u{0} \"quoted\" \\ /slash\n\t\u{1F}"),
            "emptyString": .string(""),
            "intMax": .int64(.max),
            "intMin": .int64(.min),
            "intZero": .int64(0),
            "doubleMax": .double(.greatestFiniteMagnitude),
            "doubleTiny": .double(.leastNonzeroMagnitude),
            "doubleNegative": .double(-1.0 / 3.0),
            "doubleWhole": .double(2),
            "bytes": .bytes(Data((0...255).map { UInt8($0) })),
            "emptyBytes": .bytes(Data()),
            "date": .date(ms(1_767_300_000_123)),
            "dateEarly": .date(ms(-62_135_596_800_000)),
            "dateLate": .date(ms(253_402_300_799_999)),
            "location": .location(location),
            "referenceNone": .reference(Record.Reference(recordID: target, action: .none)),
            "referenceDelete": .reference(Record.Reference(recordID: target, action: .deleteSelf)),
            "asset": .asset(Asset(fileURL: small)),
            "stringList": .stringList(["a", "é", "", "😀"]),
            "int64List": .int64List([.min, -1, 0, 1, .max]),
            "doubleList": .doubleList([-0.5, 0, 1e300, .leastNonzeroMagnitude, -.greatestFiniteMagnitude]),
            "bytesList": .bytesList([Data(), Data([0, 255])]),
            "dateList": .dateList([ms(0), ms(1), ms(-1)]),
            "locationList": .locationList([location, location]),
            "referenceList": .referenceList([
                Record.Reference(recordID: target, action: .none), Record.Reference(recordID: target, action: .deleteSelf),
            ]),
            "assetList": .assetList([Asset(fileURL: small), Asset(fileURL: empty)]),
            "emptyStringList": .stringList([]),
            "emptyInt64List": .int64List([]),
            "emptyDoubleList": .doubleList([]),
            "emptyBytesList": .bytesList([]),
            "emptyDateList": .dateList([]),
            "emptyLocationList": .locationList([]),
            "emptyReferenceList": .referenceList([]),
            "emptyAssetList": .assetList([]),
        ]
        for (key, value) in values { record.setFieldValue(value, forKey: key) }
        record.setParent(target)
        return record
    }

    /// Expects the two records to hold the same fields; assets compare by their bytes. With
    /// `movedTo`, `b`'s references must point into that zone instead of `a`'s.
    static func expectSameFields(
        _ a: Record, _ b: Record, movedTo: RecordZone.ID? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(a.recordType == b.recordType, sourceLocation: sourceLocation)
        #expect(a.recordID.recordName == b.recordID.recordName, sourceLocation: sourceLocation)
        #expect(a.allKeys() == b.allKeys(), sourceLocation: sourceLocation)
        #expect(a.parent?.recordID.recordName == b.parent?.recordID.recordName, sourceLocation: sourceLocation)
        func bytes(_ asset: Asset) throws -> Data { try Data(contentsOf: #require(asset.fileURL)) }
        for key in a.allKeys() {
            switch (a.fieldValue(forKey: key), b.fieldValue(forKey: key)) {
            case (.asset(let x)?, .asset(let y)?):
                #expect(try bytes(x) == bytes(y), "\(key)", sourceLocation: sourceLocation)
            case (.assetList(let x)?, .assetList(let y)?):
                #expect(try x.map(bytes) == y.map(bytes), "\(key)", sourceLocation: sourceLocation)
            case (.reference(let x)?, .reference(let y)?) where movedTo != nil:
                #expect(x.recordID.recordName == y.recordID.recordName && x.action == y.action, "\(key)", sourceLocation: sourceLocation)
                #expect(y.recordID.zoneID == movedTo, "\(key)", sourceLocation: sourceLocation)
            case (.referenceList(let x)?, .referenceList(let y)?) where movedTo != nil:
                #expect(x.map(\.recordID.recordName) == y.map(\.recordID.recordName), "\(key)", sourceLocation: sourceLocation)
                #expect(x.map(\.action) == y.map(\.action), "\(key)", sourceLocation: sourceLocation)
                #expect(y.allSatisfy { $0.recordID.zoneID == movedTo }, "\(key)", sourceLocation: sourceLocation)
            case (let x, let y):
                #expect(x == y, "\(key): \(Self.dumped(x)) vs \(Self.dumped(y))", sourceLocation: sourceLocation)
                if case .double(let d)? = x, case .double(let e)? = y { #expect(d.bitPattern == e.bitPattern, "\(key)") }
            }
        }
    }

    static func dumped(_ value: FieldValue?) -> String {
        var text = ""
        dump(value, to: &text)
        return text
    }

    @Test func everyValueTypeRoundTripsThroughJSON() throws {
        let directory = try TemporaryDirectory("interchange")
        let record = try Self.everyType(assets: directory.url)
        let json = try WebServices.encode(try WebServices.RecordDictionary(record))
        let dictionary = try WebServices.decodeRecord(from: json)
        let back = try Record(dictionary)
        try Self.expectSameFields(record, back)
        #expect(back.recordID.zoneID == Self.zone)
        #expect(Set(back.changedKeys()) == Set(record.allKeys()), "a decoded record saves every field")
        // Encoding the decoded record again gives the same bytes, and JSONEncoder gives them too.
        #expect(try WebServices.encode(try WebServices.RecordDictionary(back)) == json)
        let viaEncoder = try WebServices.makeEncoder().encode(try WebServices.RecordDictionary(record))
        #expect(String(decoding: viaEncoder, as: UTF8.self) == String(decoding: json, as: UTF8.self))
    }

    @Test func typeNamesAreCloudKits() throws {
        let directory = try TemporaryDirectory("interchange-names")
        let dictionary = try WebServices.RecordDictionary(try Self.everyType(assets: directory.url))
        let types = Dictionary(uniqueKeysWithValues: dictionary.fields.map { ($0.key, $0.value.type?.rawValue ?? "") })
        #expect(types["string"] == "STRING")
        #expect(types["intMax"] == "INT64")
        #expect(types["doubleMax"] == "DOUBLE")
        #expect(types["date"] == "TIMESTAMP")
        #expect(types["bytes"] == "BYTES")
        #expect(types["location"] == "LOCATION")
        #expect(types["referenceNone"] == "REFERENCE")
        #expect(types["asset"] == "ASSETID")
        #expect(types["stringList"] == "STRING_LIST")
        #expect(types["int64List"] == "INT64_LIST")
        #expect(types["doubleList"] == "DOUBLE_LIST")
        #expect(types["dateList"] == "TIMESTAMP_LIST")
        #expect(types["bytesList"] == "BYTES_LIST")
        #expect(types["locationList"] == "LOCATION_LIST")
        #expect(types["referenceList"] == "REFERENCE_LIST")
        #expect(types["assetList"] == "ASSETID_LIST")
        #expect(types["emptyStringList"] == "STRING_LIST", "an empty list keeps its element type")
        let json = String(decoding: try WebServices.encode(dictionary), as: UTF8.self)
        #expect(json.contains(#""date":{"type":"TIMESTAMP","value":1767300000123}"#))
        #expect(json.contains(#""referenceDelete":{"type":"REFERENCE","value":{"action":"DELETE_SELF","recordName":"target","#))
        #expect(json.contains(#""zoneID":{"zoneName":"Interchange","zoneType":"REGULAR_CUSTOM_ZONE"}"#))
        #expect(json.contains(#""parent":{"recordName":"target"}"#))
        #expect(json.contains(#""bytes":{"type":"BYTES","value":"AAECAwQF"#))
    }

    @Test func storedRecordsRoundTripWithSystemFieldsAndAssetBytes() async throws {
        let store = try TestStore()
        let db = store.privateDatabase
        _ = try await db.save(RecordZone(zoneID: Self.zone))
        let directory = try TemporaryDirectory("interchange-stored")
        _ = try await db.save(Record(recordType: "Target", recordID: Record.ID(recordName: "target", zoneID: Self.zone)))
        let saved = try await db.save(try Self.everyType(assets: directory.url))
        let dictionary = try WebServices.RecordDictionary(saved)
        #expect(dictionary.recordChangeTag == saved.recordChangeTag)
        #expect(dictionary.created?.userRecordName == saved.creatorUserRecordID?.recordName)
        #expect(dictionary.created?.deviceID != nil)
        #expect(dictionary.modified?.timestamp != nil)
        let decoded = try Record(try WebServices.decodeRecord(from: try WebServices.encode(dictionary)))
        #expect(decoded.recordChangeTag == saved.recordChangeTag)
        #expect(decoded.creatorUserRecordID == saved.creatorUserRecordID)
        #expect(abs(decoded.modificationDate!.timeIntervalSince(saved.modificationDate!)) < 0.001)
        try Self.expectSameFields(saved, decoded)
        // Saved again elsewhere (the import path), it reads back the same, asset bytes included.
        let other = RecordZone.ID(zoneName: "Copy")
        _ = try await db.save(RecordZone(zoneID: other))
        let moved = try Record(try WebServices.decodeRecord(from: try WebServices.encode(dictionary)), zoneID: other)
        #expect(moved.recordID.zoneID == other)
        if case .reference(let r)? = moved.fieldValue(forKey: "referenceNone") { #expect(r.recordID.zoneID == other) }
        _ = try await db.save(Record(recordType: "Target", recordID: Record.ID(recordName: "target", zoneID: other)))
        _ = try await db.modifyRecords(saving: [moved], deleting: [], savePolicy: .allKeys)
        let fetched = try await db.record(for: moved.recordID)
        try Self.expectSameFields(saved, fetched, movedTo: other)
        #expect(fetched.recordChangeTag != nil)
    }

    @Test func anyDateRoundsToTheNearestMillisecond() throws {
        let date = Date(timeIntervalSince1970: 1_767_300_000.123_456)
        let json = try WebServices.encode(try WebServices.FieldValueDictionary(.date(date)))
        #expect(String(decoding: json, as: UTF8.self) == #"{"type":"TIMESTAMP","value":1767300000123}"#)
        let back = try WebServices.decode(WebServices.FieldValueDictionary.self, from: json)
        guard case .date(let d)? = try back.fieldValue(defaultZone: .default, field: "f") else {
            Issue.record("not a date")
            return
        }
        #expect(abs(d.timeIntervalSince(date)) < 0.0005)
    }

    @Test func nonFiniteDoublesCannotBeWritten() throws {
        for value: FieldValue in [.double(.nan), .double(.infinity), .doubleList([1, -.infinity])] {
            #expect(throws: WebServices.FormatError.self) { try WebServices.FieldValueDictionary(value, field: "fields.x.value") }
        }
    }

    @Test func readsWhatOtherClientsSend() throws {
        // Types left out, numbers as strings, ASSET for ASSETID, ownerName for ownerRecordName, {} clears.
        let json = #"""
            {"recordName":"r","recordType":"T","pluginFields":{},"zoneID":{"zoneName":"Z","ownerName":"_abc"},
             "fields":{"s":{"value":"x"},"i":{"value":7},"d":{"value":1.5},"l":{"value":["a","b"]},
                       "n":{"value":"9223372036854775807","type":"INT64"},"c":{},
                       "loc":{"value":{"latitude":1,"longitude":2}},"ref":{"value":{"recordName":"o"}},
                       "a":{"type":"ASSET","value":{"downloadURL":"file:///tmp/x","size":3}}}}
            """#
        let dictionary = try WebServices.decodeRecord(from: Data(json.utf8))
        #expect(dictionary.zoneID?.ownerRecordName == "_abc")
        #expect(dictionary.fields["s"]?.type == .string)
        #expect(dictionary.fields["i"]?.type == .int64)
        #expect(dictionary.fields["d"]?.type == .double)
        #expect(dictionary.fields["l"]?.type == .stringList)
        #expect(dictionary.fields["loc"]?.type == .location)
        #expect(dictionary.fields["ref"]?.type == .reference)
        #expect(dictionary.fields["a"]?.type == .assetID)
        #expect(dictionary.fields["c"] == .clear)
        let record = try Record(dictionary)
        #expect(record.fieldValue(forKey: "n") == .int64(.max))
        #expect(record.fieldValue(forKey: "c") == nil)
        #expect(
            record.fieldValue(forKey: "ref")
                == .reference(Record.Reference(recordID: Record.ID(recordName: "o", zoneID: record.recordID.zoneID), action: .none)))
        #expect(record.recordID.zoneID == RecordZone.ID(zoneName: "Z", ownerName: "_abc"))
    }

    /// Malformed JSON, and the field and reason its error names.
    static let malformed: [(json: String, field: String, reason: String)] = [
        (#"{"recordType":"T"}"#, "recordName", "is missing"),
        (#"{"recordName":"","recordType":"T"}"#, "recordName", "is empty"),
        (#"{"recordName":7}"#, "recordName", "is not a string"),
        (#"{"recordName":"a","#, "", "malformed JSON"),
        (#"[1,2]"#, "", ""),
        (#"{"recordName":"a","fields":{"f":{"type":"STRINGY","value":"x"}}}"#, "fields.f.type", "unknown type \"STRINGY\""),
        (#"{"recordName":"a","fields":{"f":{"type":"STRING","value":3}}}"#, "fields.f.value", "is not a string (type STRING)"),
        (#"{"recordName":"a","fields":{"f":{"type":"STRING"}}}"#, "fields.f.value", "is missing"),
        (#"{"recordName":"a","fields":{"f":{"type":"INT64","value":1.5}}}"#, "fields.f.value", "is not a 64-bit integer"),
        (#"{"recordName":"a","fields":{"f":{"type":"INT64","value":1e30}}}"#, "fields.f.value", "is not a 64-bit integer"),
        (#"{"recordName":"a","fields":{"f":{"type":"INT64","value":"12x"}}}"#, "fields.f.value", "is not a 64-bit integer"),
        (#"{"recordName":"a","fields":{"f":{"type":"DOUBLE","value":"NaN"}}}"#, "fields.f.value", "is not a finite number"),
        (#"{"recordName":"a","fields":{"f":{"type":"DOUBLE","value":"-Infinity"}}}"#, "fields.f.value", "is not a finite number"),
        (#"{"recordName":"a","fields":{"f":{"type":"DOUBLE","value":1e999}}}"#, "fields.f.value", "DOUBLE"),
        (#"{"recordName":"a","fields":{"f":{"type":"DOUBLE","value":true}}}"#, "fields.f.value", "is not a number"),
        (#"{"recordName":"a","fields":{"f":{"type":"TIMESTAMP","value":"today"}}}"#, "fields.f.value", "milliseconds"),
        (#"{"recordName":"a","fields":{"f":{"type":"TIMESTAMP","value":1.5}}}"#, "fields.f.value", "milliseconds"),
        (#"{"recordName":"a","fields":{"f":{"type":"BYTES","value":"not base64!"}}}"#, "fields.f.value", "is not base64"),
        (#"{"recordName":"a","fields":{"f":{"type":"STRING_LIST","value":"a"}}}"#, "fields.f.value", ""),
        (#"{"recordName":"a","fields":{"f":{"type":"STRING_LIST","value":["a",2]}}}"#, "fields.f.value[1]", "is not a string"),
        (#"{"recordName":"a","fields":{"f":{"type":"DOUBLE_LIST","value":[1,"Infinity"]}}}"#, "fields.f.value[1]", "finite"),
        (#"{"recordName":"a","fields":{"f":{"type":"LOCATION","value":{"latitude":1}}}}"#, "fields.f.value.longitude", "is missing"),
        (
            #"{"recordName":"a","fields":{"f":{"type":"LOCATION","value":{"latitude":91,"longitude":0}}}}"#, "fields.f.value.latitude",
            "out of"
        ),
        (#"{"recordName":"a","fields":{"f":{"type":"LOCATION","value":7}}}"#, "fields.f.value", "is not an object"),
        (#"{"recordName":"a","fields":{"f":{"type":"REFERENCE","value":{"action":"NONE"}}}}"#, "fields.f.value.recordName", "is missing"),
        (
            #"{"recordName":"a","fields":{"f":{"type":"REFERENCE","value":{"recordName":"b","action":"CASCADE"}}}}"#,
            "fields.f.value.action",
            "unknown reference action"
        ),
        (#"{"recordName":"a","fields":{"f":{"type":"UNKNOWN_LIST","value":[1]}}}"#, "fields.f.value", "must be empty"),
        (#"{"recordName":"a","fields":{"f":{"value":{"what":1}}}}"#, "fields.f.value", "unknown type"),
        (#"{"recordName":"a","zoneID":{"zoneName":"Z","zoneType":"WEIRD"}}"#, "zoneID.zoneType", "unknown zone type"),
        (#"{"recordName":"a","zoneID":{"zoneName":""}}"#, "zoneID.zoneName", "is empty"),
        (#"{"recordName":"a","created":{"timestamp":"soon"}}"#, "created.timestamp", ""),
    ]

    @Test(arguments: malformed.indices) func malformedDictionaryNamesTheField(_ index: Int) {
        let (json, field, reason) = Self.malformed[index]
        do {
            let decoded = try WebServices.decodeRecord(from: Data(json.utf8))
            Issue.record("decoded \(json) as \(decoded)")
        } catch {
            #expect(error.field == field, "\(json): \(error)")
            #expect(reason.isEmpty || error.reason.contains(reason), "\(json): \(error)")
        }
    }

    /// Dictionaries that decode but that FogKit cannot make into a record.
    static let unstorable: [(json: String, field: String, reason: String)] = [
        (#"{"recordName":"a"}"#, "recordType", "is missing"),
        (#"{"recordName":"a","recordType":"T","deleted":true}"#, "deleted", "deleted"),
        (
            #"{"recordName":"a","recordType":"T","fields":{"f":{"type":"REFERENCE","value":{"recordName":"b","action":"VALIDATE"}}}}"#,
            "fields.f.value", "VALIDATE"
        ),
        (#"{"recordName":"a","recordType":"T","fields":{"f":{"type":"UNKNOWN_LIST","value":[]}}}"#, "fields.f.value", "UNKNOWN_LIST"),
        (#"{"recordName":"a","recordType":"T","fields":{"f":{"type":"ASSETID","value":{"size":3}}}}"#, "fields.f.value", "downloadURL"),
        (
            #"{"recordName":"a","recordType":"T","fields":{"f":{"type":"ASSETID_LIST","value":[{"downloadURL":"assets/x"}]}}}"#,
            "fields.f.value[0]", "relative"
        ),
        (
            #"{"recordName":"a","recordType":"T","fields":{"f":{"type":"ASSETID","value":{"downloadURL":"https://x/y"}}}}"#,
            "fields.f.value", "not a file URL"
        ),
    ]

    @Test(arguments: unstorable.indices) func unstorableDictionaryNamesTheField(_ index: Int) throws {
        let (json, field, reason) = Self.unstorable[index]
        let dictionary = try WebServices.decodeRecord(from: Data(json.utf8))
        do {
            _ = try Record(dictionary)
            Issue.record("made a record of \(json)")
        } catch {
            #expect(error.field == field, "\(json): \(error)")
            #expect(error.reason.contains(reason), "\(json): \(error)")
        }
    }

    @Test func relativeAssetURLsStayInsideTheirFolder() throws {
        let json = #"{"recordName":"a","recordType":"T","fields":{"f":{"type":"ASSETID","value":{"downloadURL":"../etc/passwd"}}}}"#
        let dictionary = try WebServices.decodeRecord(from: Data(json.utf8))
        #expect(throws: WebServices.FormatError.self) { try Record(dictionary, assetBase: URL(fileURLWithPath: "/tmp/export")) }
        let ok = #"{"recordName":"a","recordType":"T","fields":{"f":{"type":"ASSETID","value":{"downloadURL":"assets/x"}}}}"#
        let record = try Record(try WebServices.decodeRecord(from: Data(ok.utf8)), assetBase: URL(fileURLWithPath: "/tmp/export"))
        guard case .asset(let asset)? = record.fieldValue(forKey: "f") else {
            Issue.record("no asset")
            return
        }
        #expect(asset.fileURL?.path == "/tmp/export/assets/x")
    }
}
