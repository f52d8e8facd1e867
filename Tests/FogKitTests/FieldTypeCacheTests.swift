import FogKitTesting
import Foundation
import Synchronization
import Testing

@testable import FogKit

/// Saves take the field types they check from the cache of the catalog version they see
/// (`NameResolver.useCommittedFieldTypes`), which writes fill once they commit; a schema
/// change is seen by the next save.
@Suite struct FieldTypeCacheTests {
    private struct Rollback: Error {}

    private func save(_ i: Int, level: FieldValue, to database: Database) async throws {
        let record = Record(recordType: "Note", recordID: Record.ID(recordName: "note-\(i)"))
        record["title"] = "Note \(i)"
        record["level"] = level
        _ = try await database.save(record)
    }

    @Test func savesAloneReadTheFieldTypesFromTheStoreOncePerVersion() async throws {
        let store = try TestStore()
        let names = store.privateDatabase.engine.core.names
        // The first save fixes the types (and creates the type's indexes: a new catalog
        // version); the second reads them from the store and teaches the cache once it commits.
        try await save(0, level: .int64(0), to: store.privateDatabase)
        try await save(1, level: .int64(1), to: store.privateDatabase)
        let reads = names.fieldTypeReads.load(ordering: .relaxed)
        for i in 2..<22 { try await save(i, level: .int64(Int64(i)), to: store.privateDatabase) }
        #expect(names.fieldTypeReads.load(ordering: .relaxed) == reads, "no read ran, yet the saves used the cache")
        // The types still hold: a value of another type is refused.
        await expectFogError(.invalidArguments) { try await save(22, level: .string("high"), to: store.privateDatabase) }
    }

    @Test func aResetBetweenSavesFreesTheTypesTheSavesCached() async throws {
        let store = try TestStore()
        // Only saves run: the cache holds `level` as INT64, learned from them.
        for i in 0..<3 { try await save(i, level: .int64(Int64(i)), to: store.privateDatabase) }
        try await store.admin.resetDevelopmentEnvironment()
        // The reset took the next catalog version: its fields are typed again by their first
        // value. (Had the save used the cached INT64, it would be refused.)
        try await save(3, level: .string("high"), to: store.privateDatabase)
        #expect(try store.admin.schema(for: .development).recordTypes["Note"]?.fields["level"]?.type == .string)
        await expectFogError(.invalidArguments) { try await save(4, level: .int64(4), to: store.privateDatabase) }
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func aWriteRolledBackTeachesTheCacheNoFieldType() async throws {
        let store = try TestStore()
        let engine = store.privateDatabase.engine
        for i in 0..<2 { try await save(i, level: .int64(Int64(i)), to: store.privateDatabase) }
        // A write that fixes `mood` as STRING, reads it back as a save would, and is rolled back
        // (its error reaches the caller as an internal error): `mood` has no type after it.
        await #expect(throws: FogError.self) {
            try await engine.core.write { txn, names in
                var other = NameWriter(core: engine.core, transaction: txn)
                try other.define(recordType: "Note", field: "mood", as: .string)
                names.resolver.useCommittedFieldTypes()
                #expect(try names.fieldType(recordType: "Note", field: "mood") == .string)
                throw Rollback()
            }
        }
        // The save fixes `mood` as INT64. (Had the rolled-back write taught the cache `mood`'s
        // type, under the field id it took and the save takes again, the save would find the
        // type fixed and write none.)
        let record = Record(recordType: "Note", recordID: Record.ID(recordName: "moody"))
        record["mood"] = 5
        _ = try await store.privateDatabase.save(record)
        #expect(try store.admin.schema(for: .development).recordTypes["Note"]?.fields["mood"]?.type == .int64)
    }
}
