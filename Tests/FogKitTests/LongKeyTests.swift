import FogKit
import FogKitTesting
import Foundation
import Testing

/// Values longer than the storage's key limit (LMDB: 511 bytes per key) in sortable,
/// queryable and searchable fields save, match and sort exactly, in UTF-8 byte order, as a
/// brute-force reference says (`Docs/Reliability.md`, "Bad input"; `Docs/OnDiskFormat.md`).
@Suite struct LongKeyTests {
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    /// Byte counts around the index's kept prefix (400 escaped bytes) and LMDB's key limit.
    static let lengths = [1, 200, 390, 398, 399, 400, 401, 402, 403, 470, 480, 482, 483, 511, 512, 600, 1_000, 5_000]
    /// Pieces of 1, 2, 3 and 4 UTF-8 bytes, and NUL, which the key encoding escapes to 2 bytes.
    static let pieces = ["a", "b", "z", "é", "€", "😀", "\u{0}", "~"]

    /// A string of about `bytes` UTF-8 bytes: one of a few long shared stems, then random pieces.
    static func string(bytes: Int, rng: inout SplitMix64) -> String {
        let stems = ["", String(repeating: "a", count: 395), String(repeating: "é", count: 199), String(repeating: "\u{0}", count: 201)]
        var s = rng.pick(stems)
        if s.utf8.count > bytes { s = String(s.unicodeScalars.prefix(bytes)) }
        while s.utf8.count < bytes { s += rng.pick(pieces) }
        return s
    }

