import FogKitTesting
import FogStorage
import Foundation
import Testing

@testable import FogKit

/// A zone's change log keeps the entry of a record's earlier change where it is (stale)
/// instead of moving it, feeds skip stale entries, and a compaction removes them once they
/// are as many as the live ones (``LogCompaction``). These tests hold the feeds to a model of
/// what changed after each token while stale entries pile up and compactions run, and the
/// integrity check to the compaction state's count.
@Suite struct ChangeLogCompactionTests {
    let store: TestStore
    var db: Database { store.privateDatabase }
    var engine: StoreEngine { store.admin.engine }

    init() throws { store = try TestStore() }

    /// The log of the zone with the most log entries: its entries, how many of them are
    /// stale (an earlier change of a live record, or of one that is gone), and its
    /// compaction state.
    private func log() throws -> (entries: Int, stale: Int, state: LogCompaction?) {
        try engine.core.read { txn, _ in
            var entries: [Int64: [(sequence: Int64, row: Int64, changed: Bool)]] = [:]
            var states: [Int64: LogCompaction] = [:]
            try txn.scan(engine.changes.changeTable) { key, value in
                var reader = KeyReader(key)
                let zone = try reader.readInt64()
                switch try reader.readInt64() {
                case Layout.logPart:
                    entries[zone, default: []].append((try reader.readInt64(), try reader.readInt64(), value.first == Layout.changedEntry))
                case Layout.compactionPart: states[zone] = try LogCompaction(decoding: value)
                default: break
                }
                return true
            }
            guard let (zone, log) = entries.max(by: { $0.value.count < $1.value.count }) else { return (0, 0, nil) }
            let stale = try log.filter { entry in
                guard entry.changed else { return false }
                let current = try engine.records.withRecord(entry.row, in: txn) { try RecordCodec.changeSequence($0) }
                return current != entry.sequence
            }.count
            return (log.count, stale, states[zone])
        }
    }

    /// The id of the zone with the most log entries (one scan of the table).
    private func zoneKey() throws -> Int64 {
        try engine.core.read { txn, _ in
            var counts: [Int64: Int] = [:]
            try txn.scan(engine.changes.changeTable) { key, _ in
                var reader = KeyReader(key)
                let zone = try reader.readInt64()
                if try reader.readInt64() == Layout.logPart { counts[zone, default: 0] += 1 }
                return true
            }
            return try #require(counts.max { $0.value < $1.value }?.key)
        }
    }

    /// The zone's compaction state alone: one key read.
    private func compaction(zone: Int64) throws -> LogCompaction? {
        try engine.core.read { txn, _ in try engine.changes.compaction(zone: zone, txn: txn) }
    }

    /// Every page of the zone's changes after `token`: the changed records' `v` by name, and
    /// the deleted names. Fails on a record listed twice.
    private func changes(
        in zone: RecordZone.ID, since token: ServerChangeToken?, pageSize: Int? = nil
    ) async throws -> (changed: [String: Int], deleted: Set<String>, token: ServerChangeToken) {
        var token = token
        var changed: [String: Int] = [:]
        var deleted: Set<String> = []
        while true {
            let page = try await db.recordZoneChanges(inZoneWith: zone, since: token, resultsLimit: pageSize)
            for (id, result) in page.modificationResultsByID {
                let value = try #require(try result.get().record["v"] as? Int)
                #expect(changed.updateValue(value, forKey: id.recordName) == nil, "\(id.recordName) listed twice")
            }
            for deletion in page.deletions {
                #expect(deleted.insert(deletion.recordID.recordName).inserted, "\(deletion.recordID.recordName) deleted twice")
            }
            token = page.changeToken
            if !page.moreComing { return (changed, deleted, page.changeToken) }
        }
    }

    @Test func anUpdateLeavesItsEarlierEntryStaleAndFeedsListTheRecordOnceAtItsLatest() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Notes")).zoneID
        _ = try await db.modifyRecords(saving: (0..<20).map { SampleRecords.note("n\($0)", in: zone, value: 0) }, deleting: [])
        let before = try await changes(in: zone, since: nil).token
        for round in 1...3 {
            for i in 0..<5 {
                let record = try await db.record(for: Record.ID(recordName: "n\(i)", zoneID: zone))
                record["v"] = round
                try await db.save(record)
            }
        }

        let log = try log()
        #expect(log.entries == 20 + 15)
        #expect(log.stale == 15)
        #expect(log.state?.stale == 15)
        #expect(log.state?.pass == nil, "far below the compaction minimum")

