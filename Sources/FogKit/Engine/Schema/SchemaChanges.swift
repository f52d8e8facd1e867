import FogStorage
import Foundation

// The administrative schema changes of one environment's store: import (development),
// deployment (production) and the development reset. Each writes the catalog in one
// transaction and then completes the index drops and builds it marked, in chunks.
extension SchemaCatalog {
    /// The environment's schema.
    func schema() throws -> Schema {
        try read { txn, names in try schema(txn: txn, names: &names) }
    }

    /// The environment's catalog entries.
    func storedCatalog() throws -> Stored {
        try read { txn, names in try stored(txn: txn, names: &names) }
    }

    /// Makes `schema` this environment's schema (development's, as CloudKit's schema import
    /// does): record types, fields, roles and grants it lacks are removed from the catalog
    /// (records keep their values); index options are set as it says. A field whose type it
    /// changes is refused, since records may hold values of the old type: `invalidArguments`
    /// naming every such field, and nothing changes.
    func importSchema(_ schema: Schema) async throws {
        try Self.validate(schema)
        let outcome = try await write { [self] txn, names -> ReplaceOutcome in
            let current = try stored(txn: txn.readView, names: &names.resolver)
            let target = Stored(schema)
            let changes = Self.typeChanges(from: current, to: target)
            guard changes.isEmpty else {
                throw FogError(
                    .invalidArguments,
                    message: "the schema changes the type of fields that development has (reset development first): "
                        + changes.joined(separator: "; "))
            }
            return try replace(with: target, keepingUnnamedIndexes: true, txn: txn, names: &names)
        }
        try await finish(outcome)
    }

    /// Makes `development` this (production) environment's catalog, refusing, with
    /// `invalidArguments` naming every one, the record types, fields and roles production has
    /// that `development` removes or changes; then nothing changes.
    func deploy(_ development: Stored) async throws {
        try Self.validate(Self.schema(of: development))
        let outcome = try await write { [self] txn, names -> ReplaceOutcome in
            let production = try stored(txn: txn.readView, names: &names.resolver)
            let losses = Self.losses(from: production, to: development)
            guard losses.isEmpty else {
                throw FogError(
                    .invalidArguments,
                    message: "the development schema cannot be deployed; it removes or changes what production has: "
                        + losses.joined(separator: "; "))
            }
            return try replace(with: development, keepingUnnamedIndexes: false, txn: txn, names: &names)
        }
        try await finish(outcome)
    }

    /// After a catalog change committed: the index drops and builds run. (Cached field types
    /// are keyed by the catalog version the change incremented.)
    func finish(_ outcome: ReplaceOutcome) async throws {
        for type in outcome.pendingBuilds.sorted() { try await indexes.buildIndexes(ofRecordType: type) }
    }
}

extension Engine {
    /// Empties this (development) store and gives it `production`'s catalog, as CloudKit's
    /// "Reset Development Environment" does: every record, zone, change log and asset goes;
    /// the users stay, with new `Users` records; the store gets a new incarnation, so change
    /// tokens taken before fail with `changeTokenExpired`. Counters go on from where they
    /// were, so no id is reused. One transaction, run alone.
    func resetDevelopment(to production: SchemaCatalog<Store>.Stored) async throws {
        try SchemaCatalog<Store>.validate(SchemaCatalog<Store>.schema(of: production))
        let incarnation = Layout.newIncarnation()
        let store = core.store
        let outcome = try core.writeAndWait(alone: true) { [self] txn, names -> SchemaCatalog<Store>.ReplaceOutcome in
            for table in [
                Layout.records, Layout.names, Layout.refs, Layout.indexes, Layout.changes, Layout.databaseChanges, Layout.zones,
                Layout.zoneIDs, Layout.assets,
            ] {
                try txn.clear(store.table(named: table))
            }
            // A store that keeps its assets' bytes in the database loses them with the counts.
            if let chunks = core.assetChunks { try txn.clear(chunks) }
            // The catalog goes (role memberships too: CloudKit's reset deletes the user
            // records that hold them), the names stay (they are only interned strings).
            for tag in ["t", "f", "x", "b", "d", "r", "g", "m"] {
                var w = KeyWriter(capacity: 4)
                w.append(tag)
                try txn.deleteAll(in: core.schema, range: .prefix(w.bytes))
            }
            try txn.put(incarnation, forKey: Layout.metaIncarnation, in: core.meta)
            // No record is left: every storage count is 0 again (`Engine/Usage`).
            try StorageUsage.clearAll(meta: core.meta, txn: txn)
            let outcome = try catalog.replace(with: production, keepingUnnamedIndexes: false, txn: txn, names: &names)
            var users: [String] = []
            try txn.readView.scan(self.users.users, range: Layout.userIdentityRange) { _, value in
                users.append(String(decoding: value, as: UTF8.self))
                return true
            }
            for user in users { try self.users.createUserRecords(user, txn: txn, names: &names) }
            return outcome
        }
        // Every asset file lost its last reference.
        try records.assets.sweep()
        for type in outcome.pendingBuilds.sorted() { try await indexes.buildIndexes(ofRecordType: type) }
    }
}
