import Foundation
import Synchronization

extension Share {
    /// A participant's role in a share (CloudKit's `CKShare.ParticipantRole`).
    public enum ParticipantRole: Int, Sendable, Hashable, CustomStringConvertible {
        /// Not known.
        case unknown = 0
        /// The user who created the share.
        case owner = 1
        /// A participant who may add and remove participants and change permissions.
        case administrator = 2
        /// A participant the owner invited.
        case privateUser = 3
        /// A participant who joined a share with public permission through its URL.
        case publicUser = 4

        /// The case name, such as `privateUser`.
        public var description: String {
            switch self {
            case .unknown: "unknown"
            case .owner: "owner"
            case .administrator: "administrator"
            case .privateUser: "privateUser"
            case .publicUser: "publicUser"
            }
        }
    }

    /// What a participant may do with the shared records (CloudKit's
    /// `CKShare.ParticipantPermission`).
    public enum ParticipantPermission: Int, Sendable, Hashable, CustomStringConvertible {
        /// Not known.
        case unknown = 0
        /// No access (a share's ``Share/publicPermission`` when only invited participants join).
        case none = 1
        /// Read the shared records.
        case readOnly = 2
        /// Read, change, add and delete shared records (but not a hierarchy's root).
        case readWrite = 3

        /// The case name, such as `readWrite`.
        public var description: String {
            switch self {
            case .unknown: "unknown"
            case .none: "none"
            case .readOnly: "readOnly"
            case .readWrite: "readWrite"
            }
        }
    }

    /// Whether a participant has accepted a share (CloudKit's
    /// `CKShare.ParticipantAcceptanceStatus`).
    public enum ParticipantAcceptanceStatus: Int, Sendable, Hashable, CustomStringConvertible {
        /// Not known: a participant not (yet) in a share.
        case unknown = 0
        /// Invited, not accepted yet.
        case pending = 1
        /// Accepted: the shared records are in the participant's shared database.
        case accepted = 2
        /// Removed from the share.
        case removed = 3

        /// The case name, such as `accepted`.
        public var description: String {
            switch self {
            case .unknown: "unknown"
            case .pending: "pending"
            case .accepted: "accepted"
            case .removed: "removed"
            }
        }
    }

    /// A user's place in a share: who (``userIdentity``), in which role, with which
    /// permission, and whether they accepted (CloudKit's `CKShare.Participant`).
    ///
    /// There is no public initialiser, as in CloudKit: get participants from
    /// ``Container/shareParticipant(forEmailAddress:)`` or
    /// ``Container/shareParticipant(forUserRecordID:)``, or from a share.
    ///
    /// ```swift
    /// let bob = try await container.shareParticipant(forEmailAddress: "bob@example.com")
    /// bob.permission = .readWrite
    /// share.addParticipant(bob)
    /// ```
    ///
    /// A class, as in CloudKit, so that setting ``role`` or ``permission`` on a participant
    /// a share holds changes it there; access is synchronised. Two participants are equal when
    /// they are the same user (same user record ID), whatever their role, permission and status.
    public final class Participant: Sendable, Hashable, CustomStringConvertible {
        /// Who the participant is.
        public let userIdentity: UserIdentity
        /// An identifier of the participant, stable for one user: the user record name.
        public let participantID: String

        struct State: Sendable, Hashable {
            var role: ParticipantRole
            var permission: ParticipantPermission
            var acceptanceStatus: ParticipantAcceptanceStatus
        }
        let state: Mutex<State>

        init(
            userIdentity: UserIdentity, role: ParticipantRole, permission: ParticipantPermission,
            acceptanceStatus: ParticipantAcceptanceStatus
        ) {
            self.userIdentity = userIdentity
            participantID = userIdentity.userRecordID?.recordName ?? ""
            state = Mutex(State(role: role, permission: permission, acceptanceStatus: acceptanceStatus))
        }

