import Foundation

extension Container.Administrator {
    // MARK: - Schema

    /// The schema of `environment`: its record types with their fields, index options and
    /// grants, and its security roles. Print it with `description` for CloudKit's schema
    /// language (the text `cktool export-schema` writes).
    ///
    /// In development the schema grows just in time as records are saved; production's
    /// changes only through ``deploySchema()`` (and index changes made by an administrator
    /// opened on production). Reading production's schema creates its (empty) store when
    /// the container has none yet.
    public func schema(for environment: Container.Environment) throws -> Schema {
        try authorize(.readSchema)
        return try withEngine(for: environment) { engine in try fogTry { try engine.catalog.schema() } }
    }

    /// Makes `schema` the development environment's schema, as `cktool import-schema` does.
    ///
    /// Record types, fields, roles and grants that `schema` does not name are removed from
    /// development's schema (records keep their values; the `Users` type stays even when
    /// not named); index options are set as it says, and new or changed indexes are built
    /// for the records development already has, in bounded chunks, before the call returns.
    ///
    /// - Throws: ``FogError/Code/invalidArguments`` when `schema` is not valid (a name,
    ///   an index option its field's type cannot have, a grant to a role it does not
    ///   create) or changes the type of a field development already has (reset development
    ///   first, with ``resetDevelopmentEnvironment()``); the message names every problem and
    ///   nothing changes.
    public func importSchema(_ schema: Schema) async throws {
        try authorize(.importSchema)
        try await withEngineAsync(for: .development) { engine in
            try await mapStorageErrors { try await engine.catalog.importSchema(schema) }
        }
    }

    /// Deploys the development schema to production, as the CloudKit console does: record
    /// types, fields, index options, grants and roles are copied; records never are.
    ///
    /// Changes must be additive: production's record types, fields and roles must all be in
    /// development, each field with the same type (a `NUMBER` production has not pinned may
    /// become pinned). Indexes production gains are built for the records it has, in bounded
    /// chunks, before the call returns; until then production queries that need them fail as
    /// if they did not exist.
    ///
    /// - Throws: ``FogError/Code/invalidArguments`` naming every record type, field and role
    ///   of production that development removes or changes; production stays unchanged.
    public func deploySchema() async throws {
        try authorize(.deploySchema)
        let development = try withEngine(for: .development) { engine in try fogTry { try engine.catalog.storedCatalog() } }
        try await withEngineAsync(for: .production) { engine in
            try await mapStorageErrors { try await engine.catalog.deploy(development) }
        }
    }

    /// Resets the development environment, as the CloudKit console's "Reset Development
    /// Environment" and `cktool reset-schema` do: every development record, zone, change log
    /// and asset is deleted, and development's schema becomes production's (empty when
    /// nothing was deployed). Users stay, with new `Users` records; change tokens taken
    /// before fail with ``FogError/Code/changeTokenExpired``. Containers open on development,
    /// in this process or another, see the empty store at once.
    public func resetDevelopmentEnvironment() async throws {
        try authorize(.resetDevelopment)
        let production = try withEngine(for: .production) { engine in try fogTry { try engine.catalog.storedCatalog() } }
        try await withEngineAsync(for: .development) { engine in
            try await mapStorageErrors { try await engine.resetDevelopment(to: production) }
        }
    }

    /// Runs `body` with the engine of `environment`: the administrator's own, or one opened
    /// for the call.
    func withEngine<R>(for environment: Container.Environment, _ body: (StoreEngine) throws -> R) throws -> R {
        if environment == requestedConfiguration.environment { return try body(engine) }
        let other = try openEngine(for: environment)
        defer { other.close() }
        return try body(other)
    }

    private func withEngineAsync<R>(
        for environment: Container.Environment, _ body: (StoreEngine) async throws -> R
    ) async throws -> R {
        if environment == requestedConfiguration.environment { return try await body(engine) }
        let other = try openEngine(for: environment)
        defer { other.close() }
        return try await body(other)
    }

    private func openEngine(for environment: Container.Environment) throws -> StoreEngine {
        try StoreEngine(
            location: environment.storeLocation(in: store), identifier: containerIdentifier,
            durability: requestedConfiguration.durability.storage, caller: .administrator, advisor: engine.indexes.advisor,
            encryptionKey: requestedConfiguration.encryptionKey)
    }
}
