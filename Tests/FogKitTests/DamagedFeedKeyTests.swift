import FogKitTesting
import FogStorage
import Foundation
import Testing

@testable import FogKit

/// The zone feed, the database feed and tombstone pruning scan a log from its key prefix and
/// slice each key past it (`key[prefix.count...]`). A forward scan checks only the upper
/// bound, so a damaged B-tree can hand them a key shorter than the prefix; their guards
/// (`guard key.starts(with: prefix)`) turn it into a `FormatError`, reported as `internalError`
/// naming the damaged log, where the slice would trap. These tests make LMDB hand over such a key.
///
/// Method: a small store is built and closed, so that the table (`changes` or `dbchanges`)
/// fits in one leaf page, its root. That page is found in `data.mdb` through LMDB's file
/// format (``LMDBLeafPage``: the newer meta page, the main database's entry for the table,
/// the page's node offsets), and one node of the scanned log gets a key size of
/// `prefix.count - 1`: LMDB then returns a strict prefix of the scan's prefix, which sorts
/// before it. The node must be one that LMDB's binary search for the scan's lower bound never
/// compares with (the search would then step past it): the greatest log entry that
/// ``searchPath(_:for:)``, a replay of that search, does not visit. In the zone's log that is
/// its greatest entry, the page's last node, which the search reaches only when the node before
/// it is below the bound. The store is opened again and the feed read (or a deletion made that
/// prunes tombstones): the forward scan steps onto the damaged node and the call must fail with
/// `internalError` and the guard's message. Without a guard, the test process traps.
@Suite struct DamagedFeedKeyTests {
    @Test func aZoneFeedFailsWithInternalErrorOnALogKeyShorterThanItsPrefix() async throws {
        let directory = try TemporaryDirectory("damaged-zone-feed-key")
        let zoneID = RecordZone.ID(zoneName: "Notes")
        do {
            let container = try directory.open()
            defer { container.close() }
            let db = container.privateCloudDatabase
            _ = try await db.save(RecordZone(zoneID: zoneID))
            // Saves only: the zone's keys in `changes` are its log entries, and the zone is
            // the newest one, so they are the last keys of the table.
            _ = try await db.modifyRecords(saving: (0..<4).map { SampleRecords.note("n\($0)", in: zoneID, value: $0) }, deleting: [])
        }

        var page = try LMDBLeafPage(directory: directory.url, table: Layout.changes)
        var reader = KeyReader(try #require(page.keys.last))
        let zone = try reader.readInt64()
        #expect(try reader.readInt64() == Layout.logPart, "the table ends with the zone's log")
        let prefix = Layout.changeKey(zone: zone, part: Layout.logPart)
        let target = try Self.unvisitedEntry(in: page, prefix: prefix)
        #expect(target == page.keys.count - 1, "the greatest log entry, last in the page")
        page.setKeySize(ofNode: target, to: prefix.count - 1)
        try page.write()

        let container = try directory.open()
        defer { container.close() }
        let error = await expectFogError(.internalError) {
            try await container.privateCloudDatabase.recordZoneChanges(inZoneWith: zoneID, since: nil)
        }
        #expect(error?.message == FormatError(message: "a key in zone \(zone)'s change log is damaged").description)
    }

    @Test func theDatabaseFeedFailsWithInternalErrorOnALogKeyShorterThanItsPrefix() async throws {
        let directory = try TemporaryDirectory("damaged-database-feed-key")
        let owner: String
        do {
            let container = try directory.open()
            defer { container.close() }
            let db = container.privateCloudDatabase
            owner = try #require(db.context.user)
            // One log entry per zone. The database's zone-name entries follow its log in the
            // table, so the damaged entry is chosen by replaying the search.
            for i in 0..<6 { _ = try await db.save(RecordZone(zoneName: "Z\(i)")) }
        }

        var page = try LMDBLeafPage(directory: directory.url, table: Layout.databaseChanges)
        let prefix = Layout.databaseLogPrefix(scope: Database.Scope.private.rawValue, owner: owner)
        let target = try Self.unvisitedEntry(in: page, prefix: prefix)
        page.setKeySize(ofNode: target, to: prefix.count - 1)
        try page.write()

        let container = try directory.open()
        defer { container.close() }
        let error = await expectFogError(.internalError) { try await container.privateCloudDatabase.databaseChanges(since: nil) }
        #expect(error?.message == FormatError(message: "a key in the database change log is damaged").description)
    }

    @Test func tombstonePruningFailsWithInternalErrorOnAnAgeKeyShorterThanItsPrefix() async throws {
        let directory = try TemporaryDirectory("damaged-tombstone-age-key")
        let zoneID = RecordZone.ID(zoneName: "Notes")
        do {
            let container = try directory.open()
            defer { container.close() }
            let db = container.privateCloudDatabase
            _ = try await db.save(RecordZone(zoneID: zoneID))
            _ = try await db.modifyRecords(saving: (0..<6).map { SampleRecords.note("n\($0)", in: zoneID, value: $0) }, deleting: [])
            // Four tombstones: the zone's age entries end the table, before its compaction
            // state (its greatest part; the deletions left four stale entries).
            _ = try await db.modifyRecords(saving: [], deleting: (0..<4).map { Record.ID(recordName: "n\($0)", zoneID: zoneID) })
        }

        var page = try LMDBLeafPage(directory: directory.url, table: Layout.changes)
        var reader = KeyReader(try #require(page.keys.last))
        let zone = try reader.readInt64()
        #expect(try reader.readInt64() == Layout.compactionPart, "the table ends with the zone's compaction state")
        var beforeLast = KeyReader(page.keys[page.keys.count - 2])
        _ = try beforeLast.readInt64()
        #expect(try beforeLast.readInt64() == Layout.tombstoneAgePart, "and the zone's age entries before it")
        let agePrefix = Layout.changeKey(zone: zone, part: Layout.tombstoneAgePart)
        let ages = page.keys.indices.filter { page.keys[$0].starts(with: agePrefix) }
        // The deletion below first adds its own entries: a tombstone and an age entry (after
        // the damaged one, before the compaction state). With at least three age entries
        // before the new one, the search for `agePrefix` cannot reach the node after them
        // (its low end stays at or below the first age entry).
        try #require(ages.count >= 3)
        let target = try Self.unvisitedEntry(in: page, prefix: agePrefix)
        #expect(target == page.keys.count - 2, "the newest age entry, last before the compaction state")
        page.setKeySize(ofNode: target, to: agePrefix.count - 1)
        // The value now starts inside the old key; pruning reads its date before the key, and
        // stops at a date after the cutoff. Make it 2001-01-01 (0.0), long expired.
        page.overwriteValue(ofNode: target, with: [UInt8](repeating: 0, count: 8))
        try page.write()

        // A retention of 0: every earlier tombstone has expired, so the next deletion in the
        // zone prunes them all, reaching the damaged entry.
        let container = try Container(
            identifier: "iCloud.test", directory: directory.url, user: "alice",
            configuration: .init(durability: .none, tombstoneRetention: 0))
        defer { container.close() }
        let error = await expectFogError(.internalError) {
            try await container.privateCloudDatabase.deleteRecord(withID: Record.ID(recordName: "n4", zoneID: zoneID))
        }
        #expect(error?.message == FormatError(message: "a key of the change log's age entries is damaged").description)
    }

    /// The greatest node of `page` whose key continues `prefix` and that LMDB's search for
    /// `prefix` does not visit.
    private static func unvisitedEntry(in page: LMDBLeafPage, prefix: [UInt8]) throws -> Int {
        let visited = searchPath(page.keys, for: prefix)
        let entries = page.keys.indices.filter { page.keys[$0].starts(with: prefix) && page.keys[$0].count > prefix.count }
        return try #require(entries.last { !visited.contains($0) }, "an entry of the log that the search does not visit")
    }

    /// The indices of the nodes that LMDB's search of a leaf page (`mdb_node_search`) compares
    /// `bound` with: a binary search from 0 to the last index, comparing in byte order
    /// (`memcmp`, shorter first on a tie), that goes right when the node is below `bound`.
    private static func searchPath(_ keys: [[UInt8]], for bound: [UInt8]) -> Set<Int> {
        var visited: Set<Int> = []
        var (low, high) = (0, keys.count - 1)
        while low <= high {
            let i = (low + high) / 2
            visited.insert(i)
            if keys[i] == bound { break }
            if keys[i].lexicographicallyPrecedes(bound) { low = i + 1 } else { high = i - 1 }
        }
        return visited
    }
}

/// The root page of an LMDB table that is a single leaf page, read from a closed store's
/// `data.mdb` with just enough of LMDB's file format (`mdb.c`, format version 1, 64-bit) to
/// damage one of its nodes and write the file back.
///
/// A page starts with a 16-byte header (page number, padding, flags at 10, `lower` at 12:
/// the end of the node offsets that follow the header, one `u16` per node, in key order). A
/// leaf node is an 8-byte header — data size (two `u16`, low then high), flags, key size, all
/// little-endian — then the key, then the data. A branch node's data-size and flag fields
/// hold its child's page number. Pages 0 and 1 are meta pages; the one with the greater
/// transaction id is current.
private struct LMDBLeafPage {
    let url: URL
    private(set) var file: [UInt8]
    /// The byte offset of each node in the file, in key order.
    let nodes: [Int]
    /// The key of each node, as read (before any change).
    let keys: [[UInt8]]

    static let leafFlag = 0x02
    static let branchFlag = 0x01
    static let subdatabaseFlag = 0x02

    init(directory: URL, table: String) throws {
        url = directory.appendingPathComponent("data.mdb")
        let file = [UInt8](try Data(contentsOf: url))
        self.file = file
        func u16(_ at: Int) -> Int { Int(file[at]) | Int(file[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        func u64(_ at: Int) -> Int { u32(at) | u32(at + 4) << 32 }
        func nodeOffsets(page: Int) -> [Int] { (0..<(u16(page + 12) - 16) / 2).map { page + u16(page + 16 + 2 * $0) } }
        func key(_ node: Int) -> [UInt8] { Array(file[node + 8..<node + 8 + u16(node + 6)]) }

        // The meta (after the page header): magic, version, address, map size, then the
        // free list's MDB_db (its first field is the page size) at 40 and the main
        // database's at 88 (48 bytes each: pad, flags, depth, 4 counts, root at 40), the last
        // page at 136 and the transaction id at 144.
        try #require(u32(16) == 0xBEEF_C0DE && u32(20) == 1, "an LMDB data file, format version 1")
        let pageSize = u32(40)
        let meta = u64(144) >= u64(pageSize + 144) ? 0 : pageSize
        // The main database's leaves (any depth) hold the tables' MDB_db records.
        var entry: Int?
        var pending = [u64(meta + 88 + 40)]
        while let number = pending.popLast() {
            let page = number * pageSize
            let flags = u16(page + 10)
            for node in nodeOffsets(page: page) {
                if flags & Self.branchFlag != 0 {
                    pending.append(u32(node) | u16(node + 4) << 32)
                } else if u16(node + 4) & Self.subdatabaseFlag != 0, key(node) == Array(table.utf8) {
                    entry = node + 8 + u16(node + 6)
                }
            }
        }
        let record = try #require(entry, "table \(table) in the main database")
        try #require(u16(record + 6) == 1, "table \(table) is one page deep")
        let root = u64(record + 40) * pageSize
        try #require(u16(root + 10) & Self.leafFlag != 0, "the root of \(table) is a leaf page")
        nodes = nodeOffsets(page: root)
        keys = nodes.map(key)
    }

    /// Sets the key size of the node at `index` to `size` (less than it was): the rest of
    /// the old key becomes the start of the node's data.
    mutating func setKeySize(ofNode index: Int, to size: Int) {
        file[nodes[index] + 6] = UInt8(size & 0xFF)
        file[nodes[index] + 7] = UInt8(size >> 8)
    }

    /// Overwrites the start of the node's data (as its key size now delimits it).
    mutating func overwriteValue(ofNode index: Int, with bytes: [UInt8]) {
        let start = nodes[index] + 8 + (Int(file[nodes[index] + 6]) | Int(file[nodes[index] + 7]) << 8)
        file.replaceSubrange(start..<start + bytes.count, with: bytes)
    }

    func write() throws { try Data(file).write(to: url) }
}
