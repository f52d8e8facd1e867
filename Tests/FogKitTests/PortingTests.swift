import FogKit
import FogKitTesting
import Testing

/// The pieces of CloudKit's API that ported code leans on besides the `async` core: the
/// completion-handler methods, the error user info, and archiving IDs.
@Suite struct PortingTests {
    let store: TestStore
    var db: Database { store.privateDatabase }
    init() throws { store = try TestStore() }

    /// Waits for a completion handler's one call.
    private func await<T: Sendable>(_ start: (@escaping @Sendable (T) -> Void) -> Void) async -> T {
        await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
    }

    @Test func completionHandlersMatchTheirAsyncTwins() async throws {
        let note = Record(recordType: "Note", recordID: Record.ID(recordName: "n1"))
        note["title"] = "Groceries"
        let saved: Record? = await self.await { done in db.save(note) { record, error in done(record) } }
        #expect(saved?.recordChangeTag != nil)

        let fetched: String? = await self.await { done in
            db.fetch(withRecordID: note.recordID) { record, _ in done(record?["title"] as? String) }
        }
        #expect(fetched == "Groceries")

        let missing: FogError.Code? = await self.await { done in
            db.fetch(withRecordID: Record.ID(recordName: "absent")) { record, error in
                #expect(record == nil)
                done((error as? FogError)?.code)
            }
        }
        #expect(missing == .unknownItem)

        let count: Int? = await self.await { done in
            db.fetch(withQuery: Query(recordType: "Note", predicate: QueryPredicate(value: true))) { result in
                done(try? result.get().matchResults.count)
            }
        }
        #expect(count == 1)

        let zones: [String]? = await self.await { done in db.fetchAllRecordZones { zones, _ in done(zones?.map(\.zoneID.zoneName)) } }
        #expect(zones == [RecordZone.ID.defaultZoneName])

        let deleted: Record.ID? = await self.await { done in db.delete(withRecordID: note.recordID) { id, _ in done(id) } }
        #expect(deleted == note.recordID)
    }

    @Test func subscriptionCompletionHandlersMatchTheirAsyncTwins() async throws {
        let subscription = QuerySubscription(recordType: "Note", predicate: QueryPredicate(value: true), subscriptionID: "notes")
        let saved: String? = await self.await { done in db.save(subscription) { saved, _ in done(saved?.subscriptionID) } }
        #expect(saved == "notes")

        let fetched: String? = await self.await { done in
            db.fetch(withSubscriptionID: "notes") { subscription, _ in done(subscription?.subscriptionID) }
        }
        #expect(fetched == "notes")
        let missing: FogError.Code? = await self.await { done in
            db.fetch(withSubscriptionID: "absent") { subscription, error in
                #expect(subscription == nil)
                done((error as? FogError)?.code)
            }
        }
        #expect(missing == .unknownItem)
        let several: [String: Bool]? = await self.await { done in
            db.fetch(withSubscriptionIDs: ["notes", "absent"]) { result in
                done(try? result.get().mapValues { if case .success = $0 { true } else { false } })
            }
        }
        #expect(several == ["notes": true, "absent": false])

        let all: [String]? = await self.await { done in db.fetchAllSubscriptions { all, _ in done(all?.map(\.subscriptionID)) } }
        #expect(all == ["notes"])

        let modified: Int? = await self.await { done in
            db.modifySubscriptions(
                saving: [QuerySubscription(recordType: "Task", predicate: QueryPredicate(value: true), subscriptionID: "tasks")],
                deleting: []
            ) { result in done(try? result.get().saveResults.count) }
        }
        #expect(modified == 1)

        let deleted: String? = await self.await { done in db.delete(withSubscriptionID: "notes") { id, _ in done(id) } }
        #expect(deleted == "notes")
        let remaining = try await db.allSubscriptions().map(\.subscriptionID)
        #expect(remaining == ["tasks"])
    }

    @Test func containerCompletionHandlers() async throws {
        let status: AccountStatus = await self.await { done in store.container.accountStatus { status, _ in done(status) } }
        #expect(status == .available)
        let id: Record.ID? = await self.await { done in store.container.fetchUserRecordID { id, _ in done(id) } }
        #expect(id == (try await store.container.userRecordID()))
        let nobody = try store.container(user: nil)
        let failure: FogError.Code? = await self.await { done in
            nobody.fetchUserRecordID { id, error in done((error as? FogError)?.code) }
        }
        #expect(failure == .notAuthenticated)
    }

