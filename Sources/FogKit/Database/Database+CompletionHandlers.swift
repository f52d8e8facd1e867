import Foundation

// CloudKit's completion-handler convenience methods, which older apps call. Each one runs
// its `async` twin on a new task and calls the handler once with the outcome, so the two
// forms behave alike in every respect but the calling convention.

extension Database {
    // MARK: Records

    /// Fetches one record (CloudKit's `fetch(withRecordID:completionHandler:)`).
    ///
    /// The handler receives the record, or `nil` and the error ``record(for:)`` throws
    /// (`unknownItem` for a missing record).
    public func fetch(
        withRecordID recordID: Record.ID, completionHandler: @escaping @Sendable (Record?, (any Error)?) -> Void
    ) {
        completeLater({ try await self.record(for: recordID) }, pair: completionHandler)
    }

    /// Fetches several records, each with its own result (CloudKit's
    /// `fetch(withRecordIDs:desiredKeys:completionHandler:)`).
    public func fetch(
        withRecordIDs recordIDs: [Record.ID], desiredKeys: [Record.FieldKey]? = nil,
        completionHandler: @escaping @Sendable (Result<[Record.ID: Result<Record, any Error>], any Error>) -> Void
    ) {
        completeLater({ try await self.records(for: recordIDs, desiredKeys: desiredKeys) }, completionHandler)
    }

    /// Saves one record with the default save policy (CloudKit's
    /// `save(_:completionHandler:)`); the handler receives the record as stored.
    public func save(_ record: Record, completionHandler: @escaping @Sendable (Record?, (any Error)?) -> Void) {
        completeLater({ try await self.save(record) }, pair: completionHandler)
    }

    /// Deletes one record (CloudKit's `delete(withRecordID:completionHandler:)`); the
    /// handler receives the deleted record's ID.
    public func delete(
        withRecordID recordID: Record.ID, completionHandler: @escaping @Sendable (Record.ID?, (any Error)?) -> Void
    ) {
        completeLater({ try await self.deleteRecord(withID: recordID) }, pair: completionHandler)
    }

