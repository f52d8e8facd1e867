import FogStorage
import FogStorageLMDB
import Foundation
import Testing

/// LMDB trusts the lengths and page numbers in its file. These tests damage them on purpose
/// and read, scan and delete through the damage in this very process. A value whose length is
/// damaged points past the end of the file: before FogStorageLMDB guarded its LMDB calls (and
/// touched the bytes they return inside the guard), reading it ended the test runner with SIGBUS.
@Suite struct DamagedPageTests {
    static let marker: [UInt8] = Array("damaged-page-marker-key".utf8)

    /// What is damaged.
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        /// The length of a small value, made 2 GB: the value then runs past the end of the
        /// file (SIGBUS) and of the map. LMDB does not check it; the guard does.
        case valueLength
        /// The overflow page number of a large value, made to point past the end of the file.
        /// LMDB checks this one itself (`MDB_PAGE_NOTFOUND`).
        case overflowPage
        var testDescription: String { rawValue }
    }

    /// Stores a value under ``marker`` (20,000 bytes on overflow pages, or 3 bytes in the leaf)
    /// and small values under other keys, closes the store, damages the marker's node, reopens
    /// the store and runs `body`.
    func withDamagedStore(
        _ damage: Damage, _ label: String = #function, _ body: (LMDBStore, Table) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(label)
        defer { directory.remove() }
        let folder = directory.appending("env")
        do {
            let store = try LMDBStore.open(directory: folder, configuration: testConfiguration())
            let table = store.table(named: "a")
            let value = [UInt8](repeating: 0xAB, count: damage == .overflowPage ? 20_000 : 3)
            try store.writeAndWait { txn in
                try txn.put(value, forKey: Self.marker, in: table)
                for i in 0..<20 { try txn.put([UInt8(i)], forKey: Array("key-\(i)".utf8), in: table) }
            }
            store.close()
        }
        let file = folder.appendingPathComponent("data.mdb")
        var bytes = try Data(contentsOf: file)
        // A leaf node is a header (the value's length in two 16-bit halves, flags, the key's
        // length), the key, then the value, or for a value on overflow pages the 8-byte
        // number of its first page.
        let key = try #require(bytes.firstRange(of: Data(Self.marker)))
        switch damage {
        case .valueLength:
            bytes.replaceSubrange(key.lowerBound - 8..<key.lowerBound - 4, with: [0xFF, 0xFF, 0xFF, 0x7F])
        case .overflowPage:
            let page = UInt64(bytes.count / 4096 + 16).littleEndian
            withUnsafeBytes(of: page) { bytes.replaceSubrange(key.upperBound..<key.upperBound + 8, with: $0) }
        }
        try bytes.write(to: file)

        let store = try LMDBStore.open(directory: folder, configuration: testConfiguration())
        defer { store.close() }
        try await body(store, store.table(named: "a"))
    }

    /// Expects `body` to throw ``StorageError/corrupted(_:)``.
    func expectDamage(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            try await body()
            Issue.record("no error", sourceLocation: sourceLocation)
        } catch StorageError.corrupted {
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: Damage.allCases) func readingTheValueThrowsDamage(_ damage: Damage) async throws {
        try await withDamagedStore(damage) { store, table in
            await expectDamage { _ = try store.read { try $0.value(forKey: Self.marker, in: table) } }
            // The store still serves what is not damaged.
            let intact = try store.read { txn throws in try txn.value(forKey: Array("key-7".utf8), in: table) }
            #expect(intact == [7])
        }
    }

    @Test(arguments: Damage.allCases) func scanningOverTheValueThrowsDamage(_ damage: Damage) async throws {
        try await withDamagedStore(damage) { store, table in
            var seen = 0
            await expectDamage {
                try store.read { txn in
                    try txn.scan(table) { _, _ in
                        seen += 1
                        return true
                    }
                }
            }
            // "damaged-…" sorts before "key-…": the scan stops at it.
            #expect(seen == 0)
        }
    }

    /// (Only the overflow page: deleting a value whose length is damaged makes LMDB move
    /// bytes by that length inside its page, which no guard can catch; the damage must be
    /// found by reading first, as `fog check` does.)
    @Test func deletingTheValueThrowsDamageAndWritesGoOn() async throws {
        try await withDamagedStore(.overflowPage) { store, table in
            // Deleting frees the overflow pages, which LMDB reads first.
            await expectDamage { _ = try await store.write { try $0.delete(Self.marker, in: table) } }
            // The failed transaction was rolled back and released the writer: the next one commits.
            try await store.write { try $0.put([42], forKey: Array("after".utf8), in: table) }
            let after = try store.read { txn throws in try txn.value(forKey: Array("after".utf8), in: table) }
            #expect(after == [42])
        }
    }
}
