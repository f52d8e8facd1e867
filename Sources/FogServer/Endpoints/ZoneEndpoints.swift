import FogKit
import Foundation

/// `zones/list`, `zones/lookup` and `zones/modify`.
enum ZoneEndpoints {
    /// A zone dictionary: `zoneID`, `atomic` and, for zones with a change feed, `syncToken`.
    static func dictionary(_ zone: RecordZone, output: RecordOutput, call: EndpointCall) async -> JSON {
        var members: [(String, JSON)] = [("zoneID", output.zoneIDJSON(zone.zoneID))]
        if zone.capabilities.contains(.fetchChanges),
            let token = try? await call.database.currentChangeToken(forZoneWith: zone.zoneID)
        {
            members.append(("syncToken", .string(token.data.base64EncodedString())))
        }
        members.append(("atomic", .bool(zone.capabilities.contains(.atomic))))
        return .object(members)
    }

    static func error(_ error: any Error, zoneID: RecordZone.ID, output: RecordOutput, call: EndpointCall) -> JSON {
        ServerError(error, signIn: call.state.signInURL).item([("zoneID", output.zoneIDJSON(zoneID))])
    }

    /// `zones/list`: every zone of the database.
    @Sendable static func list(_ call: EndpointCall) async throws -> JSON {
        let output = RecordOutput(call, callerRecordName: await call.callerRecordName())
        var zones: [JSON] = []
        for zone in try await call.database.allRecordZones() { zones.append(await dictionary(zone, output: output, call: call)) }
        return .object([("zones", .array(zones))])
    }

    struct LookupRequest: Decodable {
        var zones: [WebServices.ZoneID]
    }

    /// `zones/lookup`: the zones asked for, in order, each a zone or `ZONE_NOT_FOUND`.
    @Sendable static func lookup(_ call: EndpointCall) async throws -> JSON {
        let request = try call.decode(LookupRequest.self)
        let me = await call.callerRecordName()
        let output = RecordOutput(call, callerRecordName: me)
        let ids = request.zones.map { call.zoneID($0, callerRecordName: me) }
        let found = try await call.database.recordZones(for: ids)
        var zones: [JSON] = []
        for id in ids {
            switch found[id] {
            case .success(let zone)?: zones.append(await dictionary(zone, output: output, call: call))
            case .failure(let e)?: zones.append(error(e, zoneID: id, output: output, call: call))
            case nil:
                zones.append(
                    error(FogError(.zoneNotFound, message: "zone \(id.zoneName) does not exist"), zoneID: id, output: output, call: call))
            }
        }
        return .object([("zones", .array(zones))])
    }

    struct ModifyRequest: Decodable {
        struct Operation: Decodable {
            struct Zone: Decodable {
                var zoneID: WebServices.ZoneID
            }
            var operationType: String
            var zone: Zone
        }
        var operations: [Operation]
    }

    /// `zones/modify`: creates and deletes zones, one result per operation in order; a
    /// delete answers `{zoneID, deleted: true}`.
    @Sendable static func modify(_ call: EndpointCall) async throws -> JSON {
        let request = try call.decode(ModifyRequest.self)
        guard !request.operations.isEmpty else { throw ServerError(.badRequest, "operations is empty") }
        let me = await call.callerRecordName()
        let output = RecordOutput(call, callerRecordName: me)
        var saves: [RecordZone] = []
        var deletes: [RecordZone.ID] = []
        var results = [JSON?](repeating: nil, count: request.operations.count)
        for (i, operation) in request.operations.enumerated() {
            let id = call.zoneID(operation.zone.zoneID, callerRecordName: me)
            switch operation.operationType {
            case "create": saves.append(RecordZone(zoneID: id))
            case "delete": deletes.append(id)
            default:
                results[i] = error(
                    ServerError(.badRequest, "operations[\(i)].operationType: unknown zone operation \"\(operation.operationType)\""),
                    zoneID: id, output: output, call: call)
            }
        }
        let outcome = try await call.database.modifyRecordZones(saving: saves, deleting: deletes)
        for (i, operation) in request.operations.enumerated() where results[i] == nil {
            let id = call.zoneID(operation.zone.zoneID, callerRecordName: me)
            if operation.operationType == "create" {
                switch outcome.saveResults[id] {
                case .success(let zone)?: results[i] = await dictionary(zone, output: output, call: call)
                case .failure(let e)?: results[i] = error(e, zoneID: id, output: output, call: call)
                case nil: results[i] = error(FogError(.internalError, message: "no result"), zoneID: id, output: output, call: call)
                }
            } else {
                switch outcome.deleteResults[id] {
                case .success?: results[i] = .object([("zoneID", output.zoneIDJSON(id)), ("deleted", .bool(true))])
                case .failure(let e)?: results[i] = error(e, zoneID: id, output: output, call: call)
                case nil: results[i] = error(FogError(.internalError, message: "no result"), zoneID: id, output: output, call: call)
                }
            }
        }
        return .object([("zones", .array(results.map { $0! }))])
    }
}
