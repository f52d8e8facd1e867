import FogKit
import FogKitTesting
import Foundation
import Synchronization
import Testing

/// Collects callback events from an operation's thread.
final class EventLog: Sendable {
    private let events = Mutex<[String]>([])
    func append(_ event: String) { events.withLock { $0.append(event) } }
    var all: [String] { events.withLock { $0 } }
}

extension Database {
    /// Adds `operation` and waits until it has finished.
    func run(_ operation: DatabaseOperation) async {
        add(operation)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                operation.waitUntilFinished()
                continuation.resume()
            }
        }
    }
}

@Suite struct OperationTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    @Test func modifyRecordsCallbacksRunInDocumentedOrder() async throws {
        let existing = Record(recordType: "Note", recordID: Record.ID(recordName: "existing"))
        try await db.save(existing)
        let a = Record(recordType: "Note", recordID: Record.ID(recordName: "a"))
        let b = Record(recordType: "Note", recordID: Record.ID(recordName: "b"))
        let log = EventLog()
        let op = ModifyRecordsOperation(recordsToSave: [a, b], recordIDsToDelete: [existing.recordID])
        op.perRecordProgressBlock = { record, progress in log.append("progress \(record.recordID.recordName) \(progress)") }
        op.perRecordSaveBlock = { id, result in log.append("save \(id.recordName) \((try? result.get()) != nil)") }
        op.perRecordDeleteBlock = { id, result in log.append("delete \(id.recordName) \((try? result.get()) != nil)") }
        op.modifyRecordsResultBlock = { result in log.append("result \((try? result.get()) != nil)") }
        op.completionBlock = { log.append("completion") }
        await db.run(op)
        // Foundation runs completionBlock after the operation finishes; wait for it.
        for _ in 0..<100 where !log.all.contains("completion") { try await Task.sleep(for: .milliseconds(10)) }
        #expect(
            log.all == [
                "progress a 1.0", "save a true", "progress b 1.0", "save b true", "delete existing true", "result true",
                "completion",
            ])
    }

    @Test func nonAtomicFailureEndsInPartialFailureWithItemErrors() async throws {
        let good = Record(recordType: "Note")
        let bad = Record(recordType: "Note")
        bad["_reserved"] = 1
        let op = ModifyRecordsOperation(recordsToSave: [good, bad])
        op.isAtomic = false
        let final = Mutex<FogError?>(nil)
        op.modifyRecordsResultBlock = { result in
            if case .failure(let e) = result { final.withLock { $0 = e as? FogError } }
        }
        await db.run(op)
        let error = try #require(final.withLock { $0 })
        #expect(error.code == .partialFailure)
        #expect((error.partialErrorsByItemID?[bad.recordID] as? FogError)?.code == .invalidArguments)
        #expect(error.partialErrorsByItemID?[good.recordID] == nil)
        #expect(try await db.record(for: good.recordID).recordType == "Note")
    }

    @Test func atomicZoneFailureStoresNothingAndMarksTheOthers() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Atomic"))
        let taken = Record(recordType: "Note", recordID: Record.ID(recordName: "taken", zoneID: zone.zoneID))
        try await db.save(taken)
        let fresh = Record(recordType: "Note", recordID: Record.ID(recordName: "fresh", zoneID: zone.zoneID))
        let clash = Record(recordType: "Note", recordID: Record.ID(recordName: "taken", zoneID: zone.zoneID))
        let op = ModifyRecordsOperation(recordsToSave: [fresh, clash])
        let results = Mutex<[Record.ID: FogError.Code]>([:])
        op.perRecordSaveBlock = { id, result in
            if case .failure(let e) = result { results.withLock { $0[id] = (e as? FogError)?.code } }
        }
        await db.run(op)
        #expect(results.withLock { $0 } == [fresh.recordID: .batchRequestFailed, clash.recordID: .serverRecordChanged])
        await #expect(throws: FogError.self) { try await db.record(for: fresh.recordID) }
    }

    @Test func cancelledOperationReportsOperationCancelled() async throws {
        let record = Record(recordType: "Note")
        let op = ModifyRecordsOperation(recordsToSave: [record])
        let codes = EventLog()
        op.perRecordSaveBlock = { _, result in
            if case .failure(let e) = result { codes.append("\((e as? FogError)?.code.description ?? "?")") }
        }
        op.modifyRecordsResultBlock = { result in
            if case .failure(let e) = result { codes.append("final \((e as? FogError)?.code.description ?? "?")") }
        }
        op.cancel()
        await db.run(op)
        #expect(codes.all == ["operationCancelled", "final operationCancelled"])
        await #expect(throws: FogError.self) { try await db.record(for: record.recordID) }
    }

    @Test func dependenciesOrderOperationsOnAnyQueue() async throws {
        let record = Record(recordType: "Note")
        record["title"] = "first"
        let save = ModifyRecordsOperation(recordsToSave: [record])
        save.database = db
        let fetch = FetchRecordsOperation(recordIDs: [record.recordID])
        fetch.database = db
        let fetched = Mutex<String?>(nil)
        fetch.perRecordResultBlock = { _, result in
            fetched.withLock { $0 = (try? result.get())?["title"] as? String }
        }
        fetch.addDependency(save)
        let queue = OperationQueue()
        queue.addOperation(fetch)
        queue.addOperation(save)
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                queue.waitUntilAllOperationsAreFinished()
                c.resume()
            }
        }
        #expect(fetched.withLock { $0 } == "first")
    }

    @Test func callbacksMayCallFogKitAgain() async throws {
        let record = Record(recordType: "Note")
        let op = ModifyRecordsOperation(recordsToSave: [record])
        let nested = Mutex<Bool>(false)
        op.perRecordSaveBlock = { id, _ in
            // Runs with no transaction open: a nested operation can read and write.
            let fetch = FetchRecordsOperation(recordIDs: [id])
            fetch.database = db
            fetch.perRecordResultBlock = { _, result in nested.withLock { $0 = (try? result.get()) != nil } }
            fetch.start()
            let again = ModifyRecordsOperation(recordsToSave: [Record(recordType: "Note")])
            again.database = db
            again.start()
        }
        await db.run(op)
        #expect(nested.withLock { $0 })
    }

    @Test func operationWithoutDatabaseFails() async throws {
        let op = FetchRecordsOperation(recordIDs: [Record.ID(recordName: "x")])
        let code = Mutex<FogError.Code?>(nil)
        op.fetchRecordsResultBlock = { result in
            if case .failure(let e) = result { code.withLock { $0 = (e as? FogError)?.code } }
        }
        op.start()
        #expect(code.withLock { $0 } == .invalidArguments)
    }

    @Test func zoneOperationsSaveFetchAndDelete() async throws {
        let save = ModifyRecordZonesOperation(recordZonesToSave: [RecordZone(zoneName: "A"), RecordZone(zoneName: "_bad")])
        let saved = EventLog()
        save.perRecordZoneSaveBlock = { id, result in saved.append("\(id.zoneName) \((try? result.get()) != nil)") }
        await db.run(save)
        #expect(saved.all == ["A true", "_bad false"])

        let fetchAll = FetchRecordZonesOperation.fetchAllRecordZonesOperation()
        let names = EventLog()
        fetchAll.perRecordZoneResultBlock = { id, _ in names.append(id.zoneName) }
        await db.run(fetchAll)
        #expect(names.all == ["_defaultZone", "A"])

        let delete = ModifyRecordZonesOperation(recordZoneIDsToDelete: [RecordZone.ID(zoneName: "A"), RecordZone.ID(zoneName: "missing")])
        let deleted = EventLog()
        delete.perRecordZoneDeleteBlock = { id, result in
            switch result {
            case .success: deleted.append("\(id.zoneName) ok")
            case .failure(let e): deleted.append("\(id.zoneName) \((e as? FogError)?.code.description ?? "?")")
            }
        }
        await db.run(delete)
        #expect(deleted.all == ["A ok", "missing zoneNotFound"])
    }
}