    static func utf8Less(_ a: String, _ b: String) -> Bool { Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) }

    struct Saved {
        let name: String
        let row: Int
        let value: String
        var list: [String] = []
    }

    /// Saves `count` records with a long-ish `s` (sortable, queryable), `list` and `data`.
    func populate(count: Int, seed: UInt64) async throws -> [Saved] {
        try await store.admin.setIndexes(
            ["s": [.queryable, .sortable], "list": [.queryable, .sortable], "data": [.queryable, .sortable], "group": .queryable],
            ofRecordType: "Long")
        var rng = SplitMix64(seed: seed)
        var saved: [Saved] = []
        var batch: [Record] = []
        for i in 0..<count {
            let value = Self.string(bytes: rng.pick(Self.lengths), rng: &rng)
            let record = Record(recordType: "Long", recordID: .init(recordName: "r\(i)"))
            record["s"] = value
            let list = [value, Self.string(bytes: rng.pick(Self.lengths), rng: &rng)]
            record["list"] = list
            record["data"] = Data(value.utf8)
            record["group"] = Int64(i % 3)
            batch.append(record)
            saved.append(Saved(name: "r\(i)", row: i, value: value, list: list))
        }
        // One non-atomic request: every item must save.
        let result = try await db.modifyRecords(saving: batch, deleting: [], savePolicy: .allKeys, atomically: false)
        for (id, outcome) in result.saveResults { #expect(outcome.succeeded, "\(id.recordName): \(outcome)") }
        return saved
    }

    /// Every page of a query, following cursors.
    func all(_ query: Query, pageSize: Int) async throws -> [Record] {
        var page = try await db.records(matching: query, resultsLimit: pageSize)
        var records = try page.matchResults.map { try $0.1.get() }
        while let cursor = page.queryCursor {
            page = try await db.records(continuingMatchFrom: cursor, resultsLimit: pageSize)
            records += try page.matchResults.map { try $0.1.get() }
        }
        return records
    }

    func reference(_ saved: [Saved], where include: (Saved) -> Bool, ascending: Bool) -> [String] {
        saved.filter(include).sorted { a, b in
            if a.value.utf8.elementsEqual(b.value.utf8) { return ascending ? a.row < b.row : a.row > b.row }
            return ascending ? Self.utf8Less(a.value, b.value) : Self.utf8Less(b.value, a.value)
        }.map(\.name)
    }

    @Test func longValuesSaveMatchAndSortExactlyWithCursors() async throws {
        let saved = try await populate(count: 90, seed: 0x10_4E6)
        var rng = SplitMix64(seed: 0xC0FF_EE)
        // Sorting every record (the sort index read in order), both ways, in pages.
        for ascending in [true, false] {
            for pageSize in [1, 4, 7, 100] {
                let query = Query(recordType: "Long", predicate: QueryPredicate(value: true))
                query.sortDescriptors = [.init(key: "s", ascending: ascending)]
                let names = try await all(query, pageSize: pageSize).map(\.recordID.recordName)
                #expect(
                    names == reference(saved, where: { _ in true }, ascending: ascending),
                    "all, ascending \(ascending), pages of \(pageSize)")
            }
        }
        for round in 0..<14 {
            let pivot = rng.chance(0.7) ? rng.pick(saved).value : Self.string(bytes: rng.pick(Self.lengths), rng: &rng)
            let p = Array(pivot.utf8)
            let ascending = rng.chance(0.5)
            let pageSize = rng.pick([2, 5, 50])
            func check(_ predicate: QueryPredicate, _ includeValue: (String) -> Bool, sorted: Bool = true) async throws {
                try await checkRecords(predicate, { includeValue($0.value) }, sorted: sorted)
            }
            func checkRecords(_ predicate: QueryPredicate, _ include: (Saved) -> Bool, sorted: Bool = true) async throws {
                let query = Query(recordType: "Long", predicate: predicate)
                if sorted { query.sortDescriptors = [.init(key: "s", ascending: ascending)] }
                let got = try await all(query, pageSize: pageSize).map(\.recordID.recordName)
                let want = reference(saved, where: include, ascending: ascending)
                if sorted {
                    #expect(got == want, "round \(round): \(predicate), ascending \(ascending), pages of \(pageSize)")
                } else {
                    #expect(Set(got) == Set(want) && got.count == want.count, "round \(round): \(predicate)")
                }
            }
            func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
            try await check(try QueryPredicate(format: "s == %@", pivot), { bytes($0) == p }, sorted: rng.chance(0.5))
            let second = rng.pick(saved).value
            try await check(try QueryPredicate(format: "s IN %@", [pivot, second]), { bytes($0) == p || bytes($0) == bytes(second) })
            try await check(try QueryPredicate(format: "s > %@", pivot), { p.lexicographicallyPrecedes(bytes($0)) })
            try await check(try QueryPredicate(format: "s >= %@", pivot), { !bytes($0).lexicographicallyPrecedes(p) })
            try await check(try QueryPredicate(format: "s < %@", pivot), { bytes($0).lexicographicallyPrecedes(p) })
            try await check(try QueryPredicate(format: "s <= %@", pivot), { !p.lexicographicallyPrecedes(bytes($0)) })
            let other = rng.pick(saved).value
            let (lo, hi) = Self.utf8Less(other, pivot) ? (other, pivot) : (pivot, other)
            try await check(
                try QueryPredicate.field("s").between(lo, hi),
                { !bytes($0).lexicographicallyPrecedes(bytes(lo)) && !bytes(hi).lexicographicallyPrecedes(bytes($0)) })
            // BEGINSWITH with prefixes of every length around the kept prefix.
            let cut = String(pivot.unicodeScalars.prefix(rng.int(0...pivot.unicodeScalars.count)))
            try await check(try QueryPredicate.field("s").beginsWith(cut), { bytes($0).starts(with: bytes(cut)) })
            // An equality on another field, sorted in memory by the long field.
            try await checkRecords(
                try QueryPredicate.field("group") == Int64(1) && .field("s") >= pivot,
                { $0.row % 3 == 1 && !bytes($0.value).lexicographicallyPrecedes(p) })
            // Lists and bytes.
            try await checkRecords(try QueryPredicate.field("list").contains(pivot), { $0.list.contains { bytes($0) == p } })
            try await checkRecords(
                try QueryPredicate.field("list").anyBeginsWith(cut), { $0.list.contains { bytes($0).starts(with: bytes(cut)) } },
                sorted: false)
            let data = try await all(Query(recordType: "Long", predicate: try QueryPredicate.field("data") == Data(p)), pageSize: 10)
            #expect(data.map(\.recordID.recordName).sorted() == saved.filter { bytes($0.value) == p }.map(\.name).sorted())
        }
        #expect(try store.admin.checkIntegrity().problems.isEmpty)
    }

    @Test func listMembershipInANDAndWithLongValues() async throws {
        let saved = try await populate(count: 40, seed: 77)
        for item in saved.prefix(15) {
            let list = try await all(
                Query(recordType: "Long", predicate: try QueryPredicate.field("list").contains(item.value)), pageSize: 9)
            let records = try await db.records(for: list.map(\.recordID))
            for (_, result) in records {
                let values: [String]? = try result.get()["list"]
                #expect(values?.contains { $0.utf8.elementsEqual(item.value.utf8) } == true)
            }
            #expect(list.contains { $0.recordID.recordName == item.name })
            let both = try await all(
                Query(recordType: "Long", predicate: try QueryPredicate.field("group") == Int64(item.row % 3) && .field("s") == item.value),
                pageSize: 3)
            #expect(
                both.map(\.recordID.recordName).sorted()
                    == saved.filter { $0.row % 3 == item.row % 3 && $0.value.utf8.elementsEqual(item.value.utf8) }.map(\.name).sorted())
        }
    }

    @Test func aLongSearchableTokenSavesAndIsFound() async throws {
        try await store.admin.setIndexes(["text": .searchable], ofRecordType: "Doc")
        let stem = String(repeating: "x", count: 700)
        let a = Record(recordType: "Doc", recordID: .init(recordName: "a"))
        a["text"] = "short words and \(stem)alpha"
        let b = Record(recordType: "Doc", recordID: .init(recordName: "b"))
        b["text"] = "other words and \(stem)beta"
        let result = try await db.modifyRecords(saving: [a, b], deleting: [], savePolicy: .allKeys, atomically: false)
        #expect(result.saveResults.values.allSatisfy { $0.succeeded })
        for (text, expected) in [("\(stem)alpha", ["a"]), ("\(stem)beta", ["b"]), ("\(stem)gamma", []), ("words", ["a", "b"])] {
            let query = Query(recordType: "Doc", predicate: try QueryPredicate(format: "self CONTAINS %@", text))
            #expect(try await all(query, pageSize: 5).map(\.recordID.recordName).sorted() == expected, "\(text.suffix(8))")
            let all = Query(recordType: "Doc", predicate: try QueryPredicate(format: "allTokens TOKENMATCHES[cdl] %@", "words \(text)"))
            #expect(try await self.all(all, pageSize: 5).map(\.recordID.recordName).sorted() == expected, "all \(text.suffix(8))")
        }
        #expect(try store.admin.checkIntegrity().problems.isEmpty)
    }

    @Test func setIndexesBuildsEntriesForLongValuesAlreadyStored() async throws {
        var rng = SplitMix64(seed: 9)
        var saved: [Saved] = []
        for i in 0..<30 {
            let value = Self.string(bytes: rng.pick(Self.lengths), rng: &rng)
            let record = Record(recordType: "Late", recordID: .init(recordName: "r\(i)"))
            record["s"] = value
            record["text"] = value + " " + String(repeating: "w", count: 900)
            try await db.save(record)
            saved.append(Saved(name: "r\(i)", row: i, value: value))
        }
        try await store.admin.setIndexes(["s": [.queryable, .sortable], "text": .searchable], ofRecordType: "Late")
        let query = Query(recordType: "Late", predicate: QueryPredicate(value: true))
        query.sortDescriptors = [.init(key: "s", ascending: false)]
        #expect(try await all(query, pageSize: 4).map(\.recordID.recordName) == reference(saved, where: { _ in true }, ascending: false))
        #expect(try store.admin.checkIntegrity().problems.isEmpty)
        // And back to no index.
        try await store.admin.setIndexes(["s": [], "text": []], ofRecordType: "Late")
        #expect(try store.admin.checkIntegrity().problems.isEmpty)
    }
}
