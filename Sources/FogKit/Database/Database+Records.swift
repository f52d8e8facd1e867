import Foundation

extension Database {
    /// Saves a record with the ``RecordSavePolicy/ifServerRecordUnchanged`` policy.
    ///
    /// - Returns: The record as stored: a new instance with the new change tag,
    ///   dates and user IDs.
    /// - Throws: ``FogError`` — `serverRecordChanged` for a stale change tag or a
    ///   new record whose ID exists, `zoneNotFound`, `invalidArguments` for a bad
    ///   name, key or value type, `limitExceeded` for an oversized record.
    @discardableResult
    public func save(_ record: Record) async throws -> Record {
        try checkOpen()
        let outcome = try await engine.writer.modify(
            saving: [record], deleting: [], policy: .ifServerRecordUnchanged, atomic: false, limits: limits, context: context)
        return try outcome.saveResults[0].1.get()
    }

    /// Fetches one record.
    /// - Throws: ``FogError/Code/unknownItem`` when it does not exist.
    public func record(for recordID: Record.ID) async throws -> Record {
        try checkOpen()
        return try engine.reader.fetch(recordID, context: context).get()
    }

    /// Fetches records by ID, each with its own result; `desiredKeys` limits the
    /// fields returned (`nil` for all, `[]` for none).
    public func records(
        for ids: [Record.ID], desiredKeys: [Record.FieldKey]? = nil
    ) async throws -> [Record.ID: Result<Record, any Error>] {
        try checkOpen()
        // Straight into the dictionary: no array of results in between.
        var results: [Record.ID: Result<Record, any Error>] = [:]
        results.reserveCapacity(ids.count)
        try engine.reader.fetch(ids, desiredKeys: desiredKeys, context: context) { id, result in results[id] = result.mapError { $0 } }
        return results
    }

    /// Deletes a record, and the records that reference it with `deleteSelf`
    /// (those cascaded deletions are not reported).
    /// - Throws: ``FogError/Code/unknownItem`` when it does not exist.
    @discardableResult
    public func deleteRecord(withID recordID: Record.ID) async throws -> Record.ID {
        try checkOpen()
        let outcome = try await engine.writer.modify(
            saving: [], deleting: [recordID], policy: .ifServerRecordUnchanged, atomic: false, limits: limits, context: context)
        try outcome.deleteResults[0].1.get()
        return recordID
    }

    /// Saves and deletes records in one request.
    ///
    /// Each item gets its own result. With `atomically` (the default), the changes
    /// in each zone that has the atomic capability are applied all or nothing, and
    /// the method throws ``FogError/Code/partialFailure`` when any item fails; the
    /// failing item carries its error and the others of its zone
    /// ``FogError/Code/batchRequestFailed``. Without it, each item stands alone and
    /// failures are only reported in the results.
    ///
    /// - Throws: `limitExceeded` for more than 400 items or 2 MB; `notAuthenticated`
    ///   without a user; `partialFailure` in the atomic case above.
    public func modifyRecords(
        saving recordsToSave: [Record], deleting recordIDsToDelete: [Record.ID],
        savePolicy: RecordSavePolicy = .ifServerRecordUnchanged, atomically: Bool = true
    ) async throws -> (saveResults: [Record.ID: Result<Record, any Error>], deleteResults: [Record.ID: Result<Void, any Error>]) {
        try checkOpen()
        let outcome = try await engine.writer.modify(
            saving: recordsToSave, deleting: recordIDsToDelete, policy: savePolicy.savePolicy, atomic: atomically, limits: limits,
            context: context)
        if atomically {
            var partial: [AnyHashable: any Error] = [:]
            for (id, result) in outcome.saveResults { if case .failure(let e) = result { partial[id] = e } }
            for (id, result) in outcome.deleteResults { if case .failure(let e) = result { partial[id] = e } }
            if !partial.isEmpty {
                throw FogError(
                    .partialFailure, message: "\(partial.count) of \(recordsToSave.count + recordIDsToDelete.count) changes failed",
                    partialErrorsByItemID: partial)
            }
        }
        return (Self.dictionary(outcome.saveResults), Self.dictionary(outcome.deleteResults))
    }

    static func dictionary<V>(_ pairs: [(Record.ID, Result<V, FogError>)]) -> [Record.ID: Result<V, any Error>] {
        var result = [Record.ID: Result<V, any Error>](room: pairs.count)
        for (id, r) in pairs { result[id] = r.mapError { $0 } }
        return result
    }
}
