import FogKit
import FogKitTesting
import Foundation
import Testing

/// Caller-supplied blobs have documented size limits and fail with `limitExceeded` above
/// them, before anything is stored or decoded (`Docs/Reliability.md`, "Bad input").
@Suite struct BlobLimitTests {
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    /// Runs a modify operation and returns its final result and the per-record results.
    private func modify(_ records: [Record], clientChangeTokenData: Data?) async -> (Result<Void, any Error>, Int) {
        let operation = ModifyRecordsOperation(recordsToSave: records, recordIDsToDelete: nil)
        operation.clientChangeTokenData = clientChangeTokenData
        let final = Locked<Result<Void, any Error>?>(nil)
        let saved = Locked<Int>(0)
        operation.perRecordSaveBlock = { _, result in if case .success = result { saved.mutate { $0 += 1 } } }
        operation.modifyRecordsResultBlock = { result in final.mutate { $0 = result } }
        await db.run(operation)
        return (final.value ?? .failure(FogError(.internalError, message: "no result")), saved.value)
    }

    @Test func clientChangeTokenDataAboveTheLimitFailsTheOperationWithLimitExceededAndStoresNothing() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        let limit = ModifyRecordsOperation.maximumClientChangeTokenDataSize
        #expect(limit == 65_536)
        for size in [limit + 1, 50_000_000] {
            let record = SampleRecords.note("over\(size)", in: zone, value: 1)
            let (result, saved) = await modify([record], clientChangeTokenData: Data(repeating: 7, count: size))
            #expect(fogCode(result.failureError) == .limitExceeded, "\(size) bytes")
            #expect(saved == 0)
            await expectNotStored(record.recordID, in: db)
        }
        // At the limit: stored and echoed by the zone's change feed.
        let token = Data((0..<limit).map { UInt8(truncatingIfNeeded: $0) })
        let (result, saved) = await modify([SampleRecords.note("at", in: zone, value: 1)], clientChangeTokenData: token)
        #expect(result.succeeded)
        #expect(saved == 1)
        let echoed = Locked<Data?>(nil)
        let fetch = FetchRecordZoneChangesOperation(recordZoneIDs: [zone], configurationsByRecordZoneID: [:])
        fetch.recordZoneFetchResultBlock = { _, result in echoed.mutate { $0 = try? result.get().clientChangeTokenData } }
        await db.run(fetch)
        #expect(echoed.value == token)
    }

    @Test func changeTokensLargerThanAnyFogKitMakesAreLimitExceededBeforeDecoding() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Z")).zoneID
        try await db.save(SampleRecords.note("n", in: zone, value: 1))
        let real = try await db.recordZoneChanges(inZoneWith: zone, since: nil).changeToken
        let database = try await db.databaseChanges(since: nil).changeToken
        #expect(real.data.count <= 1_024 && database.data.count <= 1_024)
        for size in [1_025, 50_000_000] {
            let big = ServerChangeToken(data: real.data + Data(repeating: 0, count: size - real.data.count))
            await expectFogError(.limitExceeded, "zone token of \(size) bytes") {
                try await db.recordZoneChanges(inZoneWith: zone, since: big)
            }
            await expectFogError(.limitExceeded, "database token of \(size) bytes") { try await db.databaseChanges(since: big) }
        }
        // Up to the limit, bytes that are not a token stay invalidArguments.
        await expectFogError(.invalidArguments) {
            try await db.recordZoneChanges(inZoneWith: zone, since: ServerChangeToken(data: Data(repeating: 1, count: 1_024)))
        }
    }
}
