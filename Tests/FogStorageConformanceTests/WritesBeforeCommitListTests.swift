import FogKitTesting
import FogStorage
import Testing

/// `WritesBeforeCommit` against a model (an ordered list of (key, work) where a registration
/// removes its key's entry and appends): the works run, their order, replacement, many keys,
/// and a work that throws.
@Suite struct WritesBeforeCommitListTests {
    /// The model: each held work's key and id, in run order.
    struct Model {
        var entries: [(key: [UInt8], id: Int)] = []
        mutating func add(_ key: [UInt8], _ id: Int) {
            entries.removeAll { $0.key == key }
            entries.append((key, id))
        }
    }

    /// Random registrations over a small key space (mostly replacements) or a large one
    /// (mostly new keys, past the linear search), with runs in between: every run executes
    /// exactly the model's works in the model's order.
    @Test(arguments: 1...12) func registrationsAndRunsFollowTheModel(seed: Int) throws {
        var random = SplitMix64(seed: UInt64(seed))
        let keySpace = seed % 3 == 0 ? 4 : seed % 3 == 1 ? 60 : 5_000
        let list = WritesBeforeCommit<Int>()
        var model = Model()
        let ran = Ran()
        for id in 0..<4_000 {
            let k = Int(random.next() % UInt64(keySpace))
            let key = [UInt8(k >> 8), UInt8(k & 0xFF)]
            list.add(key: key) { _ in ran.ids.append(id) }
            model.add(key, id)
            #expect(list.count == model.entries.count)
            if random.next() % 97 == 0 || id == 3_999 {
                ran.ids = []
                try list.run(in: 0)
                #expect(ran.ids == model.entries.map(\.id), "seed \(seed), after registration \(id)")
                model.entries = []
                #expect(list.isEmpty)
            }
        }
    }

    /// A work that throws stops the run; it and the works after it stay held, ahead of the
    /// works registered after the failure, and a later registration under a held key still
    /// replaces it.
    @Test func aWorkThatThrowsStaysHeldWithTheWorksAfterIt() throws {
        let list = WritesBeforeCommit<Int>()
        let ran = Ran()
        var failures = 1
        list.add(key: [1]) { _ in ran.ids.append(1) }
        list.add(key: [2]) { _ in
            if failures > 0 {
                failures -= 1
                throw Planned()
            }
            ran.ids.append(2)
        }
        list.add(key: [3]) { _ in ran.ids.append(3) }
        #expect(throws: Planned.self) { try list.run(in: 0) }
        #expect(ran.ids == [1])
        #expect(list.count == 2)
        list.add(key: [4]) { _ in ran.ids.append(4) }
        list.add(key: [3]) { _ in ran.ids.append(30) }
        try list.run(in: 0)
        #expect(ran.ids == [1, 2, 4, 30])
        #expect(list.isEmpty)
    }

    /// A work registered while the list runs runs in the same call, after the others.
    @Test func aWorkRegisteredWhileRunningRunsToo() throws {
        let list = WritesBeforeCommit<Int>()
        let ran = Ran()
        list.add(key: [1]) { _ in
            ran.ids.append(1)
            list.add(key: [2]) { _ in ran.ids.append(2) }
        }
        try list.run(in: 0)
        #expect(ran.ids == [1, 2])
        #expect(list.isEmpty)
    }
}

/// The ids of the works that ran, in order.
private final class Ran {
    var ids: [Int] = []
}
