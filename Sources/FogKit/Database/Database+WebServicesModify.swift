import Foundation

extension Database {
    /// Runs `operations` as one request, each with its own semantics (CloudKit Web Services'
    /// `records/modify`, see ``WebServices/RecordOperation``), and returns their results in
    /// request order: `.success(record)` for a save (the record as stored, as
    /// ``modifyRecords(saving:deleting:savePolicy:atomically:)`` returns it), `.success(nil)`
    /// for a delete, `.failure(error)` for an operation that failed.
    ///
    /// With `atomically`, the operations in each zone that has the atomic capability are
    /// applied all or nothing, as ``modifyRecords(saving:deleting:savePolicy:atomically:)``
    /// applies them: when one fails it gets its own error, the other operations of its zone
    /// ``FogError/Code/batchRequestFailed``, and nothing of that zone is written. Without it,
    /// each operation stands alone. Unlike `modifyRecords`, a failed operation never makes
    /// the method throw ``FogError/Code/partialFailure``: its error is in the results. A
    /// record ID may appear once per request (every occurrence of a repeated one fails with
    /// ``FogError/Code/invalidArguments``).
    ///
    /// ```swift
    /// let results = try await database.modify(
    ///     [.create(note), .update(edited), .delete(oldID, recordChangeTag: tag)], atomically: true)
    /// if case .failure(let error as FogError) = results[1], error.code == .serverRecordChanged {
    ///     print("stale:", error.serverRecord?.recordChangeTag ?? "")
    /// }
    /// ```
    ///
    /// - Throws: ``FogError`` for the request as a whole, as `modifyRecords` does:
    ///   `notAuthenticated` without a user, `limitExceeded` for more than 400 operations or
    ///   too many bytes of record data.
    public func modify(_ operations: [WebServices.RecordOperation], atomically: Bool) async throws -> [Result<Record?, any Error>] {
        try checkOpen()
        // The engine takes the saves and the deletes apart: each operation's place in them.
        var saves: [Record] = []
        var rules: [SaveRule] = []
        var deletes: [Record.ID] = []
        var deleteTags: [Int: String] = [:]
        var places: [(isSave: Bool, index: Int)] = []
        places.reserveCapacity(operations.count)
        for operation in operations {
            func save(_ record: Record, _ rule: SaveRule) {
                places.append((true, saves.count))
                saves.append(record)
                rules.append(rule)
            }
            switch operation {
            case .create(let r): save(r, .create)
            case .update(let r): save(r, .update)
            case .forceUpdate(let r): save(r, .forceUpdate)
            case .replace(let r): save(r, .replace)
            case .forceReplace(let r): save(r, .forceReplace)
            case .delete(let id, let tag):
                deleteTags[deletes.count] = tag
                places.append((false, deletes.count))
                deletes.append(id)
            case .forceDelete(let id):
                places.append((false, deletes.count))
                deletes.append(id)
            }
        }
        let outcome = try await engine.writer.modify(
            saving: saves, deleting: deletes, policy: .ifServerRecordUnchanged, atomic: atomically, limits: limits,
            context: context, saveRules: rules, deleteTags: deleteTags)
        return places.map { place -> Result<Record?, any Error> in
            if place.isSave {
                return outcome.saveResults[place.index].1.map { Optional($0) }.mapError { $0 }
            }
            return outcome.deleteResults[place.index].1.map { nil }.mapError { $0 }
        }
    }
}
