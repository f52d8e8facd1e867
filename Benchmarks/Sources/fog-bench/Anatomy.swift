import BenchData
import FogKit
import Foundation

/// `anatomy`: where the time of a batched fetch goes, through the public API: 100,000
/// records fetched 400 per request, with no fields, with all fields, and with all fields
/// read by the caller; then one per request.
func fetchAnatomy() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fog-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let container = try Container(
        identifier: "iCloud.fog.bench", directory: directory, user: "bench", configuration: .init(durability: .none))
    defer { container.close() }
    let database = container.privateCloudDatabase
    let zone = try await database.save(RecordZone(zoneName: "Posts")).zoneID
    var ids: [Record.ID] = []
    for b in 0..<250 {
        let records = (0..<400).map { i -> Record in
            let record = Record(recordType: "Post", recordID: Record.ID(recordName: UUID().uuidString, zoneID: zone))
            record["title"] = String(repeating: "t", count: 30)
            record["body"] = String(repeating: "b", count: 200)
            record["score"] = b * 400 + i
            record["createdAt"] = Date()
            record["tags"] = ["t1", "t22", "t33"]
            record["author"] = UUID().uuidString
            return record
        }
        ids += records.map(\.recordID)
        _ = try await database.modifyRecords(saving: records, deleting: [])
    }
    var r = BenchRandom(2)
    let batches = (0..<250).map { _ in (0..<400).map { _ in ids[r.below(ids.count)] } }
    func time(_ name: String, _ body: ([Record.ID]) async throws -> Void) async throws {
        let t0 = Date()
        for batch in batches { try await body(batch) }
        let dt = Date().timeIntervalSince(t0)
        print(String(format: "%-28@ %8.0f records/s  %.2f µs/record", name as NSString, 100_000 / dt, dt * 10))
    }
    for _ in 0..<2 {
        try await time("records(for:) no fields") { _ = try await database.records(for: $0, desiredKeys: []) }
        try await time("records(for:) title") { _ = try await database.records(for: $0, desiredKeys: ["title"]) }
        try await time("records(for:) all fields") { _ = try await database.records(for: $0) }
        try await time("all fields, looked up by ID") { batch in
            let results = try await database.records(for: batch)
            for id in batch { _ = try results[id]!.get() }
        }
        try await time("all fields, each read") { batch in
            let results = try await database.records(for: batch)
            for id in batch {
                let record = try results[id]!.get()
                for key in ["title", "body", "score", "createdAt", "tags", "author"] { _ = record.fieldValue(forKey: key) }
            }
        }
        try await time("record(for:), one a request") { batch in
            for id in batch { _ = try await database.record(for: id) }
        }
        try await time("record(for:), each field read") { batch in
            for id in batch {
                let record = try await database.record(for: id)
                for key in ["title", "body", "score", "createdAt", "tags", "author"] { _ = record.fieldValue(forKey: key) }
            }
        }
    }
}
