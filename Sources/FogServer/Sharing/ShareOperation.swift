import FogKit
import Foundation

/// A `records/modify` save of a `cloudkit.share` record, as the FogKit operations that make
/// it: the share, built with FogKit's ``Share`` API, and for a new hierarchy share the root
/// record (FogKit saves a new share in the same request as its root, which then names it).
///
/// - `create` with `forRecord`: a hierarchy share of that record of the batch's zone (the
///   root as stored, or as the batch saves it); its `recordChangeTag`, when given, must be
///   the stored one (`CONFLICT`). `create` of `cloudkit.zoneshare` without `forRecord`: a
///   zone-wide share.
/// - `update`, `replace` (with the share's `recordChangeTag`) and their `force` forms: the
///   stored share with the public permission and participants the record gives.
///
/// FogKit decides the rest as for its own clients: only the owner's private database
/// saves shares, never in the default zone (`BAD_REQUEST`), one share per root or zone.
enum ShareOperation {
    static func make(
        _ operation: RecordEndpoints.ModifyRequest.Operation, zone: RecordZone.ID, batch: [WebServices.RecordOperation],
        call: EndpointCall, index: Int
    ) async throws -> (share: WebServices.RecordOperation, root: WebServices.RecordOperation?) {
        let dictionary = operation.record
        let input = operation.share ?? ShareInput()
        let path = "operations[\(index)].record"
        let id = Record.ID(recordName: dictionary.recordName, zoneID: zone)
        let type = operation.operationType
        let stored: Share?
        switch type {
        case "create": stored = nil
        case "update", "replace", "forceUpdate", "forceReplace":
            stored = try await existingShare(id, call: call, required: !type.hasPrefix("force"))
            if let stored, !type.hasPrefix("force") {
                guard let tag = dictionary.recordChangeTag else {
                    throw ServerError(.badRequest, "operations[\(index)]: \(type) needs the share's recordChangeTag")
                }
                guard tag == stored.recordChangeTag else {
                    throw FogError(.serverRecordChanged, message: "share \(id.recordName) changed since the given change tag")
                }
            }
        default: throw ServerError(.badRequest, "operations[\(index)].operationType: unknown operation type \"\(type)\"")
        }

        let share: Share
        var root: WebServices.RecordOperation?
        if let stored {
            share = stored
        } else if let forRecord = input.forRecord {
            let rootID = Record.ID(recordName: forRecord.recordName, zoneID: zone)
            if let inBatch = batch.lazy.compactMap({ Self.saved($0) }).first(where: { $0.recordID == rootID }) {
                share = Share(rootRecord: inBatch, shareID: id)
            } else {
                let record = try await call.database.record(for: rootID)
                if let tag = forRecord.recordChangeTag, tag != record.recordChangeTag {
                    throw FogError(
                        .serverRecordChanged, message: "record \(rootID.recordName) changed since the given forRecord.recordChangeTag")
                }
                share = Share(rootRecord: record, shareID: id)
                root = .update(record)
            }
        } else if id.recordName == Share.zoneWideShareRecordName {
            share = Share(recordZoneID: zone)
        } else {
            throw ServerError(
                .badRequest,
                "\(path): a share needs forRecord (its root record), or the name \(Share.zoneWideShareRecordName) (a zone-wide share)")
        }

        for (key, field) in dictionary.fields {
            share.setFieldValue(try field.fieldValue(defaultZone: zone, field: "\(path).fields.\(key)"), forKey: key)
        }
        try await input.apply(to: share, container: call.container, path: path)
        switch type {
        case "create": return (.create(share), root)
        case "update", "replace": return (.update(share), root)
        default: return (.forceUpdate(share), root)
        }
    }

    /// The record a batch operation saves, if it saves one.
    private static func saved(_ operation: WebServices.RecordOperation) -> Record? {
        switch operation {
        case .create(let r), .update(let r), .forceUpdate(let r), .replace(let r), .forceReplace(let r): r
        case .delete, .forceDelete: nil
        }
    }

    /// The stored share `id`, as the caller reads it; `nil` when there is none and it is not
    /// `required` (a `force` save then creates it).
    private static func existingShare(_ id: Record.ID, call: EndpointCall, required: Bool) async throws -> Share? {
        let record: Record
        do {
            record = try await call.database.record(for: id)
        } catch let error as FogError where error.code == .unknownItem && !required {
            return nil
        }
        guard let share = record as? Share else {
            throw ServerError(.badRequest, "record \(id.recordName) is a \(record.recordType), not a share")
        }
        return share
    }
}
