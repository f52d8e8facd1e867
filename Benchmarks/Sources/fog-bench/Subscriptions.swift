import FogKit
import Foundation
import Synchronization

// fog-bench subscriptions: the cost of subscriptions on the write path and the delivery
// latency of notifications (Docs/Subscriptions.md, Docs/Performance.md).
//
// - insert-none / insert-10k-other: W1's insert (records in requests of 100) into a fresh store
//   without subscriptions, then with 10,000 query subscriptions that never match (5,000 on
//   other record types, 5,000 on the inserted type with an `author ==` value no record has).
// - insert-100-matching: the same insert with 100 subscriptions that match every record: the
//   cost per saved record of writing 100 notifications.
// - latency: one record per request, a listener waiting; time from the save call to the
//   listener's receipt, p50 and p99.

/// One store, one user; `subscriptions` saved before `records` Post records are inserted.
private func insertRun(
    records: Int, durability: Container.Durability, subscriptions: [Subscription]
) async throws -> (seconds: Double, notifications: Int) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fog-bench-subs-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let container = try Container(
        identifier: "iCloud.fog.bench", directory: directory, user: "bench", configuration: .init(durability: durability))
    defer { container.close() }
    let database = container.privateCloudDatabase
    let zone = try await database.save(RecordZone(zoneName: "Posts")).zoneID
    // The record type and its fields exist before the subscriptions name them.
    let first = Record(recordType: "Post", recordID: Record.ID(recordName: "seed", zoneID: zone))
    first["author"] = "author-0"
    first["score"] = 0
    try await database.save(first)
    for start in stride(from: 0, to: subscriptions.count, by: 400) {
        let (saves, _) = try await database.modifySubscriptions(
            saving: Array(subscriptions[start..<min(start + 400, subscriptions.count)]), deleting: [])
        for result in saves.values { _ = try result.get() }
    }
    let begin = ContinuousClock.now
    for b in stride(from: 0, to: records, by: 100) {
        let batch = (b..<min(b + 100, records)).map { i -> Record in
            let record = Record(recordType: "Post", recordID: Record.ID(recordName: "p\(i)", zoneID: zone))
            record["title"] = "A title of about thirty characters"
            record["body"] = String(repeating: "body text ", count: 20)
            record["score"] = i
            record["author"] = "author-\(i % 1000)"
            return record
        }
        _ = try await database.modifyRecords(saving: batch, deleting: [])
    }
    let elapsed = ContinuousClock.now - begin
    var count = 0
    if !subscriptions.isEmpty {
        let sequence = try container.notifications(listener: "count")
        let task = Task {
            var n = 0
            for try await _ in sequence { n += 1 }
            return n
        }
        try await Task.sleep(for: .seconds(1))
        task.cancel()
        count = try await task.value
    }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return (seconds, count)
}

func subscriptionBenchmarks(durability: Container.Durability, records: Int, rounds: Int) async throws {
    print("# subscriptions: \(records) records in requests of 100, durability \(durability), median of \(rounds) rounds")
    var other: [Subscription] = []
    for i in 0..<5_000 {
        other.append(
            QuerySubscription(recordType: "Other\(i % 50)", predicate: QueryPredicate(value: true), subscriptionID: "type-\(i)"))
        other.append(
            QuerySubscription(
                recordType: "Post", predicate: try QueryPredicate(format: "author == %@", "ghost-\(i)"), subscriptionID: "value-\(i)"))
    }
    let matching: [Subscription] = (0..<100).map {
        QuerySubscription(recordType: "Post", predicate: QueryPredicate(value: true), subscriptionID: "all-\($0)")
    }
    var none: [Double] = [], tenK: [Double] = [], hundred: [Double] = []
    var notified = 0
    for _ in 0..<rounds {
        none.append(try await insertRun(records: records, durability: durability, subscriptions: []).seconds)
        tenK.append(try await insertRun(records: records, durability: durability, subscriptions: other).seconds)
        let run = try await insertRun(records: records, durability: durability, subscriptions: matching)
        hundred.append(run.seconds)
        notified = run.notifications
    }
    let median = { (values: [Double]) in values.sorted()[values.count / 2] }
    let rate = { (values: [Double]) in Double(records) / median(values) }
    report("insert-none", operations: records, seconds: median(none), cpu: 0, check: records)
    report("insert-10k-other", operations: records, seconds: median(tenK), cpu: 0, check: records)
    report("insert-100-matching", operations: records, seconds: median(hundred), cpu: 0, check: notified)
    print(String(format: "# 10,000 non-matching subscriptions keep %.1f%% of the insert rate", 100 * rate(tenK) / rate(none)))
    print(
        String(
            format: "# 100 matching subscriptions: %.1f µs per saved record (%.1f µs without), %.2f µs per notification",
            1e6 * median(hundred) / Double(records), 1e6 * median(none) / Double(records),
            1e6 * (median(hundred) - median(none)) / Double(records * 100)))
    try await deliveryLatency(durability: durability, saves: 1_000)
}

/// Saves one record per request with a listener waiting; prints p50 and p99 of the time from
/// the save call to the listener's receipt.
func deliveryLatency(durability: Container.Durability, saves: Int) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fog-bench-subs-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let container = try Container(
        identifier: "iCloud.fog.bench", directory: directory, user: "bench", configuration: .init(durability: durability))
    defer { container.close() }
    let database = container.privateCloudDatabase
    try await database.save(QuerySubscription(recordType: "Post", predicate: QueryPredicate(value: true), subscriptionID: "posts"))
    let (arrivals, continuation) = AsyncStream<ContinuousClock.Instant>.makeStream()
    let sequence = try container.notifications(listener: "latency")
    let listener = Task {
        for try await _ in sequence { continuation.yield(ContinuousClock.now) }
    }
    var iterator = arrivals.makeAsyncIterator()
    var latencies: [Double] = []
    for i in 0..<saves {
        let record = Record(recordType: "Post", recordID: Record.ID(recordName: "l\(i)"))
        record["title"] = "latency"
        let start = ContinuousClock.now
        try await database.save(record)
        guard let arrived = await iterator.next() else { break }
        let d = arrived - start
        latencies.append(Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12)
    }
    listener.cancel()
    latencies.sort()
    let p = { (q: Double) in latencies[min(latencies.count - 1, Int(q * Double(latencies.count)))] }
    print(
        String(format: "# delivery latency, save call to listener (%d saves): p50 %.0f µs, p99 %.0f µs", latencies.count, p(0.5), p(0.99)))
}
