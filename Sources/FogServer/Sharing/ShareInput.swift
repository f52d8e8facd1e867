import FogKit
import Foundation

/// The sharing keys of a `records/modify` record of type `cloudkit.share`: `forRecord`
/// (`{recordName, recordChangeTag?}`, the root of a hierarchy share), `publicPermission`
/// and `participants`, made into FogKit's ``Share`` through its public API.
struct ShareInput: Decodable, Sendable {
    /// The root record of a new hierarchy share.
    struct ForRecord: Decodable, Sendable {
        var recordName: String
        var recordChangeTag: String?
    }

    /// A participant: `{type, permission, acceptanceStatus, userIdentity: {userRecordName?,
    /// lookupInfo: {emailAddress | userRecordName}}}`.
    struct Participant: Decodable, Sendable {
        struct Identity: Decodable, Sendable {
            struct LookupInfo: Decodable, Sendable {
                var emailAddress: String?
                var userRecordName: String?
            }
            var userRecordName: String?
            var lookupInfo: LookupInfo?
        }
        var type: String?
        var permission: String?
        var acceptanceStatus: String?
        var userIdentity: Identity?
    }

    var forRecord: ForRecord?
    var publicPermission: String?
    var participants: [Participant]?

    /// The record types that name a share: CloudKit's `cloudkit.share`, and the
    /// `cloudKit.share` spelling of the Web Services documentation.
    static func isShareType(_ type: String?) -> Bool { type?.lowercased() == "cloudkit.share" }

    static func permission(_ name: String, path: String) throws(ServerError) -> Share.ParticipantPermission {
        switch name {
        case "NONE": .none
        case "READ_ONLY": .readOnly
        case "READ_WRITE": .readWrite
        default: throw ServerError(.badRequest, "\(path): unknown permission \"\(name)\" (NONE, READ_ONLY or READ_WRITE)")
        }
    }

    /// Sets the public permission and makes the share's participants (besides its owner) the
    /// ones listed, each looked up in the container's directory as the caller. A participant
    /// of type `OWNER`, or with `acceptanceStatus` `REMOVED`, is left out.
    func apply(to share: Share, container: Container, path: String) async throws {
        if let publicPermission { share.publicPermission = try Self.permission(publicPermission, path: "\(path).publicPermission") }
        guard let participants else { return }
        var wanted: [FogKit.Share.Participant] = []
        for (i, item) in participants.enumerated() where item.type != "OWNER" && item.acceptanceStatus != "REMOVED" {
            let itemPath = "\(path).participants[\(i)]"
            let info = item.userIdentity?.lookupInfo
            let participant: FogKit.Share.Participant
            if let email = info?.emailAddress {
                participant = try await container.shareParticipant(forEmailAddress: email)
            } else if let name = info?.userRecordName ?? item.userIdentity?.userRecordName {
                participant = try await container.shareParticipant(forUserRecordID: Record.ID(recordName: name))
            } else {
                throw ServerError(.badRequest, "\(itemPath).userIdentity: needs lookupInfo.emailAddress or lookupInfo.userRecordName")
            }
            if let permission = item.permission { participant.permission = try Self.permission(permission, path: "\(itemPath).permission") }
            switch item.type {
            case "ADMINISTRATOR": participant.role = .administrator
            case nil, "USER": participant.role = .privateUser
            case let other?:
                throw ServerError(.badRequest, "\(itemPath).type: unknown participant type \"\(other)\" (USER or ADMINISTRATOR)")
            }
            wanted.append(participant)
        }
        let owner = share.owner
        for current in share.participants where current != owner && !wanted.contains(current) { share.removeParticipant(current) }
        for participant in wanted where participant != owner {
            if let current = share.participants.first(where: { $0 == participant }) {
                current.permission = participant.permission
                current.role = participant.role
            } else {
                share.addParticipant(participant)
            }
        }
    }
}