        let all = try await changes(in: zone, since: nil)
        #expect(all.changed.count == 20)
        #expect((0..<5).allSatisfy { all.changed["n\($0)"] == 3 })
        for pageSize in [1, 3, 7] {
            let paged = try await changes(in: zone, since: nil, pageSize: pageSize)
            #expect(paged.changed == all.changed)
        }
        let since = try await changes(in: zone, since: before)
        #expect(Set(since.changed.keys) == Set((0..<5).map { "n\($0)" }))
        #expect(since.deleted.isEmpty)
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func aDeleteLeavesItsRecordsLastEntryStaleAndFeedsListOnlyTheTombstone() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Notes")).zoneID
        _ = try await db.modifyRecords(saving: (0..<10).map { SampleRecords.note("n\($0)", in: zone, value: 0) }, deleting: [])
        let before = try await changes(in: zone, since: nil).token
        _ = try await db.modifyRecords(saving: [], deleting: (0..<3).map { Record.ID(recordName: "n\($0)", zoneID: zone) })
        // Saved again after its deletion: its tombstone goes, its old entry stays stale.
        try await db.save(SampleRecords.note("n0", in: zone, value: 5))

        #expect(try log().stale == 3)
        #expect(try log().state?.stale == 3)
        let since = try await changes(in: zone, since: before, pageSize: 1)
        #expect(since.changed == ["n0": 5])
        #expect(since.deleted == ["n1", "n2"])
        let all = try await changes(in: zone, since: nil)
        #expect(all.changed.count == 8 && all.deleted == ["n1", "n2"])
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func aCompactionRemovesStaleEntriesOnceTheyOutnumberTheLiveOnes() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Notes")).zoneID
        let count = 100
        _ = try await db.modifyRecords(saving: (0..<count).map { SampleRecords.note("n\($0)", in: zone, value: 0) }, deleting: [])
        let zoneKey = try self.zoneKey()
        var tokens: [(round: Int, token: ServerChangeToken)] = []
        var passes = 0
        var wasInPass = false
        for round in 1...30 {
            let records = try await db.records(for: (0..<count).map { Record.ID(recordName: "n\($0)", zoneID: zone) })
            let saved = try records.values.map { result in
                let record = try result.get()
                record["v"] = round
                return record
            }
            _ = try await db.modifyRecords(saving: saved, deleting: [])
            if round % 7 == 0 { tokens.append((round, try await changes(in: zone, since: nil).token)) }
            let state = try compaction(zone: zoneKey)
            if round % 3 == 0 {
                // The whole log, with a record lookup per entry: every third round.
                let log = try log()
                #expect(log.state?.stale == Int64(log.stale), "round \(round)")
                #expect(log.entries - log.stale == count)
            }
            let inPass = state?.pass != nil
            if wasInPass && !inPass { passes += 1 }
            wasInPass = inPass
            // Never far past the point where a pass starts.
            #expect(state?.stale ?? 0 <= Int64(EngineDefaults.compactionMinimum + 2 * count), "round \(round)")
        }
        #expect(passes >= 2, "30 rounds of 100 updates: 3,000 stale entries made, at most 1,224 left")
        let state = try #require(try log().state)
        #expect(state.live == Int64(count) || state.pass != nil)

