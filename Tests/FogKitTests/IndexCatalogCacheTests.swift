import FogKitTesting
import FogStorage
import Foundation
import Synchronization
import Testing

@testable import FogKit

/// The cache of index definitions (`IndexCatalog`) learns from writes once they commit, and
/// never from a write that was rolled back.
@Suite struct IndexCatalogCacheTests {
    private struct Rollback: Error {}

    private func save(_ i: Int, to database: Database) async throws {
        let record = Record(recordType: "Item", recordID: Record.ID(recordName: "item-\(i)"))
        record["title"] = "Item \(i)"
        record["v"] = Int64(i)
        _ = try await database.save(record)
    }

    @Test func savesAloneReadTheDefinitionsFromTheStoreOncePerVersion() async throws {
        let store = try TestStore()
        let catalog = store.privateDatabase.engine.indexes.catalog
        // The first save creates the type and its fields (a new catalog version).
        try await save(0, to: store.privateDatabase)
        try await save(1, to: store.privateDatabase)
        let loads = catalog.loads.load(ordering: .relaxed)
        for i in 2..<22 { try await save(i, to: store.privateDatabase) }
        #expect(catalog.loads.load(ordering: .relaxed) == loads, "no read ran, yet the saves used the cache")
    }

    @Test func aWriteRolledBackTeachesTheCacheNothing() async throws {
        let store = try TestStore()
        let engine = store.privateDatabase.engine
        for i in 0..<3 { try await save(i, to: store.privateDatabase) }
        // A write that takes the next catalog version, loads the definitions under it, and is
        // rolled back (its error reaches the caller as an internal error): that version is
        // free again.
        await #expect(throws: FogError.self) {
            try await engine.core.write { txn, names in
                _ = try engine.core.nextCounter(Layout.metaSchemaVersion, in: txn)
                _ = try engine.indexes.definitions(of: "Item", txn: txn.readView, names: &names.resolver)
                throw Rollback()
            }
        }
        // The version is taken again, by a change that removes `v`'s index.
        try await store.admin.setIndexes([], forField: "v", ofRecordType: "Item")
        // A save under the new definitions writes no entry for `v`: had the rolled-back write
        // taught the cache its definitions under that version, it would.
        try await save(3, to: store.privateDatabase)
        let report = try store.admin.checkIntegrity()
        #expect(report.isSound, "\(report.problems)")
    }

    @Test func anIndexChangeBetweenSavesIsSeenByTheNextSave() async throws {
        let store = try TestStore()
        for i in 0..<3 { try await save(i, to: store.privateDatabase) }
        try await store.admin.setIndexes([], forField: "v", ofRecordType: "Item")
        try await save(3, to: store.privateDatabase)
        try await store.admin.setIndexes([.queryable, .sortable], forField: "v", ofRecordType: "Item")
        try await save(4, to: store.privateDatabase)
        let report = try store.admin.checkIntegrity()
        #expect(report.isSound, "\(report.problems)")
    }
}
