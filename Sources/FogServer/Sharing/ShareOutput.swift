import FogKit
import Foundation

/// The sharing keys of a response's record dictionary: a shared record's `share`
/// (`{recordName, zoneID}`), and a share's `publicPermission`, `owner`, `participants` and
/// `currentUserParticipant` (its `shortGUID` is written with the record).
enum ShareOutput {
    /// The sharing members of `record`'s dictionary; none for a record outside any share.
    static func members(of record: Record, output: RecordOutput) -> [(String, JSON)] {
        var members: [(String, JSON)] = []
        if let share = record.share, !(record is Share) {
            members.append(
                (
                    "share",
                    .object([("recordName", .string(share.recordID.recordName)), ("zoneID", output.zoneIDJSON(share.recordID.zoneID))])
                ))
        }
        if let share = record as? Share {
            members.append(("publicPermission", .string(permission(share.publicPermission))))
            members.append(("owner", participant(share.owner, output: output)))
            members.append(("participants", .array(share.participants.map { participant($0, output: output) })))
            if let me = share.currentUserParticipant { members.append(("currentUserParticipant", participant(me, output: output))) }
        }
        return members
    }

    /// A share participant dictionary: `{participantId, userIdentity, type, permission,
    /// acceptanceStatus}`.
    static func participant(_ participant: Share.Participant, output: RecordOutput) -> JSON {
        // The owner of a share not saved yet is the current-user placeholder: the caller.
        let name =
            participant.participantID == CurrentUserDefaultName
            ? (output.callerRecordName ?? participant.participantID) : participant.participantID
        return .object([
            ("participantId", .string(name)),
            ("userIdentity", .object(UserEndpoints.identity(participant.userIdentity, recordName: name))),
            ("type", .string(type(participant.role))), ("permission", .string(permission(participant.permission))),
            ("acceptanceStatus", .string(status(participant.acceptanceStatus))),
        ])
    }

    /// `OWNER`, `ADMINISTRATOR`, `USER`, `PUBLIC_USER` or `UNKNOWN`.
    static func type(_ role: Share.ParticipantRole) -> String {
        switch role {
        case .owner: "OWNER"
        case .administrator: "ADMINISTRATOR"
        case .privateUser: "USER"
        case .publicUser: "PUBLIC_USER"
        case .unknown: "UNKNOWN"
        }
    }

    /// `NONE`, `READ_ONLY`, `READ_WRITE` or `UNKNOWN`.
    static func permission(_ permission: Share.ParticipantPermission) -> String {
        switch permission {
        case .none: "NONE"
        case .readOnly: "READ_ONLY"
        case .readWrite: "READ_WRITE"
        case .unknown: "UNKNOWN"
        }
    }

    /// `INVITED` (FogKit's pending), `ACCEPTED`, `REMOVED` or `UNKNOWN`.
    static func status(_ status: Share.ParticipantAcceptanceStatus) -> String {
        switch status {
        case .pending: "INVITED"
        case .accepted: "ACCEPTED"
        case .removed: "REMOVED"
        case .unknown: "UNKNOWN"
        }
    }
}