    /// Saves and deletes records in one request (CloudKit's
    /// `modifyRecords(saving:deleting:savePolicy:atomically:completionHandler:)`).
    public func modifyRecords(
        saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID],
        savePolicy: RecordSavePolicy = .ifServerRecordUnchanged, atomically: Bool = true,
        completionHandler:
            @escaping @Sendable (
                Result<
                    (saveResults: [Record.ID: Result<Record, any Error>], deleteResults: [Record.ID: Result<Void, any Error>]),
                    any Error
                >
            ) -> Void
    ) {
        completeLater(
            {
                try await self.modifyRecords(
                    saving: recordsToSave, deleting: recordIDsToDelete, savePolicy: savePolicy, atomically: atomically)
            }, completionHandler)
    }

    // MARK: Queries

    /// Runs a query and returns its first batch and a cursor (CloudKit's
    /// `fetch(withQuery:inZoneWith:desiredKeys:resultsLimit:completionHandler:)`).
    public func fetch(
        withQuery query: Query, inZoneWith zoneID: RecordZone.ID? = nil, desiredKeys: [Record.FieldKey]? = nil,
        resultsLimit: Int = QueryOperation.maximumResults,
        completionHandler:
            @escaping @Sendable (
                Result<(matchResults: [(Record.ID, Result<Record, any Error>)], queryCursor: QueryOperation.Cursor?), any Error>
            ) -> Void
    ) {
        completeLater(
            { try await self.records(matching: query, inZoneWith: zoneID, desiredKeys: desiredKeys, resultsLimit: resultsLimit) },
            completionHandler)
    }

    /// Returns the next batch of a query from its cursor (CloudKit's
    /// `fetch(withCursor:desiredKeys:resultsLimit:completionHandler:)`).
    public func fetch(
        withCursor queryCursor: QueryOperation.Cursor, desiredKeys: [Record.FieldKey]? = nil,
        resultsLimit: Int = QueryOperation.maximumResults,
        completionHandler:
            @escaping @Sendable (
                Result<(matchResults: [(Record.ID, Result<Record, any Error>)], queryCursor: QueryOperation.Cursor?), any Error>
            ) -> Void
    ) {
        completeLater(
            { try await self.records(continuingMatchFrom: queryCursor, desiredKeys: desiredKeys, resultsLimit: resultsLimit) },
            completionHandler)
    }

    /// Runs a query and returns its first batch of records (CloudKit's deprecated
    /// `perform(_:inZoneWith:completionHandler:)`).
    @available(*, deprecated, renamed: "fetch(withQuery:inZoneWith:desiredKeys:resultsLimit:completionHandler:)")
    public func perform(
        _ query: Query, inZoneWith zoneID: RecordZone.ID?, completionHandler: @escaping @Sendable ([Record]?, (any Error)?) -> Void
    ) {
        completeLater(
            {
                try await self.records(matching: query, inZoneWith: zoneID).matchResults.map { try $0.1.get() }
            }, pair: completionHandler)
    }

    // MARK: Zones

    /// Fetches every zone of the database (CloudKit's
    /// `fetchAllRecordZones(completionHandler:)`).
    public func fetchAllRecordZones(completionHandler: @escaping @Sendable ([RecordZone]?, (any Error)?) -> Void) {
        completeLater({ try await self.allRecordZones() }, pair: completionHandler)
    }

    /// Fetches one zone (CloudKit's `fetch(withRecordZoneID:completionHandler:)`).
    public func fetch(
        withRecordZoneID zoneID: RecordZone.ID, completionHandler: @escaping @Sendable (RecordZone?, (any Error)?) -> Void
    ) {
        completeLater({ try await self.recordZone(for: zoneID) }, pair: completionHandler)
    }

    /// Fetches several zones, each with its own result (CloudKit's
    /// `fetch(withRecordZoneIDs:completionHandler:)`).
    public func fetch(
        withRecordZoneIDs zoneIDs: [RecordZone.ID],
        completionHandler: @escaping @Sendable (Result<[RecordZone.ID: Result<RecordZone, any Error>], any Error>) -> Void
    ) {
        completeLater({ try await self.recordZones(for: zoneIDs) }, completionHandler)
    }

    /// Saves one zone (CloudKit's `save(_:completionHandler:)` for zones).
    public func save(_ zone: RecordZone, completionHandler: @escaping @Sendable (RecordZone?, (any Error)?) -> Void) {
        completeLater({ try await self.save(zone) }, pair: completionHandler)
    }

    /// Deletes a zone and its records (CloudKit's
    /// `delete(withRecordZoneID:completionHandler:)`).
    public func delete(
        withRecordZoneID zoneID: RecordZone.ID, completionHandler: @escaping @Sendable (RecordZone.ID?, (any Error)?) -> Void
    ) {
        completeLater({ try await self.deleteRecordZone(withID: zoneID) }, pair: completionHandler)
    }

    /// Saves and deletes zones, each with its own result (CloudKit's
    /// `modifyRecordZones(saving:deleting:completionHandler:)`).
    public func modifyRecordZones(
        saving recordZonesToSave: [RecordZone], deleting recordZoneIDsToDelete: [RecordZone.ID],
        completionHandler:
            @escaping @Sendable (
                Result<
                    (
                        saveResults: [RecordZone.ID: Result<RecordZone, any Error>],
                        deleteResults: [RecordZone.ID: Result<Void, any Error>]
                    ), any Error
                >
            ) -> Void
    ) {
        completeLater(
            { try await self.modifyRecordZones(saving: recordZonesToSave, deleting: recordZoneIDsToDelete) }, completionHandler)
    }

    // MARK: Change feeds

    /// One page of the database's zone changes (CloudKit's
    /// `fetchDatabaseChanges(since:resultsLimit:completionHandler:)`).
    public func fetchDatabaseChanges(
        since changeToken: ServerChangeToken?, resultsLimit: Int? = nil,
        completionHandler:
            @escaping @Sendable (
                Result<
                    (
                        modifications: [DatabaseChange.Modification], deletions: [DatabaseChange.Deletion],
                        changeToken: ServerChangeToken, moreComing: Bool
                    ), any Error
                >
            ) -> Void
    ) {
        completeLater({ try await self.databaseChanges(since: changeToken, resultsLimit: resultsLimit) }, completionHandler)
    }

    /// One page of a zone's record changes (CloudKit's
    /// `fetchRecordZoneChanges(inZoneWith:since:desiredKeys:resultsLimit:completionHandler:)`).
    public func fetchRecordZoneChanges(
        inZoneWith zoneID: RecordZone.ID, since changeToken: ServerChangeToken?, desiredKeys: [Record.FieldKey]? = nil,
        resultsLimit: Int? = nil,
        completionHandler:
            @escaping @Sendable (
                Result<
                    (
                        modificationResultsByID: [Record.ID: Result<RecordZoneChange.Modification, any Error>],
                        deletions: [RecordZoneChange.Deletion], changeToken: ServerChangeToken, moreComing: Bool
                    ), any Error
                >
            ) -> Void
    ) {
        completeLater(
            {
                try await self.recordZoneChanges(
                    inZoneWith: zoneID, since: changeToken, desiredKeys: desiredKeys, resultsLimit: resultsLimit)
            }, completionHandler)
    }
}
