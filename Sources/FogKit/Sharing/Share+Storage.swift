import FogStorage
import Foundation
import Synchronization

/// How a share is stored: as a record of type `cloudkit.share` whose share state (root,
/// public permission, participants, URL) lives in fields with reserved keys that clients
/// cannot write (a field key must start with a letter). Fetches hand such a record out as a
/// ``Share`` without those fields. `Docs/OnDiskFormat.md` ("Shares") describes the encoding.
extension Share {
    /// The root record's name (string), absent for a zone-wide share.
    static let rootKey = "___shareRoot"
    /// The public permission's raw value (int64).
    static let publicPermissionKey = "___sharePublicPermission"
    /// The owner and the participants (bytes, ``encodeParticipants(_:)``).
    static let participantsKey = "___shareParticipants"
    /// The share's URL (string), set when it is first saved.
    static let urlKey = "___shareURL"
    /// The reserved keys.
    static let internalKeys: Set<String> = [rootKey, publicPermissionKey, participantsKey, urlKey]
    /// The share system fields clients may set on a share.
    static let systemFieldKeys: Set<String> = [SystemFieldKey.title, SystemFieldKey.thumbnailImageData, SystemFieldKey.shareType]

    /// The share's state as the fields it is stored in (the URL only once known).
    func storedValues() -> [String: FieldValue] {
        let state = shareState.withLock { $0 }
        var values: [String: FieldValue] = [
            Self.publicPermissionKey: .int64(Int64(state.publicPermission.rawValue)),
            Self.participantsKey: .bytes(Data(Self.encodeParticipants([state.owner] + state.participants))),
        ]
        if let root = state.rootRecordID { values[Self.rootKey] = .string(root.recordName) }
        if let url = state.url { values[Self.urlKey] = .string(url.absoluteString) }
        return values
    }

    /// Tuple (count, then per participant: user record name, email or null, six name parts
    /// or null, role, permission, acceptance status).
    static func encodeParticipants(_ participants: [Participant]) -> [UInt8] {
        var w = KeyWriter(capacity: 64 * participants.count)
        w.append(Int64(participants.count))
        for p in participants {
            let s = p.state.withLock { $0 }
            w.append(p.participantID)
            for part in [p.userIdentity.lookupInfo?.emailAddress] + UserDirectoryEntry.parts(of: p.userIdentity.nameComponents) {
                if let part { w.append(part) } else { w.appendNull() }
            }
            w.append(Int64(s.role.rawValue))
            w.append(Int64(s.permission.rawValue))
            w.append(Int64(s.acceptanceStatus.rawValue))
        }
        return w.bytes
    }

    static func decodeParticipants(_ bytes: [UInt8]) throws -> [Participant] {
        do {
            var r = KeyReader(bytes)
            let count = try r.readInt64()
            var participants: [Participant] = []
            for _ in 0..<max(0, count) {
                let name = try r.readString()
                var optionals: [String?] = []
                for _ in 0..<7 { optionals.append(r.readNullIfPresent() ? nil : try r.readString()) }
                var components: PersonNameComponents?
                if optionals[1...].contains(where: { $0 != nil }) {
                    var c = PersonNameComponents()
                    (c.namePrefix, c.givenName, c.middleName) = (optionals[1], optionals[2], optionals[3])
                    (c.familyName, c.nameSuffix, c.nickname) = (optionals[4], optionals[5], optionals[6])
                    components = c
                }
                let role = ParticipantRole(rawValue: Int(try r.readInt64())) ?? .unknown
                let permission = ParticipantPermission(rawValue: Int(try r.readInt64())) ?? .unknown
                let status = ParticipantAcceptanceStatus(rawValue: Int(try r.readInt64())) ?? .unknown
                let id = Record.ID(recordName: name)
                let identity = UserIdentity(
                    userRecordID: id, lookupInfo: .init(emailAddress: optionals[0], phoneNumber: nil, userRecordID: id),
                    nameComponents: components, hasiCloudAccount: true)
                participants.append(Participant(userIdentity: identity, role: role, permission: permission, acceptanceStatus: status))
            }
            return participants
        } catch {
            throw FormatError(message: "share participants: \(error)")
        }
    }

    /// Makes the participant that is `user` (a user record name) the current user's, or none.
    func makeCurrentUser(_ user: String) {
        shareState.withLock { state in
            state.currentUser = ([state.owner] + state.participants).first { $0.participantID == user }
        }
    }

    /// The URL of a share: `fogkit:share/<owner>/<zone>/<record>`, each part percent-encoded.
    static func url(owner: String, zoneName: String, recordName: String) -> URL {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let parts = [owner, zoneName, recordName].map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0 }
        return URL(string: "fogkit:share/" + parts.joined(separator: "/"))!
    }

    /// `record` (of type `cloudkit.share`, as a read returns it) as a ``Share``: its share
    /// state from the reserved fields, which it no longer holds as fields. The current user
    /// is the owner: only the owner reads shares so far (through the private database).
    static func restore(from record: Record) -> Record {
        var state = record.state.withLock { $0 }
        state.materialize()
        var values = state.decoded
        var participants: [Participant] = []
        if case .bytes(let data)? = values[participantsKey] { participants = (try? decodeParticipants(Array(data))) ?? [] }
        let owner =
            participants.first(where: { $0.role == .owner })
            ?? Participant(
                userIdentity: UserIdentity(
                    userRecordID: record.creatorUserRecordID, lookupInfo: record.creatorUserRecordID.map { .init(userRecordID: $0) },
                    nameComponents: nil, hasiCloudAccount: true), role: .owner, permission: .readWrite, acceptanceStatus: .accepted)
        var shareState = ShareState(owner: owner)
        shareState.participants = participants.filter { $0 != owner }
        shareState.currentUser = owner
        if case .int64(let raw)? = values[publicPermissionKey] {
            shareState.publicPermission = ParticipantPermission(rawValue: Int(raw)) ?? .none
        }
        if case .string(let root)? = values[rootKey] {
            shareState.rootRecordID = Record.ID(recordName: root, zoneID: record.recordID.zoneID)
        }
        if case .string(let url)? = values[urlKey] { shareState.url = URL(string: url) }
        for key in internalKeys { values[key] = nil }
        state.decoded = values
        let share = Share(recordID: record.recordID, shareState: shareState)
        share.state.withLock { $0 = state }
        return share
    }
}
