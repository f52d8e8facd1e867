import FogKit
import Foundation

/// A share's state in an export line (key `share`, beside the share's record dictionary):
/// its root, public permission and participants, each named by the identity a container is
/// opened with, since user record names differ from store to store. Docs/ImportExport.md
/// describes it.
struct ShareLine: Codable, Sendable, Equatable {
    /// The root record's name; `nil` for a zone-wide share.
    var root: String?
    /// `NONE`, `READ_ONLY` or `READ_WRITE`.
    var publicPermission: String
    /// The owner first, then the other participants.
    var participants: [Participant]

    /// One participant.
    struct Participant: Codable, Sendable, Equatable {
        /// The identity containers are opened with.
        var user: String
        /// `OWNER`, `PRIVATE_USER` or `PUBLIC_USER`.
        var role: String
        /// `READ_ONLY` or `READ_WRITE`.
        var permission: String
        /// `PENDING` or `ACCEPTED`.
        var acceptanceStatus: String
    }

    /// The state of `share` with the root `root`; `identity` names the user of a user record name.
    init(_ share: Share, root: String?, identity: (String) -> String?) throws {
        self.root = root
        publicPermission = Self.name(share.publicPermission)
        participants = try share.participants.map { p in
            let name = p.userIdentity.userRecordID?.recordName ?? ""
            guard let user = identity(name) else {
                throw LineError(message: "share \(share.recordID.recordName): participant \(name) is no user of the store")
            }
            return Participant(
                user: user, role: Self.name(p.role), permission: Self.name(p.permission), acceptanceStatus: Self.name(p.acceptanceStatus))
        }
    }

    static func name(_ permission: Share.ParticipantPermission) -> String {
        switch permission {
        case .readOnly: "READ_ONLY"
        case .readWrite: "READ_WRITE"
        default: "NONE"
        }
    }

    static func name(_ role: Share.ParticipantRole) -> String {
        switch role {
        case .owner: "OWNER"
        case .publicUser: "PUBLIC_USER"
        default: "PRIVATE_USER"
        }
    }

    static func name(_ status: Share.ParticipantAcceptanceStatus) -> String {
        status == .accepted ? "ACCEPTED" : "PENDING"
    }

    /// The permission `name` names.
    static func permission(_ name: String, field: String) throws -> Share.ParticipantPermission {
        switch name {
        case "NONE": .none
        case "READ_ONLY": .readOnly
        case "READ_WRITE": .readWrite
        default: throw LineError(message: "\(field): is \"\(name)\"; it must be NONE, READ_ONLY or READ_WRITE")
        }
    }

    /// Checks every name, so that a bad line stops the import before anything of it is written.
    func validate() throws {
        _ = try Self.permission(publicPermission, field: "share.publicPermission")
        for (i, p) in participants.enumerated() {
            let field = "share.participants[\(i)]"
            guard !p.user.isEmpty else { throw LineError(message: "\(field).user: is empty") }
            guard ["OWNER", "PRIVATE_USER", "PUBLIC_USER"].contains(p.role) else {
                throw LineError(message: "\(field).role: is \"\(p.role)\"; it must be OWNER, PRIVATE_USER or PUBLIC_USER")
            }
            let permission = try Self.permission(p.permission, field: "\(field).permission")
            guard permission != .none else { throw LineError(message: "\(field).permission: a participant reads at least") }
            guard ["PENDING", "ACCEPTED"].contains(p.acceptanceStatus) else {
                throw LineError(message: "\(field).acceptanceStatus: is \"\(p.acceptanceStatus)\"; it must be PENDING or ACCEPTED")
            }
        }
    }
}

/// A user of the container and their directory entry (`fog user add`), as an export line:
/// `{"directoryEntry":{"emailAddress":…,"nameComponents":{…}},"user":"alice"}`. Export writes
/// one for every user before the records; import adds the user first.
struct DirectoryLine: Codable, Sendable, Equatable {
    /// The identity containers are opened with.
    var user: String
    /// The entry.
    var directoryEntry: Entry

    /// A directory entry: the email address and the name's parts, each optional.
    struct Entry: Codable, Sendable, Equatable {
        var emailAddress: String?
        var nameComponents: Name?
    }

    /// The parts of a person's name that `PersonNameComponents` keeps as strings.
    struct Name: Codable, Sendable, Equatable {
        var namePrefix: String?
        var givenName: String?
        var middleName: String?
        var familyName: String?
        var nameSuffix: String?
        var nickname: String?

        init(_ c: PersonNameComponents) {
            (namePrefix, givenName, middleName, familyName, nameSuffix, nickname) =
                (c.namePrefix, c.givenName, c.middleName, c.familyName, c.nameSuffix, c.nickname)
        }

        var components: PersonNameComponents {
            var c = PersonNameComponents()
            (c.namePrefix, c.givenName, c.middleName, c.familyName, c.nameSuffix, c.nickname) =
                (namePrefix, givenName, middleName, familyName, nameSuffix, nickname)
            return c
        }
    }

    init(user: String, identity: UserIdentity) {
        self.user = user
        directoryEntry = Entry(emailAddress: identity.lookupInfo?.emailAddress, nameComponents: identity.nameComponents.map(Name.init))
    }
}
