import FogKit
import Foundation

/// `changes`: fetching 10,000 changes (8,000 saves of new or changed records and 2,000
/// deletions) since a token, in pages of 400, from a zone of 20,000 records; then the whole
/// feed from the start, whose range holds the stale entries of the records changed since.
func changeFeed(rounds: Int) async throws {
    print("# change feed: 20,000 records, then 10,000 changes after a token; fetch them in pages of 400; \(rounds) rounds")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fog-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let container = try Container(
        identifier: "iCloud.fog.bench", directory: directory, user: "bench", configuration: .init(durability: .none, limits: .bulkLoad))
    defer { container.close() }
    let database = container.privateCloudDatabase
    let zone = try await database.save(RecordZone(zoneName: "Feed")).zoneID
    func post(_ i: Int, score: Int) -> Record {
        let record = Record(recordType: "Post", recordID: Record.ID(recordName: "post-\(i)", zoneID: zone))
        record["title"] = "A title of about thirty characters"
        record["body"] = String(repeating: "lorem ipsum ", count: 16)
        record["score"] = score
        return record
    }
    for batch in stride(from: 0, to: 20_000, by: 400) {
        _ = try await database.modifyRecords(saving: (batch..<batch + 400).map { post($0, score: $0) }, deleting: [])
    }
    var token: ServerChangeToken?
    repeat {
        let page = try await database.recordZoneChanges(inZoneWith: zone, since: token)
        token = page.changeToken
        if !page.moreComing { break }
    } while true
    let start = token!
    // 4,000 updates, 4,000 new records, 2,000 deletions.
    for batch in stride(from: 0, to: 4_000, by: 400) {
        _ = try await database.modifyRecords(
            saving: (batch..<batch + 400).map { post($0 * 5, score: -$0) }, deleting: [], savePolicy: .allKeys)
        _ = try await database.modifyRecords(saving: (batch..<batch + 400).map { post(20_000 + $0, score: $0) }, deleting: [])
    }
    for batch in stride(from: 0, to: 2_000, by: 400) {
        _ = try await database.modifyRecords(
            saving: [], deleting: (batch..<batch + 400).map { Record.ID(recordName: "post-\($0 * 5 + 1)", zoneID: zone) })
    }
    // Since the token: 10,000 entries, none stale. From the start: the log's 30,000 entries,
    // of which the 6,000 first entries of the records updated or deleted later are stale.
    for (name, since) in [("changes-10k", start), ("changes-all", nil)] as [(String, ServerChangeToken?)] {
        var best: (seconds: Double, cpu: Double, count: Int)?
        for round in 1...rounds {
            let t0 = Date()
            let c0 = cpuSeconds()
            var count = 0
            var token = since
            while true {
                let page = try await database.recordZoneChanges(inZoneWith: zone, since: token, resultsLimit: 400)
                count += page.modificationResultsByID.count + page.deletions.count
                token = page.changeToken
                if !page.moreComing { break }
            }
            let seconds = Date().timeIntervalSince(t0)
            let cpu = cpuSeconds() - c0
            print("# \(name) round \(round): \(count) changes in \(String(format: "%.4f", seconds)) s")
            if best == nil || seconds < best!.seconds { best = (seconds, cpu, count) }
        }
        report(name, operations: best!.count, seconds: best!.seconds, cpu: best!.cpu, check: best!.count)
    }
}
