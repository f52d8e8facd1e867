import Foundation
import Synchronization

/// The stored form of the long-lived operations FogKit keeps — ``ModifyRecordsOperation``,
/// ``FetchRecordsOperation`` and ``QueryOperation`` — and of a modify operation's outcome.
///
/// Records are kept as Web Services record dictionaries (`WebServices.RecordDictionary`):
/// type, ID, change tag, dates, users, fields and parent. A record to save made again from one
/// counts every field as changed.
enum LongLivedOperationCodec {
    static let modifyRecords = "modifyRecords"
    static let fetchRecords = "fetchRecords"
    static let query = "query"

    struct ModifyParameters: Codable {
        var recordsToSave: [WebServices.RecordDictionary]?
        var recordIDsToDelete: [Record.ID]?
        var savePolicy: Int
        var isAtomic: Bool
        var clientChangeTokenData: Data?
    }

    struct FetchParameters: Codable {
        var recordIDs: [Record.ID]?
        var desiredKeys: [String]?
    }

    struct QueryParameters: Codable {
        var recordType: String?
        var predicate: String?
        var sortDescriptors: [Query.SortDescriptor]?
        var cursor: QueryCursor?
        var zoneID: RecordZone.ID?
        var desiredKeys: [String]?
        var resultsLimit: Int
    }

    /// An item's error as kept: its code, message and retry delay.
    struct StoredError: Codable {
        var code: Int
        var message: String
        var retryAfterSeconds: Double?

        init(_ error: FogError) {
            code = error.code.rawValue
            message = error.message
            retryAfterSeconds = error.retryAfterSeconds
        }

        var error: FogError {
            FogError(FogError.Code(rawValue: code) ?? .internalError, message: message, retryAfterSeconds: retryAfterSeconds)
        }
    }

    /// A modify operation's outcome as kept: each save's stored record or error and each
    /// delete's error, in request order.
    struct ModifyOutcomeSnapshot: Codable {
        struct Save: Codable {
            var id: Record.ID
            var record: WebServices.RecordDictionary?
            var error: StoredError?
        }
        struct Delete: Codable {
            var id: Record.ID
            var error: StoredError?
        }
        var saves: [Save]
        var deletes: [Delete]
    }

    /// The kind and parameters `operation` is kept with; `nil` for a kind FogKit does not keep.
    static func parameters(of operation: DatabaseOperation) throws -> (kind: String, parameters: Data)? {
        let encoder = JSONEncoder()
        switch operation {
        case let op as ModifyRecordsOperation:
            let parameters = ModifyParameters(
                recordsToSave: try op.recordsToSave?.map { try WebServices.RecordDictionary($0) },
                recordIDsToDelete: op.recordIDsToDelete, savePolicy: op.savePolicy.rawValue, isAtomic: op.isAtomic,
                clientChangeTokenData: op.clientChangeTokenData)
            return (modifyRecords, try encoder.encode(parameters))
        case let op as FetchRecordsOperation:
            return (fetchRecords, try encoder.encode(FetchParameters(recordIDs: op.recordIDs, desiredKeys: op.desiredKeys)))
        case let op as QueryOperation:
            let parameters = QueryParameters(
                recordType: op.query?.recordType, predicate: op.query?.predicate.description, sortDescriptors: op.query?.sortDescriptors,
                cursor: op.cursor, zoneID: op.zoneID, desiredKeys: op.desiredKeys, resultsLimit: op.resultsLimit)
            return (query, try encoder.encode(parameters))
        default:
            return nil
        }
    }

    /// A new operation of the kept operation's class with its parameters, its ID and its
    /// database; `nil` for a kind this FogKit does not know.
    static func operation(_ stored: StoredOperation, operationID: String, container: Container) throws -> DatabaseOperation? {
        let decoder = JSONDecoder()
        let made: DatabaseOperation
        switch stored.kind {
        case modifyRecords:
            let p = try decoder.decode(ModifyParameters.self, from: stored.parameters)
            let op = ModifyRecordsOperation(
                recordsToSave: try p.recordsToSave?.map { try Record($0) }, recordIDsToDelete: p.recordIDsToDelete)
            op.savePolicy = RecordSavePolicy(rawValue: p.savePolicy) ?? .ifServerRecordUnchanged
            op.isAtomic = p.isAtomic
            op.clientChangeTokenData = p.clientChangeTokenData
            made = op
        case fetchRecords:
            let p = try decoder.decode(FetchParameters.self, from: stored.parameters)
            let op = FetchRecordsOperation()
            op.recordIDs = p.recordIDs
            op.desiredKeys = p.desiredKeys
            made = op
        case query:
            let p = try decoder.decode(QueryParameters.self, from: stored.parameters)
            let op = QueryOperation()
            if let type = p.recordType, let predicate = p.predicate {
                let query = Query(recordType: type, predicate: try QueryPredicate(format: predicate))
                query.sortDescriptors = p.sortDescriptors
                op.query = query
            }
            op.cursor = p.cursor
            op.zoneID = p.zoneID
            op.desiredKeys = p.desiredKeys
            op.resultsLimit = p.resultsLimit
            made = op
        default:
            return nil
        }
        made.operationID = operationID
        made.configuration.isLongLived = true
        guard let scope = Database.Scope(rawValue: stored.scope) else {
            throw FogError(.internalError, message: "long-lived operation \(operationID) names an unknown database scope \(stored.scope)")
        }
        made.database = container.database(with: scope)
        return made
    }

    /// A modify outcome as kept (in the transaction that commits it).
    static func encode(_ outcome: ModifyOutcome) throws -> Data {
        let snapshot = ModifyOutcomeSnapshot(
            saves: try outcome.saveResults.map { id, result in
                switch result {
                case .success(let record): .init(id: id, record: try WebServices.RecordDictionary(record), error: nil)
                case .failure(let error): .init(id: id, record: nil, error: StoredError(error))
                }
            },
            deletes: outcome.deleteResults.map { id, result in
                switch result {
                case .success: .init(id: id, error: nil)
                case .failure(let error): .init(id: id, error: StoredError(error))
                }
            })
        return try JSONEncoder().encode(snapshot)
    }

    /// The modify outcome kept in `data`, its records as they were returned.
    static func decodeOutcome(_ data: Data) throws -> ModifyOutcome {
        let snapshot = try JSONDecoder().decode(ModifyOutcomeSnapshot.self, from: data)
        var outcome = ModifyOutcome()
        for save in snapshot.saves {
            if let dictionary = save.record {
                let record = try Record(dictionary, zoneID: save.id.zoneID)
                record.markSaved()
                outcome.saveResults.append((save.id, .success(record)))
            } else {
                outcome.saveResults.append((save.id, .failure(save.error?.error ?? FogError(.internalError))))
            }
        }
        for delete in snapshot.deletes {
            outcome.deleteResults.append((delete.id, delete.error.map { .failure($0.error) } ?? .success(())))
        }
        return outcome
    }
}

extension Record {
    /// Clears the changed keys, as a record a save returns has none.
    fileprivate func markSaved() {
        state.withLock { $0.forgetChanges() }
    }
}
