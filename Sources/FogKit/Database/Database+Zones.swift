extension Database {
    /// Saves a zone; saving an existing zone returns it unchanged. Custom zones
    /// exist only in the private database.
    /// - Throws: `badDatabase` in the public or shared database, `invalidArguments`
    ///   for a bad zone name.
    @discardableResult
    public func save(_ zone: RecordZone) async throws -> RecordZone {
        try checkOpen()
        let result = try await engine.zones.modifyZones(saving: [zone], deleting: [], context: context)
        return try result.saves[0].1.get()
    }

    /// Fetches one zone.
    /// - Throws: ``FogError/Code/zoneNotFound`` when it does not exist.
    public func recordZone(for zoneID: RecordZone.ID) async throws -> RecordZone {
        try checkOpen()
        return try engine.zones.fetchZones([zoneID], context: context)[0].1.get()
    }

    /// Fetches zones by ID, each with its own result.
    public func recordZones(for ids: [RecordZone.ID]) async throws -> [RecordZone.ID: Result<RecordZone, any Error>] {
        try checkOpen()
        var result: [RecordZone.ID: Result<RecordZone, any Error>] = [:]
        for (id, r) in try engine.zones.fetchZones(ids, context: context) { result[id] = r.mapError { $0 } }
        return result
    }

    /// Every zone of the database, the default zone first.
    public func allRecordZones() async throws -> [RecordZone] {
        try checkOpen()
        return try engine.zones.allZones(context: context)
    }

    /// Deletes a zone and every record in it.
    /// - Throws: `zoneNotFound` when it does not exist; `invalidArguments` for the default zone.
    @discardableResult
    public func deleteRecordZone(withID zoneID: RecordZone.ID) async throws -> RecordZone.ID {
        try checkOpen()
        let result = try await engine.zones.modifyZones(saving: [], deleting: [zoneID], context: context)
        try result.deletes[0].1.get()
        return zoneID
    }

    /// Saves and deletes zones, each with its own result.
    public func modifyRecordZones(
        saving recordZonesToSave: [RecordZone], deleting recordZoneIDsToDelete: [RecordZone.ID]
    ) async throws -> (saveResults: [RecordZone.ID: Result<RecordZone, any Error>], deleteResults: [RecordZone.ID: Result<Void, any Error>])
    {
        try checkOpen()
        let result = try await engine.zones.modifyZones(saving: recordZonesToSave, deleting: recordZoneIDsToDelete, context: context)
        var saves: [RecordZone.ID: Result<RecordZone, any Error>] = [:]
        for (id, r) in result.saves { saves[id] = r.mapError { $0 } }
        var deletes: [RecordZone.ID: Result<Void, any Error>] = [:]
        for (id, r) in result.deletes { deletes[id] = r.mapError { $0 } }
        return (saves, deletes)
    }
}
