import FogKit
import Foundation

extension RecordEndpoints {
    struct ModifyRequest: Decodable {
        /// One operation; a record that does not decode fails its operation only.
        struct Operation: Decodable {
            var operationType: String
            var record: WebServices.RecordDictionary
            var formatError: ServerError?
            /// The record has no `recordName` (a create may leave it out).
            var unnamed = false
            /// The sharing keys of a record of type `cloudkit.share`.
            var share: ShareInput?

            enum CodingKeys: String, CodingKey { case operationType, record }
            enum NameKey: String, CodingKey { case recordName }

            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                operationType = try c.decode(String.self, forKey: .operationType)
                do {
                    record = try c.decode(WebServices.RecordDictionary.self, forKey: .record)
                    if ShareInput.isShareType(record.recordType) { share = try c.decode(ShareInput.self, forKey: .record) }
                } catch {
                    let name = try? c.nestedContainer(keyedBy: NameKey.self, forKey: .record).decode(String.self, forKey: .recordName)
                    record = WebServices.RecordDictionary(recordName: name ?? "")
                    unnamed = name == nil
                    formatError = ServerError(.badRequest, "the record is not valid: \(WebServices.FormatError(error).description)")
                }
            }
        }
        var operations: [Operation]
        var zoneID: WebServices.ZoneID?
        var atomic: Bool?
        var desiredKeys: [String]?
        var numbersAsStrings: Bool?
    }

    /// The most operations one `records/modify` takes.
    static let maximumOperations = 200

    /// `records/modify`: the seven operation types, one result per operation in request
    /// order. With `atomic` (the default) in a custom zone a failure writes nothing: the
    /// failing operation carries its own error, the others `ATOMIC_ERROR`; the status stays 200.
    /// Saves of `cloudkit.share` records are made by ``ShareOperation`` after the others, in
    /// the same FogKit batch.
    @Sendable static func modify(_ call: EndpointCall) async throws -> JSON {
        var request = try call.decode(ModifyRequest.self)
        if request.operations.contains(where: { $0.unnamed && $0.operationType == "create" }) {
            // Only then is the body read a second time, to name those records.
            request = try call.decode(ModifyRequest.self, fillingRecordNames: true)
        }
        guard !request.operations.isEmpty else { throw ServerError(.badRequest, "operations is empty") }
        guard request.operations.count <= maximumOperations else {
            throw ServerError(.badRequest, "\(request.operations.count) operations in one request; the limit is \(maximumOperations)")
        }
        let me = await call.callerRecordName()
        let output = RecordOutput(call, callerRecordName: me, numbersAsStrings: request.numbersAsStrings)
        let batchZone = call.zoneID(request.zoneID, callerRecordName: me)
        let atomic = request.atomic ?? true

        // The stored types of records that updates and deletes name without a type.
        var zones: [RecordZone.ID] = []
        var untyped: [Record.ID] = []
        for operation in request.operations {
            let zone = operation.record.zoneID.map { call.zoneID($0, callerRecordName: me) } ?? batchZone
            zones.append(zone)
            if operation.formatError == nil, operation.record.recordType == nil || operation.record.recordType?.isEmpty == true {
                untyped.append(Record.ID(recordName: operation.record.recordName, zoneID: zone))
            }
        }
        var storedTypes: [Record.ID: String] = [:]
        if !untyped.isEmpty {
            for (id, result) in try await call.database.records(for: untyped, desiredKeys: []) {
                if case .success(let record) = result { storedTypes[id] = record.recordType }
            }
        }

        var operations: [WebServices.RecordOperation] = []
        // Each FogKit operation's index in the request; nil for a share's root that the
        // server adds to the batch (FogKit saves a new share with its root).
        var positions: [Int?] = []
        var results = [JSON?](repeating: nil, count: request.operations.count)
        var shareOperations: [Int] = []
        for (i, operation) in request.operations.enumerated() {
            let id = Record.ID(recordName: operation.record.recordName, zoneID: zones[i])
            if operation.formatError == nil, operation.operationType != "delete", operation.operationType != "forceDelete",
                ShareInput.isShareType(operation.record.recordType ?? storedTypes[id])
            {
                shareOperations.append(i)
                continue
            }
            do {
                operations.append(try recordOperation(operation, zone: zones[i], storedTypes: storedTypes, call: call, index: i))
                positions.append(i)
            } catch {
                results[i] = output.error(error, recordName: operation.record.recordName)
            }
        }
        // Shares last, so that a root saved in the same batch is not saved twice.
        var saved = Set(operations.map(\.recordID))
        for i in shareOperations {
            let operation = request.operations[i]
            do {
                let made = try await ShareOperation.make(operation, zone: zones[i], batch: operations, call: call, index: i)
                operations.append(made.share)
                positions.append(i)
                saved.insert(made.share.recordID)
                if let root = made.root, !saved.contains(root.recordID) {
                    operations.append(root)
                    positions.append(nil)
                    saved.insert(root.recordID)
                }
            } catch {
                results[i] = output.error(error, recordName: operation.record.recordName)
            }
        }
        if atomic, results.contains(where: { $0 != nil }), zones.contains(where: { !$0.isDefaultZone }) {
            // A malformed operation fails an atomic batch before anything is written.
            for i in results.indices where results[i] == nil {
                results[i] = output.error(
                    ServerError(.atomicError, "another operation of the atomic batch failed"),
                    recordName: request.operations[i].record.recordName)
            }
            return .object([("records", .array(results.map { $0! }))])
        }
        if !operations.isEmpty {
            let outcomes = try await call.database.modify(operations, atomically: atomic)
            for (k, outcome) in outcomes.enumerated() {
                guard let i = positions[k] else { continue }
                let name = request.operations[i].record.recordName
                switch outcome {
                case .success(let record?): results[i] = try output.record(record, desiredKeys: request.desiredKeys)
                case .success(nil): results[i] = output.tombstone(operations[k].recordID)
                case .failure(let error):
                    if request.operations[i].operationType == "create", (error as? FogError)?.code == .serverRecordChanged {
                        results[i] = output.error(ServerError(.exists, "record \(name) already exists"), recordName: name)
                    } else {
                        results[i] = output.error(error, recordName: name)
                    }
                }
            }
        }
        return .object([("records", .array(results.map { $0! }))])
    }

    /// The FogKit operation of one Web Services operation.
    static func recordOperation(
        _ operation: ModifyRequest.Operation, zone: RecordZone.ID, storedTypes: [Record.ID: String], call: EndpointCall, index: Int
    ) throws -> WebServices.RecordOperation {
        var dictionary = operation.record
        let id = Record.ID(recordName: dictionary.recordName, zoneID: zone)
        let type = operation.operationType
        if let error = operation.formatError { throw error }
        switch type {
        case "delete":
            guard let tag = dictionary.recordChangeTag else {
                throw ServerError(.badRequest, "operations[\(index)]: delete needs the record's recordChangeTag (or use forceDelete)")
            }
            return .delete(id, recordChangeTag: tag)
        case "forceDelete":
            return .forceDelete(id)
        case "create", "update", "forceUpdate", "replace", "forceReplace":
            if dictionary.recordType == nil || dictionary.recordType?.isEmpty == true {
                guard let stored = storedTypes[id] else {
                    if type == "update" || type == "replace" { throw ServerError(.notFound, "record \(id.recordName) does not exist") }
                    throw ServerError(.badRequest, "operations[\(index)].record.recordType is missing")
                }
                dictionary.recordType = stored
            }
            if type == "create", dictionary.recordChangeTag != nil {
                throw ServerError(.badRequest, "operations[\(index)]: a create has no recordChangeTag")
            }
            if type == "update" || type == "replace", dictionary.recordChangeTag == nil {
                throw ServerError(
                    .badRequest,
                    "operations[\(index)]: \(type) needs the record's recordChangeTag (or use force\(type.prefix(1).uppercased() + type.dropFirst()))"
                )
            }
            if type.hasPrefix("force") || type == "create" { dictionary.recordChangeTag = nil }
            let record = try RecordInput.record(from: dictionary, zone: zone, call: call)
            switch type {
            case "create": return .create(record)
            case "update": return .update(record)
            case "forceUpdate": return .forceUpdate(record)
            case "replace": return .replace(record)
            default: return .forceReplace(record)
            }
        default:
            throw ServerError(.badRequest, "operations[\(index)].operationType: unknown operation type \"\(type)\"")
        }
    }
}

extension EndpointCall {
    /// The body as a modify request, with a new UUID as the `recordName` of each record
    /// that has none (CloudKit names records a create leaves unnamed).
    func decode<T: Decodable>(_ type: T.Type, fillingRecordNames: Bool) throws(ServerError) -> T {
        guard fillingRecordNames, var object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
            var operations = object["operations"] as? [Any]
        else { return try decode(type) }
        var changed = false
        for i in operations.indices {
            guard var operation = operations[i] as? [String: Any], var record = operation["record"] as? [String: Any],
                record["recordName"] == nil
            else { continue }
            record["recordName"] = UUID().uuidString
            operation["record"] = record
            operations[i] = operation
            changed = true
        }
        guard changed else { return try decode(type) }
        object["operations"] = operations
        guard let data = try? JSONSerialization.data(withJSONObject: object) else { return try decode(type) }
        let filled = EndpointCall(
            route: route, caller: caller, container: container, body: Array(data), query: query, state: state, request: request)
        return try filled.decode(type)
    }
}