    @Test func partialErrorsReadTheCloudKitWay() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z"))
        let good = Record(recordType: "Note", recordID: Record.ID(recordName: "good", zoneID: zone.zoneID))
        let bad = Record(recordType: "Note", recordID: Record.ID(recordName: "_bad", zoneID: zone.zoneID))
        do {
            _ = try await db.modifyRecords(saving: [good, bad], deleting: [])
            Issue.record("an atomic batch with a bad name must fail")
        } catch let error as FogError {
            #expect(error.code == .partialFailure)
            let byID = try #require(error.userInfo[PartialErrorsByItemIDKey] as? [Record.ID: any Error])
            #expect((byID[bad.recordID] as? FogError)?.code == .invalidArguments)
            #expect((byID[good.recordID] as? FogError)?.code == .batchRequestFailed)
            #expect((error as NSError).domain == ErrorDomain)
        }
    }

    @Test func conflictRecordsAndRetryDelayAreInTheUserInfo() async throws {
        let first = try await db.save(Record(recordType: "Note", recordID: Record.ID(recordName: "c")))
        let stale = Record(recordType: "Note", recordID: first.recordID)
        do {
            _ = try await db.save(stale)
            Issue.record("saving over an existing record without its tag must conflict")
        } catch let error as FogError {
            #expect(error.code == .serverRecordChanged)
            #expect((error.userInfo[RecordChangedErrorServerRecordKey] as? Record)?.recordChangeTag == first.recordChangeTag)
            #expect(error.userInfo[RecordChangedErrorClientRecordKey] as? Record === stale)
        }
        let throttled = FogError(.requestRateLimited, userInfo: [ErrorRetryAfterKey: 2.5 as NSNumber])
        #expect(throttled.retryAfterSeconds == 2.5)
        #expect(throttled.userInfo[ErrorRetryAfterKey] as? Double == 2.5)
    }

    @Test func identifiersArchiveWithNSKeyedArchiver() throws {
        let zoneID = RecordZone.ID(zoneName: "Notes", ownerName: "_owner")
        let recordID = Record.ID(recordName: "n1", zoneID: zoneID)
        let data = try NSKeyedArchiver.archivedData(withRootObject: recordID.archive, requiringSecureCoding: true)
        #expect(try NSKeyedUnarchiver.unarchivedObject(ofClass: Record.ID.Archive.self, from: data)?.recordID == recordID)

        let zoneData = try NSKeyedArchiver.archivedData(withRootObject: zoneID.archive, requiringSecureCoding: true)
        #expect(try NSKeyedUnarchiver.unarchivedObject(ofClass: RecordZone.ID.Archive.self, from: zoneData)?.zoneID == zoneID)

        let reference = Record.Reference(recordID: recordID, action: .deleteSelf)
        let refData = try NSKeyedArchiver.archivedData(withRootObject: reference.archive, requiringSecureCoding: true)
        #expect(try NSKeyedUnarchiver.unarchivedObject(ofClass: Record.Reference.Archive.self, from: refData)?.reference == reference)

        // Bytes that are not an archive give an error, never an ID. (Foundation on Linux
        // stops the process for an archive of another class, so that is not tried here.)
        #expect(throws: (any Error).self) {
            try NSKeyedUnarchiver.unarchivedObject(ofClass: Record.ID.Archive.self, from: Data("not an archive".utf8))
        }
    }

    @Test func identifiersAreCodable() throws {
        let reference = Record.Reference(
            recordID: Record.ID(recordName: "n1", zoneID: RecordZone.ID(zoneName: "Notes")), action: .none)
        let data = try JSONEncoder().encode(reference)
        #expect(try JSONDecoder().decode(Record.Reference.self, from: data) == reference)
        let zoneData = try JSONEncoder().encode(reference.recordID.zoneID)
        #expect(try JSONDecoder().decode(RecordZone.ID.self, from: zoneData) == reference.recordID.zoneID)
    }
}

/// `CKRecord` is an `NSObject`: equal only to itself, usable in sets, copyable.
@Suite struct RecordIdentityTests {
    @Test func recordsCompareByIdentityAndCopy() {
        let a = Record(recordType: "Note", recordID: Record.ID(recordName: "n"))
        a["title"] = "x"
        let b = a.copy()
        #expect(a == a)
        #expect(a != b)
        #expect(b.recordID == a.recordID && b["title"] as? String == "x")
        let set: Set<Record> = [a, b, a]
        #expect(set.count == 2)
    }
}

/// `Container(identifier:)` and `Container.default()` open a store in a default folder.
@Suite struct DefaultContainerTests {
    @Test func theDefaultFolderFollowsTheEnvironment() {
        let directory = Container.defaultDirectory(forIdentifier: "iCloud.com.example/notes")
        #expect(directory.lastPathComponent == "iCloud.com.example_notes")
        if let root = ProcessInfo.processInfo.environment[Container.storeDirectoryVariable], !root.isEmpty {
            #expect(directory.deletingLastPathComponent().path == URL(fileURLWithPath: root).path)
        } else {
            #expect(directory.path.contains("fogkit"))
        }
        #expect(Container.defaultIdentifier.hasPrefix("iCloud.") || ProcessInfo.processInfo.environment[Container.containerVariable] != nil)
    }

    @Test func containerByIdentifierOpensTheDefaultFolder() async throws {
        // The process's own environment decides the folder; this test sets none, so it
        // opens under the variable when CI sets it and under the home folder otherwise,
        // in a fresh identifier it removes afterwards.
        let identifier = "iCloud.fogkit.test.\(UUID().uuidString)"
        let container = Container(identifier: identifier)
        defer {
            container.close()
            try? FileManager.default.removeItem(at: Container.defaultDirectory(forIdentifier: identifier))
        }
        #expect(container.directory == Container.defaultDirectory(forIdentifier: identifier))
        #expect(container.userIdentity == Container.signedInUser)
        let saved = try await container.privateCloudDatabase.save(Record(recordType: "Note"))
        #expect(try await container.privateCloudDatabase.record(for: saved.recordID).recordType == "Note")
    }
}
