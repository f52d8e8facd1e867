import FogKit
import FogKitTesting
import Foundation
import Synchronization
import Testing

/// CloudKit's batch rules through `ModifyRecordsOperation`: atomic zones, non-atomic
/// zones and limits in one request.
@Suite struct BatchSemanticsTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    /// A record saved once, then a stale copy of it (its tag is older than the store's).
    static func staleRecord(in zoneID: RecordZone.ID, name: String, db: Database) async throws -> Record {
        let record = Record(recordType: "Item", recordID: Record.ID(recordName: name, zoneID: zoneID))
        record["v"] = 0
        let saved = try await db.save(record)
        let stale = saved.copy()
        let fresh = try await db.record(for: record.recordID)
        fresh["v"] = 1
        try await db.save(fresh)
        stale["v"] = 2
        return stale
    }

    @Test func oneBatchMixingFailuresInAnAtomicAndANonAtomicZone() async throws {
        let atomicZone = try await db.save(RecordZone(zoneName: "Atomic")).zoneID
        let defaultZone = RecordZone.ID.default
        let staleAtomic = try await Self.staleRecord(in: atomicZone, name: "staleA", db: db)
        let staleDefault = try await Self.staleRecord(in: defaultZone, name: "staleD", db: db)
        let goodAtomic = (0..<3).map { Record(recordType: "Item", recordID: Record.ID(recordName: "goodA\($0)", zoneID: atomicZone)) }
        let goodDefault = (0..<3).map { Record(recordType: "Item", recordID: Record.ID(recordName: "goodD\($0)", zoneID: defaultZone)) }
        let missingDelete = Record.ID(recordName: "missing", zoneID: defaultZone)

        let op = ModifyRecordsOperation(
            recordsToSave: goodAtomic + [staleAtomic] + goodDefault + [staleDefault], recordIDsToDelete: [missingDelete])
        let final = Mutex<FogError?>(nil)
        op.modifyRecordsResultBlock = { result in
            if case .failure(let e) = result { final.withLock { $0 = e as? FogError } }
        }
        await db.run(op)
        let error = try #require(final.withLock { $0 })
        #expect(error.code == .partialFailure)
        let partial = try #require(error.partialErrorsByItemID)
        func code(_ id: Record.ID) -> FogError.Code? { (partial[id] as? FogError)?.code }
        // The atomic zone: the failing item has its own error, the others batchRequestFailed, nothing stored.
        #expect(code(staleAtomic.recordID) == .serverRecordChanged)
        for r in goodAtomic {
            #expect(code(r.recordID) == .batchRequestFailed)
            await #expect(throws: FogError.self) { try await db.record(for: r.recordID) }
        }
        #expect(try await db.record(for: staleAtomic.recordID)["v"] as? Int == 1)
        // The default zone is never atomic: each item stands alone.
        #expect(code(staleDefault.recordID) == .serverRecordChanged)
        #expect(code(missingDelete) == .unknownItem)
        for r in goodDefault {
            #expect(code(r.recordID) == nil)
            #expect(try await db.record(for: r.recordID).recordType == "Item")
        }
        #expect(try await db.record(for: staleDefault.recordID)["v"] as? Int == 1)
        #expect(partial.count == 1 + goodAtomic.count + 2)
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func savingIntoAMissingZoneFailsEachItemOfThatZone() async throws {
        let missing = RecordZone.ID(zoneName: "Missing")
        let inMissing = (0..<2).map { Record(recordType: "Item", recordID: Record.ID(recordName: "m\($0)", zoneID: missing)) }
        let elsewhere = Record(recordType: "Item")
        let op = ModifyRecordsOperation(recordsToSave: inMissing + [elsewhere])
        op.isAtomic = false
        let codes = Mutex<[Record.ID: FogError.Code]>([:])
        op.perRecordSaveBlock = { id, result in
            if case .failure(let e) = result { codes.withLock { $0[id] = (e as? FogError)?.code } }
        }
        await db.run(op)
        #expect(codes.withLock { $0 } == [inMissing[0].recordID: .zoneNotFound, inMissing[1].recordID: .zoneNotFound])
        #expect(try await db.record(for: elsewhere.recordID).recordType == "Item")
    }

    /// An ID saved twice in one request fails both saves, and only those; the other items of
    /// the request are saved (a request of distinct IDs skips the second lookup of each).
    @Test func anIDSavedTwiceFailsBothSavesAndOnlyThem() async throws {
        let twice = Record.ID(recordName: "twice")
        let first = Record(recordType: "Item", recordID: twice)
        let second = Record(recordType: "Item", recordID: twice)
        let others = (0..<3).map { Record(recordType: "Item", recordID: Record.ID(recordName: "other\($0)")) }
        let (saves, _) = try await db.modifyRecords(
            saving: [others[0], first, others[1], second, others[2]], deleting: [], atomically: false)
        #expect(saves.count == 4)
        guard case .failure(let error)? = saves[twice] else {
            Issue.record("the repeated ID was saved")
            return
        }
        #expect((error as? FogError)?.code == .invalidArguments)
        for other in others { #expect(try saves[other.recordID]?.get().recordType == "Item") }
        await #expect(throws: FogError.self) { try await db.record(for: twice) }

        let (distinct, _) = try await db.modifyRecords(
            saving: (0..<3).map { Record(recordType: "Item", recordID: Record.ID(recordName: "d\($0)")) }, deleting: [])
        #expect(distinct.values.allSatisfy { (try? $0.get()) != nil })
    }

    @Test func moreThan400ItemsFailTheWholeOperationUnlessLimitsAreRelaxed() async throws {
        let strict = try TestStore()
        let records = (0..<401).map { _ in Record(recordType: "Item") }
        let op = ModifyRecordsOperation(recordsToSave: records)
        let final = Mutex<FogError.Code?>(nil)
        let perRecord = Mutex(0)
        op.perRecordSaveBlock = { _, result in
            if case .failure(let e) = result, (e as? FogError)?.code == .limitExceeded { perRecord.withLock { $0 += 1 } }
        }
        op.modifyRecordsResultBlock = { result in
            if case .failure(let e) = result { final.withLock { $0 = (e as? FogError)?.code } }
        }
        await strict.container.privateCloudDatabase.run(op)
        #expect(final.withLock { $0 } == .limitExceeded)
        #expect(perRecord.withLock { $0 } == 401)
        await #expect(throws: FogError.self) { try await strict.container.privateCloudDatabase.record(for: records[0].recordID) }

        let bulk = try TestStore(configuration: .init(durability: .none, limits: .bulkLoad))
        let result = try await bulk.container.privateCloudDatabase.modifyRecords(saving: records, deleting: [])
        #expect(result.saveResults.values.allSatisfy { (try? $0.get()) != nil })
    }
}
