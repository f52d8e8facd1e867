import FogKit
import FogKitTesting
import Foundation
import Synchronization
import Testing

/// Two devices edit, delete and create notes at random while the container throttles and
/// loses replies at random; once they have sent and fetched until nothing is pending, both
/// hold the same notes as the server: no change lost, none applied twice.
@Suite struct SyncEngineConvergenceTests {
    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func randomEditsUnderFaultsConverge(seed: UInt64) async throws {
        let store = try TestStore()
        let container = store.container
        let a = NotesDevice("A", database: container.privateCloudDatabase)
        let b = NotesDevice("B", database: container.privateCloudDatabase)
        try a.start()
        try b.start()
        a.createZone()
        try await a.engine.sendChanges()
        var random = SplitMix64(seed: seed)
        container.faultPlan = FaultPlan(
            [
                .init(.error(.requestRateLimited, retryAfterSeconds: 0.001), requests: [.modifyRecords], trigger: .probability(0.2)),
                .init(.responseLost(), requests: [.modifyRecords], trigger: .probability(0.2)),
                .init(.error(.zoneBusy, retryAfterSeconds: 0.001), requests: [.fetchZoneChanges], trigger: .probability(0.2)),
            ], seed: seed)
        for _ in 0..<4 {
            for device in [a, b] {
                for _ in 0..<random.int(1...6) {
                    let name = "n\(random.int(0...9))"
                    if random.chance(0.2), device.note(name) != nil {
                        device.delete(name)
                    } else {
                        device.write(name, "\(device.name) \(random.next() % 1000)")
                    }
                }
            }
            try? await a.engine.sendChanges()
            try? await b.engine.sendChanges()
            try? await a.engine.fetchChanges()
            try? await b.engine.fetchChanges()
        }
        container.faultPlan = .none
        var rounds = 0
        while rounds < 10 {
            rounds += 1
            try? await a.engine.sendChanges()
            try? await b.engine.sendChanges()
            try await a.engine.fetchChanges()
            try await b.engine.fetchChanges()
            if a.engine.state.pendingRecordZoneChanges.isEmpty && b.engine.state.pendingRecordZoneChanges.isEmpty { break }
        }
        #expect(a.engine.state.pendingRecordZoneChanges.isEmpty && b.engine.state.pendingRecordZoneChanges.isEmpty)
        #expect(a.titles == b.titles, "seed \(seed)")
        // And the server holds exactly those notes.
        let changes = try await container.privateCloudDatabase.recordZoneChanges(inZoneWith: a.zoneID, since: nil)
        var server: [String: String] = [:]
        for (id, result) in changes.modificationResultsByID {
            server[id.recordName] = (try result.get()).record["title"] as? String
        }
        #expect(server == a.titles, "seed \(seed)")
    }
}
