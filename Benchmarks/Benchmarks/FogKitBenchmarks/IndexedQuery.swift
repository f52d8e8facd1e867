import Benchmark
import FogKit

/// A query that an index answers: `score BETWEEN {a, a + 10,000}` sorted by score, on 10,000
/// posts whose scores spread over 0..<1,000,000 (about 100 matches), every field fetched.
func indexedQueryBenchmarks() {
    postStoreBenchmark(
        "query: score BETWEEN (~100 of 10,000 posts), sorted by score",
        prepare: { store -> Query in
            try await store.container.setIndexes(["score": [.queryable, .sortable]], ofRecordType: "Post")
            try await store.load(10_000)
            let query = Query(recordType: "Post", predicate: try QueryPredicate(format: "score BETWEEN %@", [400_000, 410_000]))
            query.sortDescriptors = [Query.SortDescriptor(key: "score", ascending: true)]
            let plan = try store.database.explain(query, inZoneWith: store.zone, resultsLimit: 1_000)
            precondition(!plan.scansRecordType && plan.indexProvidesOrder, "the score index should answer the query:\n\(plan)")
            let (matches, cursor) = try await store.database.records(matching: query, inZoneWith: store.zone, resultsLimit: 1_000)
            precondition(!matches.isEmpty && cursor == nil, "the query should match about 100 posts, in one page")
            return query
        }
    ) { benchmark, store, query in
        for _ in benchmark.scaledIterations {
            blackHole(try await store.database.records(matching: query, inZoneWith: store.zone, resultsLimit: 1_000))
        }
    }
}
