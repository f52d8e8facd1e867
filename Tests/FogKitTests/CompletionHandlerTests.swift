import FogKit
import FogKitTesting
import Synchronization
import Testing

/// CloudKit's completion-handler convenience methods that `PortingTests` does not reach:
/// each one must hand its handler what its `async` twin returns, exactly once.
@Suite struct CompletionHandlerTests {
    let store: TestStore
    var db: Database { store.privateDatabase }
    static let zone = RecordZone.ID(zoneName: "Notes")

    init() throws { store = try TestStore() }

    /// Waits for a completion handler's call and records how many calls arrived.
    private func await<T: Sendable>(_ start: (@escaping @Sendable (T) -> Void) -> Void) async -> T {
        let calls = Mutex(0)
        let value: T = await withCheckedContinuation { continuation in
            start { value in
                if calls.withLock({
                    $0 += 1
                    return $0
                }) == 1 {
                    continuation.resume(returning: value)
                }
            }
        }
        // A second call would arrive from the same task right after the first.
        try? await Task.sleep(for: .milliseconds(20))
        #expect(calls.withLock { $0 } == 1, "a completion handler is called exactly once")
        return value
    }

    /// The code of a failed result, or `nil` for a success or no result.
    static func code<T>(of result: Result<T, any Error>?) -> FogError.Code? {
        guard case .failure(let error) = result else { return nil }
        return (error as? FogError)?.code
    }

    private func note(_ name: String, _ title: String, zone: RecordZone.ID = .default) -> Record {
        let record = Record(recordType: "Note", recordID: Record.ID(recordName: name, zoneID: zone))
        record["title"] = title
        return record
    }

    @Test func fetchManyRecordsGivesEachIDItsResult() async throws {
        let saved = try await db.save(note("a", "Alpha"))
        let missing = Record.ID(recordName: "missing")
        let result = await self.await { done in
            db.fetch(withRecordIDs: [saved.recordID, missing], desiredKeys: ["title"]) { done($0) }
        }
        let byID = try result.get()
        #expect(try byID[saved.recordID]?.get()["title"] as? String == "Alpha")
        #expect(Self.code(of: byID[missing]) == .unknownItem)
    }

    @Test func modifyRecordsReportsSavesAndDeletes() async throws {
        let old = try await db.save(note("old", "Old"))
        let result = await self.await { done in
            db.modifyRecords(saving: [note("new", "New")], deleting: [old.recordID], savePolicy: .ifServerRecordUnchanged, atomically: true)
            {
                done($0)
            }
        }
        let (saves, deletes) = try result.get()
        #expect(try saves[Record.ID(recordName: "new")]?.get().recordChangeTag != nil)
        #expect(throws: Never.self) { try deletes[old.recordID]?.get() }
        do {
            _ = try await db.record(for: old.recordID)
            Issue.record("the deleted record is still there")
        } catch {
            #expect((error as? FogError)?.code == .unknownItem)
        }

        // A stale change tag fails the atomic batch; the handler gets the partial failure, with
        // the record's own error by its ID, as the `async` form throws it.
        let stale = note("new", "Stale")
        let failed = await self.await { done in
            db.modifyRecords(saving: [stale], deleting: []) { done($0) }
        }
        guard case .failure(let error as FogError) = failed else {
            Issue.record("a stale save must fail")
            return
        }
        #expect(error.code == .partialFailure)
        #expect((error.partialErrorsByItemID?[stale.recordID] as? FogError)?.code == .serverRecordChanged)
    }

    @Test func queryCursorPagesThroughCompletionHandlers() async throws {
        _ = try await db.save(RecordZone(zoneID: Self.zone))
        for index in 0..<7 { _ = try await db.save(note("n\(index)", "Title \(index)", zone: Self.zone)) }
        let query = Query(recordType: "Note", predicate: QueryPredicate(value: true))
        query.sortDescriptors = [Query.SortDescriptor(key: "title")]
        var titles: [String] = []
        var page = try await self.await { done in
            db.fetch(withQuery: query, inZoneWith: Self.zone, desiredKeys: ["title"], resultsLimit: 3) { done($0) }
        }.get()
        titles += try page.matchResults.map { try $0.1.get()["title"] as? String ?? "" }
        while let cursor = page.queryCursor {
            page = try await self.await { done in db.fetch(withCursor: cursor, desiredKeys: ["title"], resultsLimit: 3) { done($0) } }.get()
            titles += try page.matchResults.map { try $0.1.get()["title"] as? String ?? "" }
        }
        #expect(titles == (0..<7).map { "Title \($0)" })
    }

