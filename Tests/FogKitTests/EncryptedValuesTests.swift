import FogKit
import FogKitTesting
import Foundation
import Testing

/// `Record.encryptedValues`: the key space, AES-GCM at rest under the container's key,
/// the refusals (assets, references, public database, predicates, sorts), desired keys,
/// change feeds, the key file and a wrong key, and the schema's `ENCRYPTED` types.
@Suite struct EncryptedValuesTests {
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    private static let date = Date(timeIntervalSinceReferenceDate: 700_000_000.5)
    private static let place = Location(latitude: 48.85, longitude: 2.35)

    /// A record with one encrypted value of every allowed type and a plain field.
    private static func secretRecord(_ name: String, in zone: RecordZone.ID = .default) -> Record {
        let record = Record(recordType: "Patient", recordID: Record.ID(recordName: name, zoneID: zone))
        record["nickname"] = "plain-visible-marker"
        let e = record.encryptedValues
        e["diagnosis"] = "secret-diagnosis-marker"
        e["count"] = 42
        e["weight"] = 71.25
        e["seen"] = date
        e["blob"] = Data("secret-bytes-marker".utf8)
        e["home"] = place
        e["tags"] = ["alpha-secret", "beta-secret"]
        e["scores"] = [1, 2, 3]
        e["ratios"] = [0.5, 1.5]
        e["dates"] = [date]
        e["blobs"] = [Data([1, 2]), Data([3])]
        e["places"] = [place]
        return record
    }

    /// Expects the values of ``secretRecord(_:in:)``; `exactLocations` false compares locations
    /// by coordinates (JSON keeps their timestamps to the millisecond).
    private static func expectSecrets(_ record: Record, exactLocations: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) {
        let e = record.encryptedValues
        #expect(e["diagnosis"] as String? == "secret-diagnosis-marker", sourceLocation: sourceLocation)
        #expect(e["count"] as Int? == 42, sourceLocation: sourceLocation)
        #expect(e["weight"] as Double? == 71.25, sourceLocation: sourceLocation)
        #expect(e["seen"] as Date? == date, sourceLocation: sourceLocation)
        #expect(e["blob"] as Data? == Data("secret-bytes-marker".utf8), sourceLocation: sourceLocation)
        if exactLocations {
            #expect(e.fieldValue(forKey: "home") == .location(place), sourceLocation: sourceLocation)
            #expect(e.fieldValue(forKey: "places") == .locationList([place]), sourceLocation: sourceLocation)
        } else {
            #expect((e["home"] as Location?)?.latitude == place.latitude, sourceLocation: sourceLocation)
            if case .locationList(let list)? = e.fieldValue(forKey: "places") {
                #expect(list.map(\.longitude) == [place.longitude], sourceLocation: sourceLocation)
            } else {
                Issue.record("places is not a list of locations", sourceLocation: sourceLocation)
            }
        }
        #expect(e["tags"] as [String]? == ["alpha-secret", "beta-secret"], sourceLocation: sourceLocation)
        #expect(e.fieldValue(forKey: "scores") == .int64List([1, 2, 3]), sourceLocation: sourceLocation)
        #expect(e.fieldValue(forKey: "ratios") == .doubleList([0.5, 1.5]), sourceLocation: sourceLocation)
        #expect(e.fieldValue(forKey: "dates") == .dateList([date]), sourceLocation: sourceLocation)
        #expect(e.fieldValue(forKey: "blobs") == .bytesList([Data([1, 2]), Data([3])]), sourceLocation: sourceLocation)
    }

    private static let secretKeys = [
        "blob", "blobs", "count", "dates", "diagnosis", "home", "places", "ratios", "scores", "seen", "tags", "weight",
    ]

