import FogKit
import FogKitTesting
import Foundation
import Synchronization
import Testing

/// The sync engine's state, batches and options, without syncing: CloudKit's
/// de-duplication rules, batch limits, scopes and the serialization round trip.
@Suite struct SyncEngineStateTests {
    let store: TestStore
    let device: NotesDevice
    var state: SyncEngine.State { device.engine.state }

    init() throws {
        store = try TestStore()
        device = NotesDevice("A", database: store.container.privateCloudDatabase)
        try device.start()
    }

    private func id(_ name: String) -> Record.ID { Record.ID(recordName: name, zoneID: RecordZone.ID(zoneName: "Z")) }

    @Test func pendingRecordChangesKeepTheFirstPositionAndReplaceOpposites() {
        state.add(pendingRecordZoneChanges: [.saveRecord(id("a")), .saveRecord(id("b")), .saveRecord(id("a"))])
        #expect(state.pendingRecordZoneChanges == [.saveRecord(id("a")), .saveRecord(id("b"))])
        state.add(pendingRecordZoneChanges: [.deleteRecord(id("a"))])
        #expect(state.pendingRecordZoneChanges == [.deleteRecord(id("a")), .saveRecord(id("b"))])
        state.add(pendingRecordZoneChanges: [.saveRecord(id("a"))])
        #expect(state.pendingRecordZoneChanges == [.saveRecord(id("a")), .saveRecord(id("b"))])
        state.remove(pendingRecordZoneChanges: [.saveRecord(id("b"))])
        #expect(state.pendingRecordZoneChanges == [.saveRecord(id("a"))])
    }

    @Test func pendingZoneChangesFollowTheSameRules() {
        let zone = RecordZone(zoneName: "Z")
        state.add(pendingDatabaseChanges: [.saveZone(zone), .saveZone(RecordZone(zoneName: "Y")), .saveZone(zone)])
        #expect(state.pendingDatabaseChanges.count == 2)
        state.add(pendingDatabaseChanges: [.deleteZone(zone.zoneID)])
        #expect(state.pendingDatabaseChanges.first == .deleteZone(zone.zoneID))
        state.remove(pendingDatabaseChanges: [.deleteZone(zone.zoneID)])
        #expect(state.pendingDatabaseChanges == [.saveZone(RecordZone(zoneName: "Y"))])
    }

    @Test func theSerializationRoundTripsThroughJSON() async throws {
        state.add(pendingRecordZoneChanges: [.saveRecord(id("a")), .deleteRecord(id("b"))])
        state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneName: "Z")), .deleteZone(RecordZone.ID(zoneName: "Old"))])
        state.hasPendingUntrackedChanges = true
        #expect(await eventually { savedWithUntrackedChanges() })
        let data = try #require(device.model.withLock { $0.persisted.state })
        let decoded = try JSONDecoder().decode(SyncEngine.State.Serialization.self, from: data)
        var configuration = SyncEngine.Configuration(database: device.database, stateSerialization: decoded, delegate: device)
        configuration.automaticallySync = false
        let restored = SyncEngine(configuration).state
        #expect(restored.pendingRecordZoneChanges == state.pendingRecordZoneChanges)
        #expect(restored.pendingDatabaseChanges == state.pendingDatabaseChanges)
        #expect(restored.hasPendingUntrackedChanges)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(SyncEngine.State.Serialization.self, from: Data("{}".utf8)) }
    }

    /// Whether the device persisted a state holding the untracked flag (the app's changes
    /// are reported asynchronously, so callers poll with ``eventually(timeout:_:)``, which
    /// sleeps without holding a thread the engine's tasks need).
    private func savedWithUntrackedChanges() -> Bool {
        guard let data = device.model.withLock({ $0.persisted.state }),
            let decoded = try? JSONDecoder().decode(SyncEngine.State.Serialization.self, from: data)
        else { return false }
        return String(decoding: (try? JSONEncoder().encode(decoded)) ?? Data(), as: UTF8.self).contains(
            "\"hasPendingUntrackedChanges\":true")
    }

    @Test func batchesFromPendingChangesStayWithinTheLimits() async throws {
        let changes = (0..<450).map { SyncEngine.PendingRecordZoneChange.saveRecord(id("r\($0)")) } + [.deleteRecord(id("gone"))]
        let batch = try #require(
            await SyncEngine.RecordZoneChangeBatch(pendingChanges: changes) { id in
                id.recordName == "r1" ? nil : Record(recordType: "Note", recordID: id)
            })
        #expect(batch.recordsToSave.count == 400)
        #expect(batch.recordsToSave.first?.recordID == id("r0"))
        #expect(!batch.recordsToSave.contains { $0.recordID == id("r1") }, "a nil record is skipped")
        #expect(batch.recordIDsToDelete.isEmpty)
        #expect(await SyncEngine.RecordZoneChangeBatch(pendingChanges: []) { _ in nil } == nil)
        #expect(await SyncEngine.RecordZoneChangeBatch(pendingChanges: [.saveRecord(id("x"))]) { _ in nil } == nil)
        // Large records: the batch stops before 2 MB.
        let big = String(repeating: "x", count: 300_000)
        let large = try #require(
            await SyncEngine.RecordZoneChangeBatch(pendingChanges: (0..<10).map { .saveRecord(id("big\($0)")) }) { id in
                let record = Record(recordType: "Note", recordID: id)
                record["body"] = big
                return record
            })
        #expect(large.recordsToSave.count == 6)
    }

    @Test func scopesSayWhatTheyCover() {
        let z = RecordZone.ID(zoneName: "Z")
        let other = RecordZone.ID(zoneName: "Other")
        #expect(SyncEngine.FetchChangesOptions.Scope.all.contains(z))
        #expect(!SyncEngine.FetchChangesOptions.Scope.allExcluding([z]).contains(z))
        #expect(SyncEngine.FetchChangesOptions.Scope.zoneIDs([z]).contains(z))
        #expect(!SyncEngine.FetchChangesOptions.Scope.zoneIDs([z]).contains(other))
        let r = Record.ID(recordName: "r", zoneID: z)
        #expect(SyncEngine.SendChangesOptions.Scope.recordIDs([r]).contains(.saveRecord(r)))
        #expect(!SyncEngine.SendChangesOptions.Scope.recordIDs([r]).contains(Record.ID(recordName: "s", zoneID: z)))
        #expect(!SyncEngine.SendChangesOptions.Scope.allExcluding([z]).contains(r))
    }

    @Test func aSendOutsideItsScopeLeavesOtherChangesPending() async throws {
        device.createZone()
        try await device.engine.sendChanges()
        device.write("in", "in scope")
        device.write("out", "out of scope")
        try await device.engine.sendChanges(SyncEngine.SendChangesOptions(scope: .recordIDs([device.id("in")])))
        #expect(device.engine.state.pendingRecordZoneChanges == [.saveRecord(device.id("out"))])
        try await device.engine.sendChanges()
        #expect(device.engine.state.pendingRecordZoneChanges.isEmpty)
    }

    @Test func aStaleChangeIsDroppedSoTheSendEnds() async throws {
        device.createZone()
        try await device.engine.sendChanges()
        // A pending save whose note no longer exists locally.
        device.engine.state.add(pendingRecordZoneChanges: [.saveRecord(device.id("ghost"))])
        try await device.engine.sendChanges()
        #expect(device.engine.state.pendingRecordZoneChanges.isEmpty)
    }
}
