import FogKit
import Foundation

/// `records/query`, `records/lookup` and `records/modify`.
enum RecordEndpoints {
    struct QueryRequest: Decodable {
        var query: QueryDictionary
        var zoneID: WebServices.ZoneID?
        var zoneWide: Bool?
        var resultsLimit: Int?
        var continuationMarker: String?
        var desiredKeys: [String]?
        var numbersAsStrings: Bool?
    }

    /// The most records a page holds, as CloudKit Web Services' limit.
    static let maximumResults = 200

    /// `records/query`: one page of the records that match, and a `continuationMarker` when
    /// more are left.
    @Sendable static func query(_ call: EndpointCall) async throws -> JSON {
        let request = try call.decode(QueryRequest.self)
        let me = await call.callerRecordName()
        let output = RecordOutput(call, callerRecordName: me, numbersAsStrings: request.numbersAsStrings)
        let limit = try pageSize(request.resultsLimit)
        // `zoneWide` without a zone searches every zone; otherwise the zone given, or the default.
        let zone: RecordZone.ID? =
            request.zoneID == nil && request.zoneWide == true ? nil : call.zoneID(request.zoneID, callerRecordName: me)
        let page: (matchResults: [(Record.ID, Result<Record, any Error>)], queryCursor: QueryOperation.Cursor?)
        if let marker = request.continuationMarker {
            page = try await call.database.records(
                continuingMatchFrom: try ContinuationMarker.cursor(marker), desiredKeys: request.desiredKeys, resultsLimit: limit)
        } else {
            let query: Query
            do {
                query = try request.query.query(zone: zone ?? .default)
            } catch let error as FogError {
                throw ServerError(.badRequest, "query: \(error.message)")
            }
            page = try await call.database.records(matching: query, inZoneWith: zone, desiredKeys: request.desiredKeys, resultsLimit: limit)
        }
        var records: [JSON] = []
        records.reserveCapacity(page.matchResults.count)
        for (id, result) in page.matchResults {
            switch result {
            case .success(let record): records.append(try output.record(record))
            case .failure(let error): records.append(output.error(error, recordName: id.recordName))
            }
        }
        var members: [(String, JSON)] = [("records", .array(records))]
        if let cursor = page.queryCursor { members.append(("continuationMarker", .string(try ContinuationMarker.marker(cursor)))) }
        return .object(members)
    }

    /// A `resultsLimit`: 1 to 200, 200 when left out.
    static func pageSize(_ limit: Int?) throws(ServerError) -> Int {
        guard let limit else { return maximumResults }
        guard limit > 0 else { throw ServerError(.badRequest, "resultsLimit must be positive, not \(limit)") }
        return min(limit, maximumResults)
    }
}

/// Query cursors as `continuationMarker`s: the cursor's JSON, base64-encoded (clients
/// such as OpenCloudKit decode the marker as base64 and stop paging when they cannot).
enum ContinuationMarker {
    static func marker(_ cursor: QueryOperation.Cursor) throws -> String {
        try JSONEncoder().encode(cursor).base64EncodedString()
    }

    static func cursor(_ marker: String) throws(ServerError) -> QueryOperation.Cursor {
        guard let data = Data(base64Encoded: marker), let cursor = try? JSONDecoder().decode(QueryOperation.Cursor.self, from: data) else {
            throw ServerError(.badRequest, "continuationMarker is not a marker this server gave out")
        }
        return cursor
    }
}