    @Test @available(*, deprecated) func deprecatedPerformReturnsTheRecords() async throws {
        _ = try await db.save(RecordZone(zoneID: Self.zone))
        _ = try await db.save(note("p", "Performed", zone: Self.zone))
        let query = Query(recordType: "Note", predicate: QueryPredicate(value: true))
        let records: [Record]? = await self.await { done in db.perform(query, inZoneWith: Self.zone) { records, _ in done(records) } }
        #expect(records?.map(\.recordID.recordName) == ["p"])
        let viaAsync = try await db.perform(query, inZoneWith: Self.zone)
        #expect(viaAsync.map(\.recordID.recordName) == ["p"])
    }

    @Test func zoneMethods() async throws {
        let saved: RecordZone? = await self.await { done in db.save(RecordZone(zoneID: Self.zone)) { zone, _ in done(zone) } }
        #expect(saved?.zoneID == Self.zone)
        let fetched: RecordZone? = await self.await { done in db.fetch(withRecordZoneID: Self.zone) { zone, _ in done(zone) } }
        #expect(fetched?.zoneID == Self.zone)

        let other = RecordZone.ID(zoneName: "Other")
        let many = try await self.await { done in db.fetch(withRecordZoneIDs: [Self.zone, other]) { done($0) } }.get()
        #expect(try many[Self.zone]?.get().zoneID == Self.zone)
        #expect(Self.code(of: many[other]) == .zoneNotFound)

        let modified = try await self.await { done in
            db.modifyRecordZones(saving: [RecordZone(zoneID: other)], deleting: [Self.zone]) { done($0) }
        }.get()
        #expect(try modified.saveResults[other]?.get().zoneID == other)
        #expect(throws: Never.self) { try modified.deleteResults[Self.zone]?.get() }

        let deleted: RecordZone.ID? = await self.await { done in db.delete(withRecordZoneID: other) { id, _ in done(id) } }
        #expect(deleted == other)
        let gone: FogError.Code? = await self.await { done in
            db.fetch(withRecordZoneID: other) { zone, error in done((error as? FogError)?.code) }
        }
        #expect(gone == .zoneNotFound)
    }

    @Test func changeFeeds() async throws {
        _ = try await db.save(RecordZone(zoneID: Self.zone))
        _ = try await db.save(note("c1", "One", zone: Self.zone))
        let zones = try await self.await { done in db.fetchDatabaseChanges(since: nil) { done($0) } }.get()
        #expect(zones.modifications.map(\.zoneID) == [Self.zone])
        #expect(zones.deletions.isEmpty && !zones.moreComing)

        let first = try await self.await { done in
            db.fetchRecordZoneChanges(inZoneWith: Self.zone, since: nil, desiredKeys: ["title"]) { done($0) }
        }.get()
        #expect(
            try first.modificationResultsByID[Record.ID(recordName: "c1", zoneID: Self.zone)]?.get().record["title"] as? String == "One")

        try await db.deleteRecord(withID: Record.ID(recordName: "c1", zoneID: Self.zone))
        let next = try await self.await { done in
            db.fetchRecordZoneChanges(inZoneWith: Self.zone, since: first.changeToken) { done($0) }
        }.get()
        #expect(next.modificationResultsByID.isEmpty)
        #expect(next.deletions.map(\.recordID.recordName) == ["c1"])

        let unchanged = try await self.await { done in db.fetchDatabaseChanges(since: zones.changeToken, resultsLimit: 10) { done($0) } }
            .get()
        #expect(unchanged.modifications.map(\.zoneID) == [Self.zone], "the record change touched the zone")
    }
}