    @Test func everyAllowedTypeRoundTripsInItsOwnKeySpace() async throws {
        let record = Self.secretRecord("p1")
        #expect(record.allKeys() == ["nickname"])
        #expect(record.changedKeys() == ["nickname"])
        #expect(record.encryptedValues.allKeys() == Self.secretKeys)
        #expect(Set(record.encryptedValues.changedKeys()) == Set(Self.secretKeys))
        #expect(record["diagnosis"] == nil)

        let saved = try await db.save(record)
        Self.expectSecrets(saved)
        #expect(saved.encryptedValues.changedKeys().isEmpty)
        let fetched = try await db.record(for: record.recordID)
        Self.expectSecrets(fetched)
        #expect(fetched.allKeys() == ["nickname"])
        #expect(fetched.encryptedValues.allKeys() == Self.secretKeys)
        #expect(fetched["nickname"] as? String == "plain-visible-marker")

        // An update of one encrypted key keeps the others.
        fetched.encryptedValues["diagnosis"] = "updated-secret"
        #expect(fetched.encryptedValues.changedKeys() == ["diagnosis"])
        #expect(fetched.changedKeys().isEmpty)
        try await db.save(fetched)
        let again = try await db.record(for: record.recordID)
        #expect(again.encryptedValues["diagnosis"] as String? == "updated-secret")
        #expect(again.encryptedValues["count"] as Int? == 42)
        // Removing an encrypted value.
        again.encryptedValues["count"] = nil
        try await db.save(again)
        #expect(try await db.record(for: record.recordID).encryptedValues["count"] as Int? == nil)
        let report = try store.admin.checkIntegrity()
        #expect(report.isSound, "\(report.problems)")
    }

    @Test func theDataFileHoldsNoPlaintextOfEncryptedValues() async throws {
        try await db.save(Self.secretRecord("p1"))
        store.container.close()
        store.admin.close()
        let bytes = try Data(contentsOf: store.directory.appendingPathComponent("data.mdb"))
        #expect(bytes.range(of: Data("plain-visible-marker".utf8)) != nil, "the plain field is stored as it is")
        for secret in ["secret-diagnosis-marker", "secret-bytes-marker", "alpha-secret"] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is on disk in plain")
        }
        let keyFile = store.directory.appendingPathComponent("encryption.key")
        let attributes = try FileManager.default.attributesOfItem(atPath: keyFile.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect((attributes[.size] as? NSNumber)?.intValue == 32)
    }

    @Test func assetsAndReferencesCannotBeEncrypted() async throws {
        let target = try await db.save(Record(recordType: "Patient", recordID: Record.ID(recordName: "t")))
        let file = store.directory.appendingPathComponent("asset.bin")
        try Data("x".utf8).write(to: file)
        let cases: [(String, any RecordValueProtocol)] = [
            ("ref", Record.Reference(record: target, action: .none)),
            ("refs", [Record.Reference(record: target, action: .none)]),
            ("file", Asset(fileURL: file)),
            ("files", [Asset(fileURL: file)]),
        ]
        for (i, (key, value)) in cases.enumerated() {
            let record = Record(recordType: "Patient", recordID: Record.ID(recordName: "bad\(i)"))
            record.encryptedValues[key] = value
            let error = await expectFogError(.invalidArguments) { try await db.save(record) }
            #expect(error?.message.contains("'\(key)'") == true, "\(error?.message ?? "")")
            await expectFogError(.unknownItem) { try await db.record(for: record.recordID) }
        }
    }

    @Test func aKeyIsPlainOrEncryptedNeverBoth() async throws {
        let both = Record(recordType: "Patient", recordID: Record.ID(recordName: "both"))
        both["x"] = "plain"
        both.encryptedValues["x"] = "secret"
        await expectFogError(.invalidArguments) { try await db.save(both) }

        let plain = Record(recordType: "Patient", recordID: Record.ID(recordName: "p"))
        plain["label"] = "plain"
        try await db.save(plain)
        let encrypted = Record(recordType: "Patient", recordID: Record.ID(recordName: "e"))
        encrypted.encryptedValues["label"] = "secret"
        let error = await expectFogError(.invalidArguments) { try await db.save(encrypted) }
        #expect(error?.message.contains("label") == true)

        let first = Record(recordType: "Patient", recordID: Record.ID(recordName: "e2"))
        first.encryptedValues["code"] = "secret"
        try await db.save(first)
        let second = Record(recordType: "Patient", recordID: Record.ID(recordName: "p2"))
        second["code"] = "plain"
        await expectFogError(.invalidArguments) { try await db.save(second) }
    }

