import FogKit
import Foundation

/// The change feeds: `changes/database`, `changes/zone`, and the older `zones/changes` and
/// `records/changes`.
enum ChangeEndpoints {
    /// A change token as `syncToken`: its bytes in base64.
    static func syncToken(_ token: ServerChangeToken) -> JSON { .string(token.data.base64EncodedString()) }

    static func token(_ text: String?, key: String) throws(ServerError) -> ServerChangeToken? {
        guard let text, !text.isEmpty else { return nil }
        guard let data = Data(base64Encoded: text) else { throw ServerError(.badRequest, "\(key) is not base64") }
        return ServerChangeToken(data: data)
    }

    // MARK: - Database

    struct DatabaseRequest: Decodable {
        var syncToken: String?
        var metaSyncToken: String?
        var resultsLimit: Int?
    }

    /// The zones of a database page: each changed zone's dictionary, each deleted zone as
    /// `{zoneID, deleted: true}`.
    static func databasePage(_ call: EndpointCall, request: DatabaseRequest, tokenKey: String) async throws -> JSON {
        let output = RecordOutput(call, callerRecordName: await call.callerRecordName())
        let since = try token(request.syncToken ?? request.metaSyncToken, key: tokenKey)
        let page = try await call.database.databaseChanges(since: since, resultsLimit: try RecordEndpoints.pageSize(request.resultsLimit))
        var zones: [JSON] = []
        let ids = page.modifications.map(\.zoneID)
        let found = ids.isEmpty ? [:] : try await call.database.recordZones(for: ids)
        for id in ids {
            if case .success(let zone)? = found[id] {
                zones.append(await ZoneEndpoints.dictionary(zone, output: output, call: call))
            } else {
                zones.append(.object([("zoneID", output.zoneIDJSON(id))]))
            }
        }
        for deletion in page.deletions {
            zones.append(.object([("zoneID", output.zoneIDJSON(deletion.zoneID)), ("deleted", .bool(true))]))
        }
        return .object([("zones", .array(zones)), (tokenKey, syncToken(page.changeToken)), ("moreComing", .bool(page.moreComing))])
    }

    /// `changes/database`: the zones that changed since `syncToken`.
    @Sendable static func database(_ call: EndpointCall) async throws -> JSON {
        try await databasePage(call, request: try call.decode(DatabaseRequest.self), tokenKey: "syncToken")
    }

    /// `zones/changes` (deprecated): as `changes/database`, with `metaSyncToken` (`syncToken`
    /// accepted too).
    @Sendable static func zoneListChanges(_ call: EndpointCall) async throws -> JSON {
        try await databasePage(call, request: try call.decode(DatabaseRequest.self), tokenKey: "metaSyncToken")
    }

    // MARK: - Zone

    struct ZoneOptions: Decodable {
        var zoneID: WebServices.ZoneID?
        var syncToken: String?
        var resultsLimit: Int?
        var desiredKeys: [String]?
        var desiredRecordTypes: [String]?
        var reverse: Bool?
        var numbersAsStrings: Bool?
        var numberAsStrings: Bool?
    }

    struct ZoneRequest: Decodable {
        var zones: [ZoneOptions]
        var resultsLimit: Int?
        var desiredKeys: [String]?
        var desiredRecordTypes: [String]?
        var reverse: Bool?
        var numbersAsStrings: Bool?
        var numberAsStrings: Bool?
    }

    /// One zone's page: `{zoneID, syncToken, records, moreComing}`, changed records first
    /// in commit order, then tombstones.
    static func zonePage(
        _ call: EndpointCall, options: ZoneOptions, defaults: ZoneOptions, output: RecordOutput, me: String?
    ) async throws
        -> [(String, JSON)]
    {
        guard let requested = options.zoneID else { throw ServerError(.badRequest, "zoneID is missing") }
        if options.reverse ?? defaults.reverse ?? false {
            throw ServerError(.badRequest, "reverse is not supported: changes come oldest first")
        }
        let zoneID = call.zoneID(requested, callerRecordName: me)
        let since = try token(options.syncToken, key: "syncToken")
        let desiredKeys = options.desiredKeys ?? defaults.desiredKeys
        let page = try await ZoneChangeFetch.page(
            call.database, zoneID: zoneID, since: since, desiredKeys: desiredKeys,
            resultsLimit: try RecordEndpoints.pageSize(options.resultsLimit ?? defaults.resultsLimit))
        guard let nextToken = page.token else { throw ServerError(.internalError, "the change feed gave no token") }
        let types = (options.desiredRecordTypes ?? defaults.desiredRecordTypes).map(Set.init)
        var records: [JSON] = []
        for (id, result) in page.changed {
            switch result {
            case .success(let record): if types?.contains(record.recordType) ?? true { records.append(try output.record(record)) }
            case .failure(let error): records.append(output.error(error, recordName: id.recordName))
            }
        }
        for (id, type) in page.deleted where types?.contains(type) ?? true {
            records.append(output.tombstone(id, recordType: type))
        }
        return [
            ("zoneID", output.zoneIDJSON(zoneID)), ("syncToken", syncToken(nextToken)), ("moreComing", .bool(page.moreComing)),
            ("records", .array(records)),
        ]
    }

    /// `changes/zone`: a page of each zone's record changes, or the zone's error.
    @Sendable static func zone(_ call: EndpointCall) async throws -> JSON {
        let request = try call.decode(ZoneRequest.self)
        guard !request.zones.isEmpty else { throw ServerError(.badRequest, "zones is empty") }
        let me = await call.callerRecordName()
        let output = RecordOutput(
            call, callerRecordName: me, numbersAsStrings: request.numbersAsStrings ?? request.numberAsStrings)
        let defaults = ZoneOptions(
            resultsLimit: request.resultsLimit, desiredKeys: request.desiredKeys, desiredRecordTypes: request.desiredRecordTypes,
            reverse: request.reverse)
        var zones: [JSON] = []
        for options in request.zones {
            do {
                zones.append(.object(try await zonePage(call, options: options, defaults: defaults, output: output, me: me)))
            } catch {
                let id = options.zoneID.map { call.zoneID($0, callerRecordName: me) } ?? .default
                zones.append(ZoneEndpoints.error(error, zoneID: id, output: output, call: call))
            }
        }
        return .object([("zones", .array(zones))])
    }

    /// `records/changes` (the older single-zone feed): `{records, syncToken, moreComing, reverse}`.
    @Sendable static func recordChanges(_ call: EndpointCall) async throws -> JSON {
        let options = try call.decode(ZoneOptions.self)
        let me = await call.callerRecordName()
        let output = RecordOutput(call, callerRecordName: me, numbersAsStrings: options.numbersAsStrings ?? options.numberAsStrings)
        var members = try await zonePage(call, options: options, defaults: ZoneOptions(), output: output, me: me)
        members.removeAll { $0.0 == "zoneID" }
        members.append(("reverse", .bool(false)))
        return .object(members)
    }
}
