import BenchData
import Benchmark
import FogKit
import Foundation

/// Micro-costs of the storage layer and the model layer, through FogKit's public API.
/// Names are stable: they identify baselines. Each group lives in the file named after
/// what it measures:
///
/// - KeyEncoding.swift: tuple key encoding.
/// - RecordCodec.swift: record encode (saving a 6-field post) and decode (fetching it).
/// - PredicateParsing.swift: `QueryPredicate(format:)` and the builder.
/// - SaveAndFetch.swift: one save, 400 saves, one fetch.
/// - IndexedQuery.swift: an indexed, sorted range query on 10,000 records.
/// - GroupCommit.swift: 64 concurrent durable single-record saves.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .instructions],
        maxDuration: .seconds(3))

    keyEncodingBenchmarks()
    recordCodecBenchmarks()
    predicateParsingBenchmarks()
    saveAndFetchBenchmarks()
    indexedQueryBenchmarks()
    groupCommitBenchmarks()
}

/// A container in a temporary directory with durability `.none`.
struct BenchStore {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-bench-\(UUID().uuidString)")
    let container: Container

    init(durability: Container.Durability = .none) throws {
        container = try Container(
            identifier: "iCloud.bench", directory: directory, user: "bench",
            configuration: .init(durability: durability))
    }

    func close() {
        container.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A store of `Post` records in a custom zone, opened once by a benchmark's setup and closed
/// by its teardown, with a generator of posts shaped as fog-bench's reference workloads:
/// title (25–35 characters), body (190–210), score (Int64), createdAt (Date), three tags,
/// author (a UUID-like string).
final class PostStore: @unchecked Sendable {
    let store: BenchStore
    let database: Database
    let zone: RecordZone.ID
    private var random = BenchRandom(42)
    private var serial = 0
    private let authors: [String]

    init(durability: Container.Durability) async throws {
        store = try BenchStore(durability: durability)
        database = store.container.privateCloudDatabase
        zone = try await database.save(RecordZone(zoneName: "Posts")).zoneID
        var r = BenchRandom(7)
        authors = (0..<1_000).map { _ in r.uuid() }
    }

    var container: Container { store.container }

    /// A new post with a fresh record name, not yet saved.
    func makePost() -> Record {
        serial += 1
        let record = Record(recordType: "Post", recordID: Record.ID(recordName: "post-\(serial)", zoneID: zone))
        record["title"] = random.text(25 + random.below(11))
        record["body"] = random.text(190 + random.below(21))
        record["score"] = Int64(random.next() % 1_000_000)
        record["createdAt"] = Date(timeIntervalSince1970: 1_600_000_000 + Double(random.next() % 100_000_000_000) / 1000)
        var tags: [Int] = []
        while tags.count < 3 {
            let v = random.below(100)
            if !tags.contains(v) { tags.append(v) }
        }
        record["tags"] = tags.map { "t\($0)" }
        record["author"] = authors[random.below(authors.count)]
        return record
    }

    /// Saves `count` new posts, 400 per request; returns their IDs.
    @discardableResult
    func load(_ count: Int) async throws -> [Record.ID] {
        var ids: [Record.ID] = []
        for start in stride(from: 0, to: count, by: 400) {
            let records = (start..<min(start + 400, count)).map { _ in makePost() }
            _ = try await database.modifyRecords(saving: records, deleting: [])
            ids += records.map(\.recordID)
        }
        return ids
    }

    func close() { store.close() }
}

/// Holds what a benchmark's setup made, for its body and teardown.
final class Fixture<Value>: @unchecked Sendable {
    var value: Value?
}

/// Registers a benchmark over a `PostStore` that its setup opens (and fills with `prepare`)
/// and its teardown closes; the body runs once per iteration.
func postStoreBenchmark<State>(
    _ name: String, configuration: Benchmark.Configuration = Benchmark.defaultConfiguration,
    durability: Container.Durability = .none,
    prepare: @escaping (PostStore) async throws -> State,
    _ body: @escaping (Benchmark, PostStore, State) async throws -> Void
) {
    let fixture = Fixture<(PostStore, State)>()
    Benchmark(
        name, configuration: configuration,
        closure: { (benchmark: Benchmark) async throws in
            let (store, state) = fixture.value!
            try await body(benchmark, store, state)
        },
        setup: {
            let store = try await PostStore(durability: durability)
            fixture.value = (store, try await prepare(store))
        },
        teardown: {
            fixture.value?.0.close()
            fixture.value = nil
        })
}

