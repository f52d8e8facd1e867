import FogKit
import FogKitTesting
import Testing

/// A container's fault plan: injected errors change nothing, per-item faults fail only
/// their records, lost replies commit, and triggers count as documented.
@Suite struct FaultInjectionTests {
    let store: TestStore
    var db: Database { store.privateDatabase }
    init() throws { store = try TestStore() }

    private func note(_ name: String, in zoneID: RecordZone.ID = .default) -> Record {
        let record = Record(recordType: "Note", recordID: Record.ID(recordName: name, zoneID: zoneID))
        record["title"] = name
        return record
    }

    @Test func aThrottledSaveChangesNothingAndCarriesItsDelay() async throws {
        store.container.faultPlan = FaultPlan([
            .init(.error(.requestRateLimited, retryAfterSeconds: 0.25), requests: [.modifyRecords])
        ])
        await #expect {
            try await db.save(note("a"))
        } throws: { error in
            let error = error as? FogError
            return error?.code == .requestRateLimited && error?.retryAfterSeconds == 0.25
                && error?.userInfo[ErrorRetryAfterKey] as? Double == 0.25
        }
        store.container.faultPlan = .none
        await #expect(throws: FogError.self) { try await db.record(for: Record.ID(recordName: "a")) }
    }

    @Test func firstCallsFailThenTheRetrySucceeds() async throws {
        store.container.faultPlan = FaultPlan([.init(.error(.zoneBusy, retryAfterSeconds: 0), trigger: .firstCalls(2))])
        var attempts = 0
        var saved: Record?
        while saved == nil {
            attempts += 1
            do { saved = try await db.save(note("retry")) } catch let error as FogError where error.code == .zoneBusy { continue }
        }
        #expect(attempts == 3)
        #expect(try await db.record(for: saved!.recordID)["title"] as? String == "retry")
    }

    @Test func anInjectedConflictFailsOnlyItsRecordsAndCarriesTheStoredOne() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z"))
        let stored = try await db.save(note("n1", in: zone.zoneID))
        let post = Record(recordType: "Post", recordID: Record.ID(recordName: "p1", zoneID: zone.zoneID))
        store.container.faultPlan = FaultPlan([.init(.error(.serverRecordChanged), recordTypes: ["Note"])])

        // Not atomic: the Post is saved, the Note fails with the stored record.
        stored["title"] = "changed"
        let (saves, _) = try await db.modifyRecords(saving: [stored, post], deleting: [], atomically: false)
        let conflict = try #require(
            saves[stored.recordID].flatMap { r -> FogError? in if case .failure(let e) = r { e as? FogError } else { nil } })
        #expect(conflict.code == .serverRecordChanged)
        #expect(conflict.serverRecord?["title"] as? String == "n1")
        #expect(conflict.clientRecord === stored)
        #expect(try saves[post.recordID]?.get() != nil)

        // Atomic: the other record of the zone fails with batchRequestFailed and nothing is written.
        let other = Record(recordType: "Post", recordID: Record.ID(recordName: "p2", zoneID: zone.zoneID))
        do {
            _ = try await db.modifyRecords(saving: [stored, other], deleting: [], atomically: true)
            Issue.record("the atomic batch must fail")
        } catch let error as FogError {
            let byID = try #require(error.partialErrorsByItemID)
            #expect((byID[stored.recordID] as? FogError)?.code == .serverRecordChanged)
            #expect((byID[other.recordID] as? FogError)?.code == .batchRequestFailed)
        }
        store.container.faultPlan = .none
        #expect(try await db.record(for: stored.recordID)["title"] as? String == "n1")
        await #expect(throws: FogError.self) { try await db.record(for: other.recordID) }
    }

    @Test func aLostReplyCommitsTheWrite() async throws {
        store.container.faultPlan = FaultPlan([.init(.responseLost(), requests: [.modifyRecords], trigger: .nthCall(1))])
        await #expect {
            try await db.save(note("lost"))
        } throws: { ($0 as? FogError)?.code == .serverResponseLost }
        // The write happened: a blind retry of the same new record now conflicts.
        #expect(try await db.record(for: Record.ID(recordName: "lost"))["title"] as? String == "lost")
        await #expect {
            try await db.save(note("lost"))
        } throws: { ($0 as? FogError)?.code == .serverRecordChanged }
    }

    @Test func rulesMatchByRequestKindZoneAndDatabase() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z"))
        _ = try await db.save(note("n1", in: zone.zoneID))
        store.container.faultPlan = FaultPlan([
            .init(.error(.networkUnavailable), requests: [.query], zoneIDs: [zone.zoneID]),
            .init(.error(.serviceUnavailable, retryAfterSeconds: 1), requests: [.fetchZoneChanges], databaseScopes: [.private]),
        ])
        let query = Query(recordType: "Note", predicate: QueryPredicate(value: true))
        await #expect { try await db.records(matching: query, inZoneWith: zone.zoneID) } throws: {
            ($0 as? FogError)?.code == .networkUnavailable
        }
        // Another zone, and fetches by ID, are untouched.
        _ = try await db.records(matching: query, inZoneWith: .default)
        _ = try await db.record(for: Record.ID(recordName: "n1", zoneID: zone.zoneID))
        // The operation API sees the same faults as the convenience methods: the zone's
        // error, inside the operation's partial failure.
        let operation = FetchRecordZoneChangesOperation(recordZoneIDs: [zone.zoneID], configurationsByRecordZoneID: nil)
        let finished: FogError? = await withCheckedContinuation { continuation in
            operation.fetchRecordZoneChangesResultBlock = { result in
                if case .failure(let error) = result {
                    continuation.resume(returning: error as? FogError)
                } else {
                    continuation.resume(returning: nil)
                }
            }
            db.add(operation)
        }
        #expect(finished?.code == .partialFailure)
        #expect((finished?.partialErrorsByItemID?[zone.zoneID] as? FogError)?.code == .serviceUnavailable)
        // Another container of the same store has no plan.
        let bob = try store.container(user: "bob")
        _ = try await bob.privateCloudDatabase.allRecordZones()
    }

    @Test func probabilityIsReproducibleFromTheSeed() async throws {
        func outcomes() async throws -> [Bool] {
            store.container.faultPlan = FaultPlan([.init(.error(.networkFailure), trigger: .probability(0.5))], seed: 42)
            var result: [Bool] = []
            for _ in 0..<20 { result.append((try? await db.allRecordZones()) != nil) }
            return result
        }
        let first = try await outcomes()
        #expect(try await outcomes() == first)
        #expect(first.contains(true) && first.contains(false))
    }

    @Test func plansAreCodable() throws {
        let plan = FaultPlan([
            .init(.error(.quotaExceeded), requests: [.modifyRecords], recordTypes: ["Photo"], trigger: .nthCall(3), latency: 0.01),
            .init(.responseLost(.networkFailure), zoneIDs: [RecordZone.ID(zoneName: "Z")]),
        ])
        let data = try JSONEncoder().encode(plan)
        #expect(try JSONDecoder().decode(FaultPlan.self, from: data) == plan)
    }
}
