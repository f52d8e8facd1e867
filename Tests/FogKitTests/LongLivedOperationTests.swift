import FogKit
import FogKitTesting
import Foundation
import Synchronization
import Testing

/// Long-lived operations (CloudKit's `isLongLived`, Docs/CloudKitDifferences.md): kept in the
/// store from `add` until their result has been delivered, across a restart; fetched again
/// with their parameters; a committed modify delivers its kept outcome without saving again.
@Suite struct LongLivedOperationTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory("longlived") }

    static let zone = RecordZone.ID(zoneName: "Notes")

    /// An operation that waits until `gate` runs (added to no queue until the test says).
    static func gated(_ operation: CloudOperation) -> BlockOperation {
        let gate = BlockOperation {}
        operation.addDependency(gate)
        return gate
    }

    static func open(_ gate: BlockOperation) { OperationQueue().addOperation(gate) }

    static func note(_ name: String, _ title: String) -> Record {
        let record = Record(recordType: "Note", recordID: Record.ID(recordName: name, zoneID: zone))
        record["title"] = title
        return record
    }

    /// Adds `operation` to `container` and waits until it has finished.
    static func run(_ operation: CloudOperation, on container: Container) async {
        container.add(operation)
        await wait(operation)
    }

    /// Waits until `operation` has finished.
    static func wait(_ operation: Operation) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                operation.waitUntilFinished()
                continuation.resume()
            }
        }
    }

    @Test func listedWhilePendingAndGoneAfterDelivery() async throws {
        let container = try directory.open()
        defer { container.close() }
        _ = try await container.privateCloudDatabase.save(RecordZone(zoneID: Self.zone))
        let op = ModifyRecordsOperation(recordsToSave: [Self.note("n1", "one")])
        op.configuration.isLongLived = true
        #expect(op.isLongLived)
        let persisted = Mutex(0)
        let listedDuringDelivery = Mutex<[String]>([])
        op.longLivedOperationWasPersistedBlock = { persisted.withLock { $0 += 1 } }
        op.modifyRecordsResultBlock = { _ in
            // Still listed while its result is being delivered.
            listedDuringDelivery.withLock { $0 = (try? Self.idsNow(container)) ?? [] }
        }
        let gate = Self.gated(op)
        container.add(op)
        #expect(try await container.allLongLivedOperationIDs() == [op.operationID])
        #expect(persisted.withLock { $0 } == 0, "the block runs when the operation starts")
        Self.open(gate)
        await Self.wait(op)
        #expect(persisted.withLock { $0 } == 1)
        #expect(listedDuringDelivery.withLock { $0 } == [op.operationID])
        #expect(try await container.allLongLivedOperationIDs().isEmpty)
        await #expect(throws: FogError.self) { try await container.longLivedOperation(for: op.operationID) }
    }

    /// The IDs, from a callback's thread.
    static func idsNow(_ container: Container) throws -> [String] {
        let result = Mutex<Result<[String], any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        container.fetchAllLongLivedOperationIDs { ids, error in
            result.withLock { $0 = ids.map { .success($0) } ?? .failure(error ?? FogError(.internalError)) }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }

    @Test func aRestartListsItAndTheFetchedOperationDoesTheWork() async throws {
        var container = try directory.open()
        _ = try await container.privateCloudDatabase.save(RecordZone(zoneID: Self.zone))
        let op = ModifyRecordsOperation(recordsToSave: [Self.note("n1", "one")], recordIDsToDelete: [])
        op.configuration.isLongLived = true
        op.savePolicy = .allKeys
        let gate = Self.gated(op)
        container.add(op)
        let id = op.operationID
        container.close()
        Self.open(gate)  // runs on the closed store: fails, and stays listed
        await Self.wait(op)

        container = try directory.open()
        defer { container.close() }
        #expect(try await container.allLongLivedOperationIDs() == [id])
        let fetched = try #require(try await container.longLivedOperation(for: id) as? ModifyRecordsOperation)
        #expect(fetched.operationID == id)
        #expect(fetched.isLongLived)
        #expect(fetched.savePolicy == .allKeys)
        #expect(fetched.recordsToSave?.map(\.recordID) == [Record.ID(recordName: "n1", zoneID: Self.zone)])
        #expect(fetched.recordsToSave?.first?["title"] as? String == "one")
        let saved = Mutex<[Record]>([])
        fetched.perRecordSaveBlock = { _, result in if let r = try? result.get() { saved.withLock { $0.append(r) } } }
        await Self.run(fetched, on: container)
        #expect(saved.withLock { $0.map(\.recordID.recordName) } == ["n1"])
        let stored = try await container.privateCloudDatabase.record(for: Record.ID(recordName: "n1", zoneID: Self.zone))
        #expect(stored["title"] as? String == "one")
        #expect(try await container.allLongLivedOperationIDs().isEmpty)
    }

    /// The process ends after the commit and before the result is delivered (here: the
    /// container closes in the first callback). Fetched and run again, the operation delivers
    /// the kept outcome — the saved record with its change tag, the per-item error — and
    /// writes nothing.
    @Test func aCommittedModifyDeliversItsOutcomeWithoutASecondCommit() async throws {
        var container = try directory.open()
        let db = container.privateCloudDatabase
        _ = try await db.save(RecordZone(zoneID: Self.zone))
        let missing = Record.ID(recordName: "missing", zoneID: Self.zone)
        let op = ModifyRecordsOperation(recordsToSave: [Self.note("n1", "one")], recordIDsToDelete: [missing])
        op.isAtomic = false
        op.configuration.isLongLived = true
        let firstTag = Mutex<String?>(nil)
        let firstDeleteError = Mutex<FogError?>(nil)
        op.perRecordSaveBlock = { [container] _, result in
            firstTag.withLock { $0 = (try? result.get())?.recordChangeTag }
            container.close()  // the process ends before the rest is delivered
        }
        op.perRecordDeleteBlock = { _, result in
            if case .failure(let error) = result { firstDeleteError.withLock { $0 = error as? FogError } }
        }
        await Self.run(op, on: container)
        let tag = try #require(firstTag.withLock { $0 })
        #expect(firstDeleteError.withLock { $0 }?.code == .unknownItem)

        container = try directory.open()
        defer { container.close() }
        let reopened = container.privateCloudDatabase
        #expect(try await container.allLongLivedOperationIDs() == [op.operationID])
        let before = try await reopened.recordZoneChanges(inZoneWith: Self.zone, since: nil)
        #expect(before.modificationResultsByID.count == 1)

        let fetched = try #require(try await container.longLivedOperation(for: op.operationID) as? ModifyRecordsOperation)
        let events = Mutex<[String]>([])
        fetched.perRecordSaveBlock = { id, result in
            switch result {
            case .success(let record):
                events.withLock {
                    $0.append(
                        "saved \(id.recordName) \(record.recordChangeTag ?? "-") \(record["title"] as? String ?? "-") changed=\(record.changedKeys())"
                    )
                }
            case .failure(let error): events.withLock { $0.append("save failed \(error)") }
            }
        }
        fetched.perRecordDeleteBlock = { id, result in
            if case .failure(let error as FogError) = result {
                events.withLock { $0.append("delete \(id.recordName) \(error.code) \(error.message)") }
            }
        }
        fetched.modifyRecordsResultBlock = { result in
            switch result {
            case .success: events.withLock { $0.append("result success") }
            case .failure(let error): events.withLock { $0.append("result \((error as? FogError)?.code.description ?? "\(error)")") }
            }
        }
        await Self.run(fetched, on: container)
        let deleteError = try #require(firstDeleteError.withLock { $0 })
        #expect(
            events.withLock { $0 } == [
                "saved n1 \(tag) one changed=[]", "delete missing \(deleteError.code) \(deleteError.message)", "result partialFailure",
            ])
        // Nothing was written: same change tag, same zone history.
        let stored = try await reopened.record(for: Record.ID(recordName: "n1", zoneID: Self.zone))
        #expect(stored.recordChangeTag == tag)
        let after = try await reopened.recordZoneChanges(inZoneWith: Self.zone, since: before.changeToken)
        #expect(after.modificationResultsByID.isEmpty && after.deletions.isEmpty)
        #expect(after.changeToken == before.changeToken, "no commit in the zone since")
        #expect(try await container.allLongLivedOperationIDs().isEmpty)
    }

    @Test func anOperationThatIsNotLongLivedIsNeverListed() async throws {
        let container = try directory.open()
        defer { container.close() }
        _ = try await container.privateCloudDatabase.save(RecordZone(zoneID: Self.zone))
        let op = ModifyRecordsOperation(recordsToSave: [Self.note("n1", "one")])
        let persisted = Mutex(false)
        op.longLivedOperationWasPersistedBlock = { persisted.withLock { $0 = true } }
        let gate = Self.gated(op)
        container.add(op)
        #expect(try await container.allLongLivedOperationIDs().isEmpty)
        Self.open(gate)
        await Self.wait(op)
        #expect(try await container.allLongLivedOperationIDs().isEmpty)
        #expect(!persisted.withLock { $0 })
    }

    @Test func anotherUserDoesNotSeeIt() async throws {
        let alice = try directory.open(user: "alice")
        let bob = try directory.open(user: "bob")
        defer {
            alice.close()
            bob.close()
        }
        let op = QueryOperation(query: Query(recordType: "Note", predicate: try QueryPredicate(format: "TRUEPREDICATE")))
        op.configuration.isLongLived = true
        let gate = Self.gated(op)
        alice.add(op)
        #expect(try await alice.allLongLivedOperationIDs() == [op.operationID])
        #expect(try await bob.allLongLivedOperationIDs().isEmpty)
        await #expect(throws: FogError.self) { try await bob.longLivedOperation(for: op.operationID) }
        Self.open(gate)
        await Self.wait(op)
    }

    /// A kept query comes back with its query, zone and limits, and runs again.
    @Test func aFetchedQueryRunsAgain() async throws {
        let container = try directory.open()
        defer { container.close() }
        let db = container.privateCloudDatabase
        _ = try await db.save(RecordZone(zoneID: Self.zone))
        _ = try await db.save(Self.note("n1", "one"))
        let query = Query(recordType: "Note", predicate: try QueryPredicate(format: "title == %@", "one"))
        query.sortDescriptors = [.init(key: "title", ascending: false)]
        let op = QueryOperation(query: query)
        op.zoneID = Self.zone
        op.resultsLimit = 7
        op.desiredKeys = ["title"]
        op.configuration.isLongLived = true
        let gate = Self.gated(op)
        container.add(op)
        let fetched = try #require(try await container.longLivedOperation(for: op.operationID) as? QueryOperation)
        #expect(fetched.query?.recordType == "Note")
        #expect(fetched.query?.predicate.description == query.predicate.description)
        #expect(fetched.query?.sortDescriptors == query.sortDescriptors)
        #expect(fetched.zoneID == Self.zone && fetched.resultsLimit == 7 && fetched.desiredKeys == ["title"])
        // The original delivers and is forgotten; the fetched copy runs again on its own.
        Self.open(gate)
        await Self.wait(op)
        let names = Mutex<[String]>([])
        fetched.recordMatchedBlock = { id, _ in names.withLock { $0.append(id.recordName) } }
        await Self.run(fetched, on: container)
        #expect(names.withLock { $0 } == ["n1"])
        #expect(try await container.allLongLivedOperationIDs().isEmpty)
    }

    @Test func nobodyHasNone() async throws {
        let container = try directory.open(user: nil)
        defer { container.close() }
        await #expect {
            _ = try await container.allLongLivedOperationIDs()
        } throws: { ($0 as? FogError)?.code == .notAuthenticated }
    }
}