        /// The participant's role. A participant from a lookup is a ``ParticipantRole/privateUser``.
        public var role: ParticipantRole {
            get { state.withLock { $0.role } }
            set { state.withLock { $0.role = newValue } }
        }

        /// What the participant may do. A participant from a lookup has
        /// ``ParticipantPermission/readOnly``.
        public var permission: ParticipantPermission {
            get { state.withLock { $0.permission } }
            set { state.withLock { $0.permission = newValue } }
        }

        /// Whether the participant accepted the share: ``ParticipantAcceptanceStatus/unknown``
        /// for a participant from a lookup, ``ParticipantAcceptanceStatus/pending`` once added
        /// to a share.
        public internal(set) var acceptanceStatus: ParticipantAcceptanceStatus {
            get { state.withLock { $0.acceptanceStatus } }
            set { state.withLock { $0.acceptanceStatus = newValue } }
        }

        /// A participant with the same identity and state.
        func copy() -> Participant {
            let s = state.withLock { $0 }
            return Participant(userIdentity: userIdentity, role: s.role, permission: s.permission, acceptanceStatus: s.acceptanceStatus)
        }

        /// Whether both are the same user (the same user record ID).
        public static func == (a: Participant, b: Participant) -> Bool {
            a.participantID == b.participantID
        }

        /// Hashes the user record ID.
        public func hash(into hasher: inout Hasher) { hasher.combine(participantID) }

        /// The user, role, permission and status.
        public var description: String {
            let s = state.withLock { $0 }
            return "<Participant \(participantID) \(s.role) \(s.permission) \(s.acceptanceStatus)>"
        }
    }
}

extension Container {
    /// A share participant for the user whose directory entry has `emailAddress`: a
    /// ``Share/ParticipantRole/privateUser`` with ``Share/ParticipantPermission/readOnly``
    /// permission, to set as needed and add to a share with ``Share/addParticipant(_:)``.
    ///
    /// - Throws: ``FogError/Code/unknownItem`` when no user of the container has the address
    ///   (FogKit cannot invite someone without an account); ``FogError/Code/invalidArguments``
    ///   for a malformed address; ``FogError/Code/notAuthenticated`` for a container opened
    ///   on behalf of nobody.
    public func shareParticipant(forEmailAddress emailAddress: String) async throws -> Share.Participant {
        try participant(for: UserIdentity.LookupInfo(emailAddress: emailAddress))
    }

    /// A share participant for the user with `userRecordID`; see
    /// ``shareParticipant(forEmailAddress:)``.
    ///
    /// - Throws: ``FogError/Code/unknownItem`` when the container has no such user;
    ///   ``FogError/Code/notAuthenticated`` for a container opened on behalf of nobody.
    public func shareParticipant(forUserRecordID userRecordID: Record.ID) async throws -> Share.Participant {
        try participant(for: UserIdentity.LookupInfo(userRecordID: userRecordID))
    }

    /// The participant for the user `lookupInfo` finds: by email address, else by user record
    /// ID. FogKit knows no phone numbers: an info with only a phone number finds nobody.
    ///
    /// - Throws: ``FogError/Code/unknownItem`` when no user of the container matches.
    func participant(for lookupInfo: UserIdentity.LookupInfo) throws -> Share.Participant {
        let found: UserIdentity?
        let missing: String
        if let emailAddress = lookupInfo.emailAddress {
            found = try userIdentityNow(forEmailAddress: emailAddress)
            missing = "no user of the container has the email address \(emailAddress)"
        } else if let userRecordID = lookupInfo.userRecordID {
            found = try userIdentityNow(forUserRecordID: userRecordID)
            missing = "the container has no user with user record ID \(userRecordID.recordName)"
        } else {
            try checkUserLookup()
            found = nil
            missing = "FogKit finds users by email address or user record ID, not by phone number"
        }
        guard let found else { throw FogError(.unknownItem, message: missing) }
        return Share.Participant(userIdentity: found, role: .privateUser, permission: .readOnly, acceptanceStatus: .unknown)
    }
}
