import FogKit
import Foundation

extension RecordEndpoints {
    struct LookupRequest: QuickDecodable, Equatable {
        struct Item: Decodable, Equatable {
            var recordName: String
            var desiredKeys: [String]?
        }
        var records: [Item]
        var zoneID: WebServices.ZoneID?
        var desiredKeys: [String]?
        var numbersAsStrings: Bool?

        init?(_ input: JSONInput) {
            guard case .object = input, case .array(let items)? = input["records"],
                let zoneID = JSONInput.optional(input["zoneID"], WebServices.ZoneID.init),
                let desiredKeys = JSONInput.optional(input["desiredKeys"], \.strings),
                let numbersAsStrings = JSONInput.optional(input["numbersAsStrings"], \.bool)
            else { return nil }
            var records: [Item] = []
            records.reserveCapacity(items.count)
            for item in items {
                guard case .object = item, let recordName = item["recordName"]?.string,
                    let desiredKeys = JSONInput.optional(item["desiredKeys"], \.strings)
                else { return nil }
                records.append(Item(recordName: recordName, desiredKeys: desiredKeys))
            }
            self.records = records
            self.zoneID = zoneID
            self.desiredKeys = desiredKeys
            self.numbersAsStrings = numbersAsStrings
        }
    }

    /// `records/lookup`: the records asked for, in request order, each a record or a
    /// `NOT_FOUND` item.
    @Sendable static func lookup(_ call: EndpointCall) async throws -> JSON {
        let request = try call.decode(LookupRequest.self)
        guard request.records.count <= maximumResults else {
            throw ServerError(.badRequest, "\(request.records.count) records in one lookup; the limit is \(maximumResults)")
        }
        let me = await call.callerRecordName()
        let output = RecordOutput(call, callerRecordName: me, numbersAsStrings: request.numbersAsStrings)
        let zone = call.zoneID(request.zoneID, callerRecordName: me)
        var ids: [Record.ID] = []
        for (i, item) in request.records.enumerated() {
            guard !item.recordName.isEmpty else { throw ServerError(.badRequest, "records[\(i)].recordName is empty") }
            ids.append(Record.ID(recordName: item.recordName, zoneID: zone))
        }
        // Items with their own desired keys narrow the fields after the fetch.
        let results = try await call.database.records(
            for: ids, desiredKeys: request.records.contains { $0.desiredKeys != nil } ? nil : request.desiredKeys)
        var records: [JSON] = []
        for (item, id) in zip(request.records, ids) {
            switch results[id] {
            case .success(let record)?: records.append(try output.record(record, desiredKeys: item.desiredKeys ?? request.desiredKeys))
            case .failure(let error)?: records.append(output.error(error, recordName: id.recordName))
            case nil: records.append(output.error(ServerError(.notFound, "record not found"), recordName: id.recordName))
            }
        }
        return .object([("records", .array(records))])
    }
}
