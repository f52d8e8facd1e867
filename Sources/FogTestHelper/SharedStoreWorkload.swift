import FogKit
import FogStoragePostgres
import Foundation

/// `FogTestHelper shared-store <postgres-url> <process> <rounds>`: one of several processes
/// sharing a PostgreSQL store (container `iCloud.fog.shared`, user `alice`, zone `Shared`
/// with record `counter` already saved by the test). Each round:
///
/// - adds 1 to `counter`'s `value` by a save that checks the change tag, retrying on
///   `serverRecordChanged`, so an increment another process made in between is never lost;
/// - saves `p<process>-r<round>-a|b|c` atomically; every fourth round adds `counter` with a
///   stale change tag, so that batch fails whole and none of its records is written.
///
/// Then, as user `mallory`, it tries to change alice's public record `board` (refused: only
/// its creator may write it). Finally it reads the zone's change feed from the start, page by
/// page, and prints `feed <name>…` (every record name it delivered, in order), then `done`.
func sharedStoreWorkload(url: String, process: String, rounds: Int) async throws {
    let location = try StoreLocation.postgres(url)
    let container = try Container(identifier: "iCloud.fog.shared", store: location, user: "alice")
    defer { container.close() }
    let db = container.privateCloudDatabase
    let zone = RecordZone.ID(zoneName: "Shared")
    let counterID = Record.ID(recordName: "counter", zoneID: zone)
    var conflicts = 0
    for round in 0..<rounds {
        while true {
            let counter = try await db.record(for: counterID)
            counter["value"] = (counter["value"] as? Int ?? 0) + 1
            do {
                _ = try await db.modifyRecords(saving: [counter], deleting: [], savePolicy: .ifServerRecordUnchanged)
                break
            } catch let error as FogError where error.code == .partialFailure {
                let item = error.partialErrorsByItemID?[counterID] as? FogError
                guard item?.code == .serverRecordChanged else { throw error }
                conflicts += 1
            }
        }
        var batch = ["a", "b", "c"].map { suffix -> Record in
            let record = Record(recordType: "Item", recordID: Record.ID(recordName: "p\(process)-r\(round)-\(suffix)", zoneID: zone))
            record["round"] = round
            return record
        }
        let failing = round % 4 == 3
        if failing {
            // A copy of the counter as it was at the start: its tag is stale by now.
            let stale = Record(recordType: "Counter", recordID: counterID)
            stale["value"] = -1
            batch.append(stale)
        }
        do {
            _ = try await db.modifyRecords(saving: batch, deleting: [], savePolicy: .ifServerRecordUnchanged)
            guard !failing else { throw FogError(.internalError, message: "a batch with a stale tag was saved") }
        } catch let error as FogError where error.code == .partialFailure && failing {
            // Expected: the whole batch failed.
        }
    }
    print("increments \(rounds) conflicts \(conflicts)")

    let mallory = try Container(identifier: "iCloud.fog.shared", store: location, user: "mallory")
    defer { mallory.close() }
    let board = try await mallory.publicCloudDatabase.record(for: Record.ID(recordName: "board"))
    board["title"] = "defaced"
    do {
        try await mallory.publicCloudDatabase.save(board)
        print("role-check saved")
    } catch let error as FogError {
        print("role-check \(error.code)")
    }

    var token: ServerChangeToken? = nil
    var names: [String] = []
    while true {
        let page = try await db.recordZoneChanges(inZoneWith: zone, since: token, resultsLimit: 50)
        names += page.modificationResultsByID.keys.map(\.recordName).sorted()
        token = page.changeToken
        if !page.moreComing { break }
    }
    print("feed " + names.joined(separator: " "))
    print("done")
}