    @Test func encryptedFieldsCannotBeQueriedOrSorted() async throws {
        try await db.save(Self.secretRecord("p1"))
        let byValue = Query(recordType: "Patient", predicate: try QueryPredicate(format: "diagnosis == %@", argumentArray: ["x"]))
        let error = await expectFogError(.invalidArguments) { try await db.records(matching: byValue, inZoneWith: nil) }
        #expect(error?.message.contains("diagnosis") == true)
        let sorted = Query(recordType: "Patient", predicate: QueryPredicate(value: true))
        sorted.sortDescriptors = [Query.SortDescriptor(key: "count")]
        await expectFogError(.invalidArguments) { try await db.records(matching: sorted, inZoneWith: nil) }
        // Queries on plain fields return the encrypted values decrypted, and desired keys
        // select them by key.
        let plain = Query(
            recordType: "Patient", predicate: try QueryPredicate(format: "nickname == %@", argumentArray: ["plain-visible-marker"]))
        let all = try await db.records(matching: plain, inZoneWith: nil).matchResults
        #expect(all.count == 1)
        Self.expectSecrets(try all[0].1.get())
        let some = try await db.records(matching: plain, inZoneWith: nil, desiredKeys: ["diagnosis"]).matchResults
        let selected = try some[0].1.get()
        #expect(selected.encryptedValues.allKeys() == ["diagnosis"])
        #expect(selected.allKeys().isEmpty)
        #expect(selected.encryptedValues["diagnosis"] as String? == "secret-diagnosis-marker")
    }

    @Test func thePublicDatabaseRefusesEncryptedValues() async throws {
        let record = Record(recordType: "Patient", recordID: Record.ID(recordName: "pub"))
        record.encryptedValues["diagnosis"] = "secret"
        let error = await expectFogError(.invalidArguments) { try await store.publicDatabase.save(record) }
        #expect(error?.message.contains("public database") == true)
        await expectFogError(.unknownItem) { try await store.publicDatabase.record(for: record.recordID) }
    }

    @Test func desiredKeysOfAFetchSelectEncryptedFields() async throws {
        let record = Self.secretRecord("p1")
        try await db.save(record)
        let results = try await db.records(for: [record.recordID], desiredKeys: ["diagnosis", "nickname"])
        let fetched = try #require(try results[record.recordID]?.get())
        #expect(fetched.allKeys() == ["nickname"])
        #expect(fetched.encryptedValues.allKeys() == ["diagnosis"])
        #expect(fetched.encryptedValues["diagnosis"] as String? == "secret-diagnosis-marker")
        let none = try #require(try await db.records(for: [record.recordID], desiredKeys: [])[record.recordID]?.get())
        #expect(none.encryptedValues.allKeys().isEmpty)
    }