        // Tokens taken before the compactions still read exactly what changed after them.
        for (round, token) in tokens {
            let since = try await changes(in: zone, since: token, pageSize: 33)
            #expect(since.changed.count == count, "token of round \(round)")
            #expect(since.changed.values.allSatisfy { $0 == 30 })
        }
        let last = try await changes(in: zone, since: nil)
        #expect(last.changed.count == count && last.changed.values.allSatisfy { $0 == 30 })
        let after = try await changes(in: zone, since: last.token)
        #expect(after.changed.isEmpty && after.deleted.isEmpty)
        #expect(try store.admin.checkIntegrity().isSound)
    }

    /// Random saves, updates, deletes and saves again of 40 names, in requests of 1 to 30,
    /// with tokens taken along the way: each token's feed (in pages of random size) lists
    /// exactly the names whose last change came after it, as the model says, however many
    /// stale entries the log holds and compactions ran meanwhile.
    @Test(arguments: [UInt64(11), 12])
    func feedsAgreeWithAModelUnderRandomWritesAndCompactions(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let zone = try await db.save(RecordZone(zoneName: "Notes")).zoneID
        let names = (0..<40).map { "n\($0)" }
        // The model: each name's value (nil: deleted or never saved) and the step of its last change.
        var values: [String: Int] = [:]
        var lastChange: [String: Int] = [:]
        var step = 0
        var tokens: [(step: Int, token: ServerChangeToken)] = []
        var passesSeen = 0
        var wasInPass = false
        var zoneKey: Int64?
        while step < 2_500 {
            let batch = Int.random(in: 1...30, using: &random)
            var saves: [String: Int] = [:]
            var deletes: Set<String> = []
            for _ in 0..<batch {
                let name = names.randomElement(using: &random)!
                guard saves[name] == nil, !deletes.contains(name) else { continue }
                if values[name] != nil, Int.random(in: 0..<4, using: &random) == 0 {
                    deletes.insert(name)
                } else {
                    saves[name] = Int.random(in: 0..<1_000_000, using: &random)
                }
            }
            step += 1
            let stored = try await db.records(
                for: saves.keys.filter { values[$0] != nil }.map { Record.ID(recordName: $0, zoneID: zone) })
            var records: [Record] = []
            for (name, value) in saves {
                let id = Record.ID(recordName: name, zoneID: zone)
                let record = try stored[id]?.get() ?? Record(recordType: "Note", recordID: id)
                record["v"] = value
                records.append(record)
            }
            _ = try await db.modifyRecords(
                saving: records, deleting: deletes.map { Record.ID(recordName: $0, zoneID: zone) }, savePolicy: .allKeys)
            for (name, value) in saves {
                values[name] = value
                lastChange[name] = step
            }
            for name in deletes {
                values[name] = nil
                lastChange[name] = step
            }
            step += Int.random(in: 0...10, using: &random)  // a jump: fewer requests, as many entries
            if Int.random(in: 0..<60, using: &random) == 0 { tokens.append((step, try await changes(in: zone, since: nil).token)) }
            // Found once the zone's log is clearly the largest (the users' zones hold entries
            // too); no pass can start before 1,024 stale entries.
            if zoneKey == nil, step > 200 { zoneKey = try self.zoneKey() }
            let inPass = try zoneKey.map { try compaction(zone: $0)?.pass != nil } ?? false
            if wasInPass && !inPass { passesSeen += 1 }
            wasInPass = inPass
        }
        #expect(passesSeen >= 1, "the writes left enough stale entries for a pass")
        for (at, token) in tokens + [(0, nil)] as [(Int, ServerChangeToken?)] {
            let since = try await changes(in: zone, since: token, pageSize: Int.random(in: 1...50, using: &random))
            let expectedChanged = values.filter { lastChange[$0.key]! > at }
            #expect(since.changed == expectedChanged, "token at step \(at)")
            // Tombstones are kept (30 days): from the start too, every name deleted and not saved again.
            let expectedDeleted = Set(lastChange.filter { $0.value > at && values[$0.key] == nil }.keys)
            #expect(since.deleted == expectedDeleted, "token at step \(at)")
        }
        let log = try log()
        #expect(log.state?.stale == Int64(log.stale))
        #expect(try store.admin.checkIntegrity().isSound)
    }

    /// An atomic zone plans every item before applying any, so an item can carry its record's
    /// change sequence from before the request after an earlier item gave the record an entry
    /// at the request's sequence: deleting a share changes its root, and moving a record out
    /// of a shared hierarchy changes every record below it. The later item's write replaces
    /// that entry and leaves nothing more stale.
    @Test func aRecordAnEarlierItemOfTheRequestChangedIsCountedStaleOnce() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Notes")).zoneID
        let root = Record(recordType: "Note", recordID: Record.ID(recordName: "root", zoneID: zone))
        let share = Share(rootRecord: root)
        _ = try await db.modifyRecords(saving: [root, share], deleting: [])
        // The share's deletion clears the root's `share`, then the root is deleted.
        _ = try await db.modifyRecords(saving: [], deleting: [share.recordID, root.recordID])
        #expect(try log().state?.stale == Int64(try log().stale))
        #expect(try store.admin.checkIntegrity().isSound)

        // A hierarchy: top (shared) ← middle ← bottom. Moving middle out of it gives bottom a
        // new entry; bottom's own save and then its deletion come after in the same requests.
        let top = Record(recordType: "Note", recordID: Record.ID(recordName: "top", zoneID: zone))
        let middle = Record(recordType: "Note", recordID: Record.ID(recordName: "middle", zoneID: zone))
        let bottom = Record(recordType: "Note", recordID: Record.ID(recordName: "bottom", zoneID: zone))
        middle.setParent(top)
        bottom.setParent(middle)
        _ = try await db.modifyRecords(saving: [top, middle, bottom, Share(rootRecord: top)], deleting: [])
        let movedMiddle = try await db.record(for: middle.recordID)
        movedMiddle.setParent(nil as Record?)
        let changedBottom = try await db.record(for: bottom.recordID)
        changedBottom["v"] = 1
        _ = try await db.modifyRecords(saving: [movedMiddle, changedBottom], deleting: [])
        #expect(try log().state?.stale == Int64(try log().stale))
        #expect(try store.admin.checkIntegrity().isSound)

        let backMiddle = try await db.record(for: middle.recordID)
        backMiddle.setParent(top)
        _ = try await db.modifyRecords(saving: [backMiddle], deleting: [bottom.recordID])
        #expect(try log().state?.stale == Int64(try log().stale))
        #expect(try store.admin.checkIntegrity().isSound)
        let page = try await db.recordZoneChanges(inZoneWith: zone, since: nil)
        let notes = try page.modificationResultsByID.values.map { try $0.get().record }.filter { $0.recordType == "Note" }
        #expect(notes.map(\.recordID.recordName).sorted() == ["middle", "top"])
        #expect(Set(page.deletions.map(\.recordID.recordName)).isSuperset(of: ["root", "bottom"]))
    }

    @Test func theIntegrityCheckFindsAStaleCountThatIsWrongAndAnEntryFromAfterItsRecord() async throws {
        let zone = try await db.save(RecordZone(zoneName: "Notes")).zoneID
        _ = try await db.modifyRecords(saving: (0..<3).map { SampleRecords.note("n\($0)", in: zone, value: 0) }, deleting: [])
        let record = try await db.record(for: Record.ID(recordName: "n0", zoneID: zone))
        record["v"] = 1
        try await db.save(record)
        #expect(try store.admin.checkIntegrity().isSound)

        let (zoneKey, row) = try engine.core.read { txn, _ -> (Int64, Int64) in
            var found: (Int64, Int64)?
            try txn.scan(engine.changes.changeTable) { key, value in
                var reader = KeyReader(key)
                let zone = try reader.readInt64()
                if try reader.readInt64() == Layout.compactionPart { found = (zone, 0) }
                return true
            }
            let (zone, _) = try #require(found)
            return (zone, try #require(try engine.records.rowID(zone: zone, name: "n1", in: txn)))
        }
        // A count one too high.
        try engine.core.writeAndWait { txn, _ in
            var state = try #require(try engine.changes.compaction(zone: zoneKey, txn: txn.readView))
            state.stale += 1
            try txn.put(state.encoded, forKey: Layout.changeKey(zone: zoneKey, part: Layout.compactionPart), in: engine.changes.changeTable)
        }
        let wrongCount = try store.admin.checkIntegrity()
        #expect(wrongCount.problems.contains { $0.contains("stale entries; its compaction state counts 2") })

        // An entry of n1 at a sequence after n1's own change.
        try engine.core.writeAndWait { txn, _ in
            try txn.put(
                [Layout.changedEntry], forKey: Layout.logKey(zone: zoneKey, sequence: 1_000_000, row: row), in: engine.changes.changeTable)
        }
        let future = try store.admin.checkIntegrity()
        #expect(future.problems.contains { $0.contains("is not a change of a record of the zone") })
    }

    @Test func theCompactionStateSurvivesEncodingAndRefusesDamage() throws {
        var random = SplitMix64(seed: 5)
        for _ in 0..<500 {
            var state = LogCompaction()
            state.stale = Int64.random(in: 0...Int64.max, using: &random)
            if Bool.random(using: &random) { state.live = Int64.random(in: 0...1 << 40, using: &random) }
            if Bool.random(using: &random) {
                var pass = LogCompaction.Pass(kept: Int64.random(in: 0...1 << 40, using: &random))
                if Bool.random(using: &random) {
                    pass.position = (Int64.random(in: 0...Int64.max, using: &random), Int64.random(in: 0...Int64.max, using: &random))
                }
                state.pass = pass
            }
            let bytes = state.encoded
            #expect(try bytes.withUnsafeBytes { try LogCompaction(decoding: $0) } == state)
            // Cut short, or with a byte more: refused, never misread.
            let cut = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
            #expect(throws: FormatError.self) { try cut.withUnsafeBytes { try LogCompaction(decoding: $0) } }
            #expect(throws: FormatError.self) { try (bytes + [0]).withUnsafeBytes { try LogCompaction(decoding: $0) } }
        }
        #expect(throws: FormatError.self) { try [UInt8(8), 0].withUnsafeBytes { try LogCompaction(decoding: $0) } }
    }
}
