import FogStorage

/// How many of a zone's change log entries are stale, and the compaction pass under way:
/// the value of `(zone, 7)` in `changes`.
///
/// A save or delete of an existing record writes its new entry and leaves the old one where
/// it is (one change at a random place of the log fewer per update than moving it); the
/// entry is then **stale**: its
/// record has a later entry, or is gone. Feeds skip stale entries (``ChangeFeeds``). Once
/// they are as many as the live entries (and at least ``EngineDefaults/compactionMinimum``),
/// a pass walks the log in key order, a bounded chunk in each request that leaves entries
/// stale, and removes them, many to a page.
struct LogCompaction: Equatable {
    /// The stale entries the log holds: counted by the requests that leave them, less those
    /// compactions removed. ``Maintenance/checkChangeLogs(live:zones:txn:report:)`` checks it.
    var stale: Int64 = 0
    /// The live entries (records and tombstones) the last finished pass kept, or the log's
    /// entries less the stale ones when the first pass was due; `nil` before either. A pass
    /// starts once ``stale`` reaches it. An estimate, not kept up to date between passes
    /// (new records, pruned tombstones): it only decides when the next pass starts.
    var live: Int64?
    /// The pass under way, if any.
    var pass: Pass?

    /// Where a pass has got to.
    struct Pass: Equatable {
        /// The log position of the last entry the pass examined; `nil` before the first.
        var position: (sequence: Int64, row: Int64)?
        /// The live entries the pass has kept so far.
        var kept: Int64 = 0

        static func == (a: Pass, b: Pass) -> Bool {
            a.kept == b.kept && a.position?.sequence == b.position?.sequence && a.position?.row == b.position?.row
        }
    }

    private static let hasLive: UInt8 = 1
    private static let hasPass: UInt8 = 2
    private static let hasPosition: UInt8 = 4

    init() {}

    /// Decodes the stored value: flags, then varints (stale; live; the pass's kept entries
    /// and position), each present as the flags say.
    init(decoding buffer: UnsafeRawBufferPointer) throws {
        var r = ByteReader(buffer)
        let flags = try r.u8()
        guard flags & ~(Self.hasLive | Self.hasPass | Self.hasPosition) == 0 else {
            throw FormatError(message: "a change log's compaction state has flags \(flags)")
        }
        stale = try r.int64()
        if flags & Self.hasLive != 0 { live = try r.int64() }
        if flags & Self.hasPass != 0 {
            var pass = Pass(kept: try r.int64())
            if flags & Self.hasPosition != 0 { pass.position = (try r.int64(), try r.int64()) }
            self.pass = pass
        }
        guard r.isAtEnd, stale >= 0, (live ?? 0) >= 0, (pass?.kept ?? 0) >= 0 else {
            throw FormatError(message: "a change log's compaction state is damaged")
        }
    }

    var encoded: [UInt8] {
        var w = ByteWriter(capacity: 40)
        var flags: UInt8 = 0
        if live != nil { flags |= Self.hasLive }
        if pass != nil { flags |= Self.hasPass }
        if pass?.position != nil { flags |= Self.hasPosition }
        w.u8(flags)
        w.varint(stale)
        if let live { w.varint(live) }
        if let pass {
            w.varint(pass.kept)
            if let position = pass.position {
                w.varint(position.sequence)
                w.varint(position.row)
            }
        }
        return w.bytes
    }

    /// Whether a pass should start: the stale entries are as many as the live ones, and at
    /// least `minimum`.
    func isDue(minimum: Int64) -> Bool { pass == nil && stale >= Swift.max(live ?? 0, minimum) }
}

extension ChangeLog {
    /// Counts the `count` entries a request left stale in the zone's log and, when a pass is
    /// due or under way, compacts the next chunk of the log: up to four entries for each one
    /// left stale, and at least ``EngineDefaults/compactionChunk``. So a request's work stays
    /// in proportion to its own, and a pass over a log of `L` entries ends once the requests
    /// have left about `L / 4` more stale (later if new records lengthen the log meanwhile;
    /// a pass that never ends still removes stale entries at four examined for each made).
    func noteStale(_ count: Int, zone: Int64, txn: Store.WriteTransaction) throws {
        guard count > 0 else { return }
        let key = Layout.changeKey(zone: zone, part: Layout.compactionPart)
        var state = try compaction(zone: zone, txn: txn.readView) ?? LogCompaction()
        state.stale += Int64(count)
        let minimum = Int64(EngineDefaults.compactionMinimum)
        if state.isDue(minimum: minimum), state.live == nil {
            // The first time: the log's size, once, instead of a pass to learn it.
            state.live = try logEntryCount(zone: zone, txn: txn.readView) - state.stale
        }
        if state.isDue(minimum: minimum) { state.pass = LogCompaction.Pass() }
        if state.pass != nil {
            try compactChunk(&state, zone: zone, budget: max(4 * count, EngineDefaults.compactionChunk), txn: txn)
        }
        try txn.put(state.encoded, forKey: key, in: changeTable)
    }

    /// The zone's compaction state; `nil` while no request has left a stale entry (a log
    /// written before version 7 has none).
    func compaction(zone: Int64, txn: Store.ReadTransaction) throws -> LogCompaction? {
        try txn.withValue(forKey: Layout.changeKey(zone: zone, part: Layout.compactionPart), in: changeTable) {
            try LogCompaction(decoding: $0)
        }
    }

    /// Examines up to `budget` log entries after the pass's position and removes the stale
    /// ones (their row is gone, or holds a later change). At the end of the log the pass
    /// ends, and what it kept becomes the live count.
    private func compactChunk(_ state: inout LogCompaction, zone: Int64, budget: Int, txn: Store.WriteTransaction) throws {
        guard var pass = state.pass else { return }
        let prefix = Layout.changeKey(zone: zone, part: Layout.logPart)
        var range = ScanRange.prefix(prefix)
        if let position = pass.position {
            (range.lower, range.lowerInclusive) = (prefix + Layout.position(sequence: position.sequence, row: position.row), false)
        }
        var examined = 0
        var reachedEnd = true
        // Removed where the scan stands: stale entries come in runs (the oldest part of the
        // log), and each removal then costs no search of the log.
        let removed = try txn.scanRemoving(changeTable, range: range) { key, value in
            if examined == budget {
                reachedEnd = false
                return .stop
            }
            examined += 1
            guard key.starts(with: prefix) else { throw FormatError(message: "a key in zone \(zone)'s change log is damaged") }
            var reader = KeyReader(UnsafeRawBufferPointer(rebasing: key[prefix.count...]))
            let sequence = try reader.readInt64()
            let row = try reader.readInt64()
            pass.position = (sequence, row)
            if value.first == Layout.changedEntry, try records.withRecord(row, in: txn.readView, RecordCodec.changeSequence) != sequence {
                return .remove
            }
            pass.kept += 1
            return .keep
        }
        state.stale = max(0, state.stale - Int64(removed))
        if reachedEnd {
            state.live = pass.kept
            state.pass = nil
        } else {
            state.pass = pass
        }
    }

    /// The number of entries (live and stale) in the zone's log.
    private func logEntryCount(zone: Int64, txn: Store.ReadTransaction) throws -> Int64 {
        var count: Int64 = 0
        try txn.scan(changeTable, range: .prefix(Layout.changeKey(zone: zone, part: Layout.logPart))) { _, _ in
            count += 1
            return true
        }
        return count
    }
}