    @Test func changeFeedsReturnDecryptedValues() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        try await db.save(Self.secretRecord("p1", in: zone))
        let page = try await db.recordZoneChanges(inZoneWith: zone, since: nil)
        let changed = try #require(try page.modificationResultsByID[Record.ID(recordName: "p1", zoneID: zone)]?.get().record)
        Self.expectSecrets(changed)
        let some = try await db.recordZoneChanges(inZoneWith: zone, since: nil, desiredKeys: ["count"])
        let selected = try #require(try some.modificationResultsByID[Record.ID(recordName: "p1", zoneID: zone)]?.get().record)
        #expect(selected.encryptedValues.allKeys() == ["count"])
        #expect(selected.encryptedValues["count"] as Int? == 42)
    }

    @Test func aConflictReturnsTheServerRecordDecrypted() async throws {
        let saved = try await db.save(Self.secretRecord("p1"))
        let stale = saved.copy()
        saved.encryptedValues["diagnosis"] = "newer"
        try await db.save(saved)
        stale.encryptedValues["diagnosis"] = "older"
        let error = await expectFogError(.serverRecordChanged) { try await db.save(stale) }
        #expect(error?.serverRecord?.encryptedValues["diagnosis"] as String? == "newer")
    }

    @Test func reopeningWithTheKeyFileReadsAndAWrongKeyFailsClearly() async throws {
        let directory = try TemporaryDirectory("encrypted-reopen")
        do {
            let container = try directory.open()
            try await container.privateCloudDatabase.save(Self.secretRecord("p1"))
            container.close()
        }
        do {
            let container = try directory.open()
            defer { container.close() }
            Self.expectSecrets(try await container.privateCloudDatabase.record(for: Record.ID(recordName: "p1")))
        }
        do {
            var configuration = Container.Configuration(durability: .none)
            configuration.encryptionKey = Data(repeating: 7, count: 32)
            let container = try Container(identifier: "iCloud.test", directory: directory.url, user: "alice", configuration: configuration)
            defer { container.close() }
            let error = await expectFogError(.badContainer) {
                try await container.privateCloudDatabase.record(for: Record.ID(recordName: "p1"))
            }
            #expect(error?.message.contains("field '") == true, "\(error?.message ?? "")")
        }
        // The key file gone, nothing can be decrypted: a clear error, and the data is intact.
        let keyFile = directory.url.appendingPathComponent("encryption.key")
        let key = try Data(contentsOf: keyFile)
        try FileManager.default.removeItem(at: keyFile)
        do {
            let container = try directory.open()
            defer { container.close() }
            let error = await expectFogError(.badContainer) {
                try await container.privateCloudDatabase.record(for: Record.ID(recordName: "p1"))
            }
            #expect(error?.message.contains("encryption key") == true)
        }
        // The same key supplied through the configuration reads the values.
        var configuration = Container.Configuration(durability: .none)
        configuration.encryptionKey = key
        let container = try Container(identifier: "iCloud.test", directory: directory.url, user: "alice", configuration: configuration)
        defer { container.close() }
        Self.expectSecrets(try await container.privateCloudDatabase.record(for: Record.ID(recordName: "p1")))
        #expect(!FileManager.default.fileExists(atPath: keyFile.path))
    }

    @Test func aKeyOfTheWrongSizeIsRefused() throws {
        var configuration = Container.Configuration(durability: .none)
        configuration.encryptionKey = Data(repeating: 1, count: 16)
        let directory = try TemporaryDirectory("encrypted-key-size")
        #expect(throws: FogError.self) {
            try Container(identifier: "iCloud.test", directory: directory.url, user: "alice", configuration: configuration)
        }
    }

    @Test func theSchemaDeclaresEncryptedFieldsAndProductionEnforcesThem() async throws {
        try await db.save(Self.secretRecord("p1"))
        let exported = try store.admin.schema(for: .development)
        let text = exported.description
        // The printer aligns types in a column: compare with single spaces.
        let flat = text.split(whereSeparator: { $0 == " " }).joined(separator: " ")
        #expect(flat.contains("diagnosis ENCRYPTED STRING,"), "\(text)")
        #expect(flat.contains("tags LIST<ENCRYPTED STRING>,"), "\(text)")
        #expect(!text.contains("___encrypted"), "\(text)")
        #expect(flat.contains("nickname STRING QUERYABLE"), "\(text)")
        // The text round-trips, and deploys to production.
        #expect(try Schema(parsing: text).description == text)
        try await store.admin.deploySchema()
        let production = try store.productionContainer()
        defer { production.close() }
        let pdb = production.privateCloudDatabase
        try await pdb.save(Self.secretRecord("p1"))
        Self.expectSecrets(try await pdb.record(for: Record.ID(recordName: "p1")))
        // An encrypted field takes only encrypted values, a plain field only plain ones.
        let plainIntoEncrypted = Record(recordType: "Patient", recordID: Record.ID(recordName: "x1"))
        plainIntoEncrypted["diagnosis"] = "plain"
        await expectFogError(.invalidArguments) { try await pdb.save(plainIntoEncrypted) }
        let encryptedIntoPlain = Record(recordType: "Patient", recordID: Record.ID(recordName: "x2"))
        encryptedIntoPlain.encryptedValues["nickname"] = "secret"
        await expectFogError(.invalidArguments) { try await pdb.save(encryptedIntoPlain) }
        let wrongType = Record(recordType: "Patient", recordID: Record.ID(recordName: "x3"))
        wrongType.encryptedValues["diagnosis"] = 5
        await expectFogError(.invalidArguments) { try await pdb.save(wrongType) }
    }

    @Test func anImportedEncryptedDeclarationIsEnforcedInProduction() async throws {
        let admin = store.admin
        try await admin.importSchema(
            try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Chart (secret ENCRYPTED STRING, title STRING QUERYABLE);"))
        try await admin.deploySchema()
        let printed = try admin.schema(for: .production).description
        #expect(printed.split(whereSeparator: { $0 == " " }).joined(separator: " ").contains("secret ENCRYPTED STRING,"), "\(printed)")
        let production = try store.productionContainer()
        defer { production.close() }
        let pdb = production.privateCloudDatabase
        let good = Record(recordType: "Chart", recordID: Record.ID(recordName: "c1"))
        good.encryptedValues["secret"] = "s"
        good["title"] = "t"
        try await pdb.save(good)
        #expect(try await pdb.record(for: good.recordID).encryptedValues["secret"] as String? == "s")
        let bad = Record(recordType: "Chart", recordID: Record.ID(recordName: "c2"))
        bad["secret"] = "plain"
        await expectFogError(.invalidArguments) { try await pdb.save(bad) }
    }

    @Test func webServicesDictionariesCarryEncryptedFieldsFlagged() throws {
        let record = Self.secretRecord("p1")
        let dictionary = try WebServices.RecordDictionary(record)
        #expect(dictionary.fields["diagnosis"]?.isEncrypted == true)
        #expect(dictionary.fields["nickname"]?.isEncrypted == nil)
        let json = try JSONEncoder().encode(dictionary)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains("\"isEncrypted\":true"))
        // The fast writer `fog export` uses writes the flag too, and what it writes decodes.
        var writer = WebServices.JSONWriter()
        try writer.write(dictionary)
        let written = String(decoding: writer.bytes, as: UTF8.self)
        #expect(written.contains(#""diagnosis":{"isEncrypted":true,"type":"STRING","value":"secret-diagnosis-marker"}"#), "\(written)")
        let rewritten = try JSONDecoder().decode(WebServices.RecordDictionary.self, from: Data(writer.bytes))
        #expect(rewritten.fields["diagnosis"]?.isEncrypted == true)
        let decoded = try JSONDecoder().decode(WebServices.RecordDictionary.self, from: json)
        let back = try Record(decoded)
        #expect(back.allKeys() == ["nickname"])
        #expect(back.encryptedValues["diagnosis"] as String? == "secret-diagnosis-marker")
        #expect(back.encryptedValues.allKeys() == Self.secretKeys)
    }

    @Test func fogExportWritesEncryptedFieldsFlaggedAndImportEncryptsThemAgain() async throws {
        let work = try TemporaryDirectory("encrypted-cli")
        let source = work.appending("source"), export = work.appending("export"), target = work.appending("target")
        let identifier = "iCloud.test.encrypted"
        do {
            let container = try Container(identifier: identifier, directory: source, user: "alice", configuration: .init(durability: .none))
            defer { container.close() }
            try await container.privateCloudDatabase.save(Self.secretRecord("p1"))
        }
        let exported = try FogTool.run(["export", "--store", source.path, "--output", export.path], executable: CrashTests.fogTool)
        #expect(exported.status == 0, "\(exported.err)")
        let lines = try String(contentsOf: export.appendingPathComponent("records.jsonl"), encoding: .utf8)
        #expect(lines.contains(#""isEncrypted":true"#), "\(lines)")
        #expect(lines.contains("secret-diagnosis-marker"), "the export holds the values in plain")
        let imported = try FogTool.run(
            ["import", export.path, "--store", target.path, "--container", identifier], executable: CrashTests.fogTool)
        #expect(imported.status == 0, "\(imported.err)")
        do {
            let container = try Container(identifier: identifier, directory: target, user: "alice", configuration: .init(durability: .none))
            defer { container.close() }
            let copy = try await container.privateCloudDatabase.record(for: Record.ID(recordName: "p1"))
            Self.expectSecrets(copy, exactLocations: false)
            #expect(copy.allKeys() == ["nickname"])
        }
        let bytes = try Data(contentsOf: target.appendingPathComponent("data.mdb"))
        #expect(bytes.range(of: Data("secret-diagnosis-marker".utf8)) == nil)
        #expect(FileManager.default.fileExists(atPath: target.appendingPathComponent("encryption.key").path))
    }
}
