import Benchmark
import FogKit

/// `QueryPredicate(format:)` for typical predicates, and the builder making the same ones.
func predicateParsingBenchmarks() {
    let author = "2F1C7A0E-0B5B-4C5E-9A53-3D3C1F6E2A10"
    let tags = ["t7", "t42", "t99"]
    let here = Location(latitude: 37.3349, longitude: -122.0090)

    Benchmark("predicate parse: author == %@ AND score > %@") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try QueryPredicate(format: "author == %@ AND score > %@", author, 500_000))
        }
    }

    Benchmark("predicate parse: ANY tags IN %@") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try QueryPredicate(format: "ANY tags IN %@", tags))
        }
    }

    Benchmark("predicate parse: distanceToLocation:fromLocation:(location, %@) < 5") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try QueryPredicate(format: "distanceToLocation:fromLocation:(location, %@) < 5", here))
        }
    }

    Benchmark("predicate build: field(author) == x && field(score) > n") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try QueryPredicate.field("author") == author && .field("score") > 500_000)
        }
    }

    Benchmark("predicate build: field(tags).containsAny(xs)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try QueryPredicate.field("tags").containsAny(tags))
        }
    }

    Benchmark("predicate build: field(location).distance(from:) < 5") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try QueryPredicate.field("location").distance(from: here) < 5)
        }
    }
}
