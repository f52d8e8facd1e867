import FogKit
import FogKitTesting
import Foundation
import Testing

/// Record zones (reference §2.4, §4.2–4.5): capabilities, where custom zones may
/// exist, name rules, deletion and per-item results.
@Suite struct ZoneTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    static let customCapabilities: RecordZone.Capabilities = [.fetchChanges, .atomic, .sharing, .zoneWideSharing]

    @Test func defaultZoneIDUsesCloudKitNames() {
        #expect(RecordZone.ID.default.zoneName == "_defaultZone")
        #expect(RecordZone.ID.defaultZoneName == "_defaultZone")
        #expect(RecordZone.ID.default.ownerName == "__defaultOwner__")
        #expect(RecordZone.ID(zoneName: "Z").ownerName == CurrentUserDefaultName)
        #expect(RecordZone.default().zoneID == .default)
    }

    @Test func capabilitiesHaveCloudKitRawValues() {
        #expect(RecordZone.Capabilities.fetchChanges.rawValue == 1)
        #expect(RecordZone.Capabilities.atomic.rawValue == 2)
        #expect(RecordZone.Capabilities.sharing.rawValue == 4)
        #expect(RecordZone.Capabilities.zoneWideSharing.rawValue == 8)
    }

    @Test func aLocallyCreatedZoneHasNoCapabilitiesUntilSaved() {
        #expect(RecordZone(zoneName: "Z").capabilities == [])
    }

    @Test func savingACustomZoneInThePrivateDatabaseGivesItFullCapabilities() async throws {
        let saved = try await db.save(RecordZone(zoneName: "Notes"))
        #expect(saved.zoneID == RecordZone.ID(zoneName: "Notes"))
        #expect(saved.capabilities == Self.customCapabilities)
        let fetched = try await db.recordZone(for: RecordZone.ID(zoneName: "Notes"))
        #expect(fetched.capabilities == Self.customCapabilities)
    }

    @Test func theDefaultZoneHasNoCapabilities() async throws {
        for db in [store.privateDatabase, store.publicDatabase] {
            let zone = try await db.recordZone(for: .default)
            #expect(zone.zoneID == .default)
            #expect(zone.capabilities == [])
        }
    }

    @Test func savingAnExistingZoneAgainIsIdempotent() async throws {
        let zoneID = RecordZone.ID(zoneName: "Notes")
        try await db.save(RecordZone(zoneID: zoneID))
        let note = Record(recordType: "Note", zoneID: zoneID)
        note["title"] = "kept"
        try await db.save(note)

        let again = try await db.save(RecordZone(zoneID: zoneID))
        #expect(again.capabilities == Self.customCapabilities)
        #expect(try await db.allRecordZones().count == 2)
        // The records of the zone survive.
        #expect(try await db.record(for: note.recordID)["title"] as? String == "kept")
        // So does saving through modifyRecordZones.
        let result = try await db.modifyRecordZones(saving: [RecordZone(zoneID: zoneID)], deleting: [])
        #expect(result.saveResults[zoneID]?.succeeded == true)
        #expect(try await db.record(for: note.recordID)["title"] as? String == "kept")
    }

    @Test func fetchingAMissingZoneFailsWithZoneNotFound() async throws {
        await expectFogError(.zoneNotFound) { try await db.recordZone(for: .init(zoneName: "Missing")) }

        try await db.save(RecordZone(zoneName: "Present"))
        let results = try await db.recordZones(for: [.init(zoneName: "Present"), .init(zoneName: "Missing"), .default])
        #expect(results.count == 3)
        #expect(results[.init(zoneName: "Present")]?.succeeded == true)
        #expect(results[.init(zoneName: "Missing")]?.fogCode == .zoneNotFound)
        #expect(results[.default]?.succeeded == true)
    }

    @Test func allRecordZonesListsTheDefaultZoneFirstThenCustomZones() async throws {
        #expect(try await db.allRecordZones().map(\.zoneID) == [.default])
        for name in ["b", "aa", "Zeta", "c"] { try await db.save(RecordZone(zoneName: name)) }
        let zones = try await db.allRecordZones()
        #expect(zones.first?.zoneID == .default)
        #expect(zones.first?.capabilities == [])
        let custom = zones.dropFirst().map(\.zoneID.zoneName)
        #expect(Set(custom) == ["b", "aa", "Zeta", "c"])
        #expect(custom.count == 4)
        #expect(custom == custom.sorted(), "custom zones should come back by name")
        #expect(zones.dropFirst().allSatisfy { $0.capabilities == Self.customCapabilities })
    }

    @Test(arguments: [Database.Scope.public, .shared])
    func customZonesCannotBeSavedOrDeletedOutsideThePrivateDatabase(scope: Database.Scope) async throws {
        let db = store.container.database(with: scope)
        await expectFogError(.badDatabase) { try await db.save(RecordZone(zoneName: "Notes")) }
        await expectFogError(.badDatabase) {
            try await db.modifyRecordZones(saving: [RecordZone(zoneName: "Notes")], deleting: [])
        }
        await expectFogError(.badDatabase) { try await db.deleteRecordZone(withID: .init(zoneName: "Notes")) }
        let zones = try await db.allRecordZones()
        #expect(!zones.contains { $0.zoneID.zoneName == "Notes" })
        if scope == .public { #expect(zones.map(\.zoneID) == [.default]) }
        // Nor did it land in the private database.
        #expect(try await store.privateDatabase.allRecordZones().count == 1)
    }

    static let badZoneNames: [String] = [
        "",
        "_private",
        String(repeating: "z", count: 256),
        "Zöne",
        "zone😀",
    ]

    @Test(arguments: badZoneNames)
    func badZoneNamesAreRejectedAndNothingIsStored(name: String) async throws {
        await expectFogError(.invalidArguments) { try await db.save(RecordZone(zoneName: name)) }
        // Per item in modifyRecordZones; the good zone of the same request is saved.
        let result = try await db.modifyRecordZones(saving: [RecordZone(zoneName: name), RecordZone(zoneName: "Good")], deleting: [])
        #expect(result.saveResults[RecordZone.ID(zoneName: name)]?.fogCode == .invalidArguments)
        #expect(result.saveResults[RecordZone.ID(zoneName: "Good")]?.succeeded == true)
        let zones = try await db.allRecordZones().map(\.zoneID.zoneName)
        #expect(zones == [RecordZone.ID.defaultZoneName, "Good"])
    }

    @Test func aZoneNameOf255ASCIICharactersIsAccepted() async throws {
        let name = String(repeating: "z", count: 255)
        try await db.save(RecordZone(zoneName: name))
        let record = Record(recordType: "Note", zoneID: .init(zoneName: name))
        try await db.save(record)
        #expect(try await db.record(for: record.recordID).recordID == record.recordID)
    }

    @Test func deletingAZoneDeletesItsRecords() async throws {
        let zoneID = RecordZone.ID(zoneName: "Doomed")
        try await db.save(RecordZone(zoneID: zoneID))
        let parent = Record(recordType: "Folder", recordID: .init(recordName: "folder", zoneID: zoneID))
        let child = Record(recordType: "Note", recordID: .init(recordName: "note", zoneID: zoneID))
        child["title"] = "old"
        child["folder"] = Record.Reference(record: parent, action: .deleteSelf)
        child.setParent(parent)
        _ = try await db.modifyRecords(saving: [parent, child], deleting: [])
        // A record in the default zone with the same name is untouched by the zone's deletion.
        let outside = Record(recordType: "Note", recordID: .init(recordName: "note"))
        try await db.save(outside)

        #expect(try await db.deleteRecordZone(withID: zoneID) == zoneID)
        await expectFogError(.zoneNotFound) { try await db.recordZone(for: zoneID) }
        await expectFogError(.zoneNotFound) { try await db.record(for: child.recordID) }
        let results = try await db.records(for: [parent.recordID, child.recordID])
        #expect(results[parent.recordID]?.fogCode == .zoneNotFound)
        #expect(results[child.recordID]?.fogCode == .zoneNotFound)
        #expect(try await db.allRecordZones().map(\.zoneID) == [.default])
        #expect(try await db.record(for: outside.recordID).recordType == "Note")

        // Re-creating the zone gives an empty zone: the old records are gone and
        // saving a new record under an old name is a creation, not a conflict.
        try await db.save(RecordZone(zoneID: zoneID))
        await expectFogError(.unknownItem) { try await db.record(for: child.recordID) }
        await expectFogError(.unknownItem) { try await db.record(for: parent.recordID) }
        let reborn = Record(recordType: "Note", recordID: child.recordID)
        reborn["title"] = "new"
        let saved = try await db.save(reborn)
        #expect(saved["title"] as? String == "new")
        #expect(saved.parent == nil)
    }

    @Test func deletingTheDefaultZoneIsInvalidArguments() async throws {
        let note = Record(recordType: "Note")
        try await db.save(note)
        await expectFogError(.invalidArguments) { try await db.deleteRecordZone(withID: .default) }
        #expect(try await db.record(for: note.recordID).recordType == "Note")
        let result = try await db.modifyRecordZones(saving: [], deleting: [.default])
        #expect(result.deleteResults[.default]?.fogCode == .invalidArguments)
        #expect(try await db.record(for: note.recordID).recordType == "Note")
    }

    @Test func deletingAMissingZoneIsZoneNotFound() async throws {
        await expectFogError(.zoneNotFound) { try await db.deleteRecordZone(withID: .init(zoneName: "Missing")) }
        // Deleting twice: the second time it is missing.
        try await db.save(RecordZone(zoneName: "Once"))
        try await db.deleteRecordZone(withID: .init(zoneName: "Once"))
        await expectFogError(.zoneNotFound) { try await db.deleteRecordZone(withID: .init(zoneName: "Once")) }
    }

    @Test func modifyRecordZonesReportsEachItem() async throws {
        try await db.save(RecordZone(zoneName: "Old"))
        let a = RecordZone.ID(zoneName: "A")
        let b = RecordZone.ID(zoneName: "B")
        let bad = RecordZone.ID(zoneName: "_bad")
        let missing = RecordZone.ID(zoneName: "Missing")
        let old = RecordZone.ID(zoneName: "Old")
        let result = try await db.modifyRecordZones(
            saving: [RecordZone(zoneID: a), RecordZone(zoneID: b), RecordZone(zoneID: bad)], deleting: [missing, old, .default])
        #expect(result.saveResults.count == 3)
        #expect(result.deleteResults.count == 3)
        #expect((try? result.saveResults[a]?.get())?.capabilities == Self.customCapabilities)
        #expect(result.saveResults[b]?.succeeded == true)
        #expect(result.saveResults[bad]?.fogCode == .invalidArguments)
        #expect(result.deleteResults[missing]?.fogCode == .zoneNotFound)
        #expect(result.deleteResults[old]?.succeeded == true)
        #expect(result.deleteResults[.default]?.fogCode == .invalidArguments)
        let names = try await db.allRecordZones().map(\.zoneID.zoneName)
        #expect(names == [RecordZone.ID.defaultZoneName, "A", "B"])
    }

    @Test func savingARecordIntoAMissingCustomZoneFailsWithZoneNotFound() async throws {
        let zoneID = RecordZone.ID(zoneName: "NotYet")
        let record = Record(recordType: "Note", recordID: .init(recordName: "n", zoneID: zoneID))
        record["title"] = "lost"
        await expectFogError(.zoneNotFound) { try await db.save(record) }
        // The zone was not created as a side effect.
        #expect(try await db.allRecordZones().map(\.zoneID) == [.default])
        await expectFogError(.zoneNotFound) { try await db.record(for: record.recordID) }

        // Per item, beside a record in an existing zone.
        let fine = Record(recordType: "Note")
        let result = try await db.modifyRecords(saving: [record, fine], deleting: [], atomically: false)
        #expect(result.saveResults[record.recordID]?.fogCode == .zoneNotFound)
        #expect(result.saveResults[fine.recordID]?.succeeded == true)

        // Once the zone exists the record was still never stored.
        try await db.save(RecordZone(zoneID: zoneID))
        await expectFogError(.unknownItem) { try await db.record(for: record.recordID) }
        let saved = try await db.save(record)
        #expect(saved["title"] as? String == "lost")
    }

    @Test func recordsInTheDefaultZoneOfThePublicDatabaseWork() async throws {
        let db = store.publicDatabase
        let r = Record(recordType: "Post")
        try await db.save(r)
        let inCustom = Record(recordType: "Post", zoneID: .init(zoneName: "Custom"))
        await expectFogError(.zoneNotFound) { try await db.save(inCustom) }
        #expect(try await db.record(for: r.recordID).recordType == "Post")
    }
}
