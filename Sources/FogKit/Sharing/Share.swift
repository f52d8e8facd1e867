import Foundation
import Synchronization

/// A share: a record of type `cloudkit.share` that gives other users access to a record
/// hierarchy or to a whole zone of its owner's private database (CloudKit's `CKShare`).
///
/// - A **hierarchy share** (``init(rootRecord:)``) shares a root record and every record whose
///   ``Record/parent`` chain leads to it.
/// - A **zone-wide share** (``init(recordZoneID:)``) shares every record of a custom zone.
///
/// ```swift
/// let share = Share(rootRecord: album)
/// share[Share.SystemFieldKey.title] = "Holiday photos"
/// let bob = try await container.shareParticipant(forEmailAddress: "bob@example.com")
/// bob.permission = .readWrite
/// share.addParticipant(bob)
/// ```
///
/// `Record` is a class that is not `final`, so `Share` subclasses it as `CKShare` subclasses
/// `CKRecord`. Record's own initialisers (`init(recordType:…)`) are not inherited, as in
/// CloudKit, where they are unavailable on `CKShare`.
///
/// Save a new hierarchy share in the same request as its root, in a custom zone of the
/// owner's private database; the store then sets the root's ``Record/share``, gives the share
/// its ``url`` and makes the saving user its ``owner``:
///
/// ```swift
/// let result = try await container.privateCloudDatabase.modifyRecords(saving: [album, share], deleting: [])
/// ```
///
/// A record (or an ancestor of it, or its zone) already in a share cannot join another
/// (``FogError/Code/alreadyShared``). Deleting the share clears the root's `share`; deleting
/// the root deletes the share. Participants read its ``Container/shareMetadata(for:)`` and
/// ``Container/accept(_:)`` it; their ``Container/sharedCloudDatabase`` then lists the owner's
/// zone and fetches the shared records (queries, feeds and writes there come next; see
/// `Docs/Sharing.md`).
public final class Share: Record, @unchecked Sendable {
    // Unchecked as Record is: every access to the share's own state goes through `shareState`.

    /// The record name of a zone-wide share, `"cloudkit.zoneshare"` (CloudKit's
    /// `CKRecordNameZoneWideShare`).
    public static let zoneWideShareRecordName = "cloudkit.zoneshare"

    /// The most participants a share holds besides its owner (CloudKit's documented 100).
    public static let maximumParticipants = 100

    /// Keys of a share's system fields (CloudKit's `CKShare.SystemFieldKey`), which a share
    /// holds as fields: set them with the record subscript.
    public enum SystemFieldKey {
        /// The share's title, a string: `"cloudkit.share.title"`.
        public static let title: Record.FieldKey = "cloudkit.share.title"
        /// A thumbnail image, bytes: `"cloudkit.share.thumbnailImageData"`.
        public static let thumbnailImageData: Record.FieldKey = "cloudkit.share.thumbnailImageData"
        /// The type of the shared content (a uniform type identifier), a string: `"cloudkit.share.type"`.
        public static let shareType: Record.FieldKey = "cloudkit.share.type"
    }

    struct ShareState: Sendable {
        var publicPermission: ParticipantPermission = .none
        var owner: Participant
        var participants: [Participant] = []
        var currentUser: Participant?
        var url: URL?
        /// The root record of a hierarchy share; `nil` for a zone-wide share.
        var rootRecordID: Record.ID?
    }
    let shareState: Mutex<ShareState>

    /// A new hierarchy share of `rootRecord`, with a UUID record name in the root's zone.
    public convenience init(rootRecord: Record) {
        self.init(rootRecord: rootRecord, shareID: Record.ID(zoneID: rootRecord.recordID.zoneID))
    }

    /// A new hierarchy share of `rootRecord` with the record ID `shareID` (in the root's zone).
    public convenience init(rootRecord: Record, shareID: Record.ID) {
        self.init(recordID: shareID, shareState: ShareState(owner: Self.newOwner(), rootRecordID: rootRecord.recordID))
    }

    /// A new zone-wide share of the zone `recordZoneID`, named
    /// ``zoneWideShareRecordName``.
    public convenience init(recordZoneID: RecordZone.ID) {
        self.init(
            recordID: Record.ID(recordName: Self.zoneWideShareRecordName, zoneID: recordZoneID),
            shareState: ShareState(owner: Self.newOwner(), rootRecordID: nil))
    }

    init(recordID: Record.ID, shareState: ShareState) {
        self.shareState = Mutex(shareState)
        super.init(recordType: Record.SystemType.share, recordID: recordID)
    }

    /// The owner of a share not saved yet: the current user, by the owner placeholder
    /// (the store names the real user when it saves the share).
    private static func newOwner() -> Participant {
        let id = Record.ID(recordName: CurrentUserDefaultName)
        return Participant(
            userIdentity: UserIdentity(userRecordID: id, lookupInfo: .init(userRecordID: id), nameComponents: nil, hasiCloudAccount: true),
            role: .owner, permission: .readWrite, acceptanceStatus: .accepted)
    }

    /// What anyone with the share's URL may do without being invited: ``ParticipantPermission/none``
    /// (the default: only invited participants join), ``ParticipantPermission/readOnly`` or
    /// ``ParticipantPermission/readWrite``.
    ///
    /// As in CloudKit, raising it above `none` removes the participants who have not accepted
    /// yet, and setting it back to `none` removes every participant but the owner.
    public var publicPermission: ParticipantPermission {
        get { shareState.withLock { $0.publicPermission } }
        set {
            shareState.withLock { state in
                let old = state.publicPermission
                state.publicPermission = newValue
                if newValue == .none, old != .none {
                    state.participants.removeAll()
                } else if newValue != .none, old == .none {
                    state.participants.removeAll { $0.acceptanceStatus == .pending }
                }
            }
        }
    }

    /// The share's URL: `nil` until the share is saved.
    public var url: URL? { shareState.withLock { $0.url } }

    /// The owner and the other participants, owner first.
    public var participants: [Participant] {
        shareState.withLock { [$0.owner] + $0.participants }
    }

    /// The user who owns the shared records.
    public var owner: Participant { shareState.withLock { $0.owner } }

    /// The participant that the current user is, when known: the owner for a share not
    /// saved yet.
    public var currentUserParticipant: Participant? {
        shareState.withLock { $0.currentUser ?? ($0.url == nil ? $0.owner : nil) }
    }

    /// Adds `participant` (from ``Container/shareParticipant(forEmailAddress:)`` or
    /// ``Container/shareParticipant(forUserRecordID:)``) as invited: its status becomes
    /// ``ParticipantAcceptanceStatus/pending``. Adding the same user again changes nothing;
    /// adding the owner changes nothing.
    ///
    /// Invited participants and a public permission do not mix: while ``publicPermission``
    /// is not `none`, saving a share with invited participants fails with
    /// ``FogError/Code/invalidArguments``; more than ``maximumParticipants`` fail with
    /// ``FogError/Code/tooManyParticipants``.
    public func addParticipant(_ participant: Participant) {
        shareState.withLock { state in
            guard participant != state.owner, !state.participants.contains(participant) else { return }
            if participant.acceptanceStatus == .unknown || participant.acceptanceStatus == .removed {
                participant.acceptanceStatus = .pending
            }
            state.participants.append(participant)
        }
    }

    /// Removes `participant` (the same user); removing the owner or someone not in the share
    /// changes nothing.
    public func removeParticipant(_ participant: Participant) {
        shareState.withLock { state in
            guard let index = state.participants.firstIndex(of: participant) else { return }
            state.participants[index].acceptanceStatus = .removed
            state.participants.remove(at: index)
        }
    }

    /// The root record of a hierarchy share, `nil` for a zone-wide share.
    var rootRecordID: Record.ID? { shareState.withLock { $0.rootRecordID } }

    /// A copy of the share with the same ID, fields, metadata, participants and changed keys.
    public override func copy() -> Record {
        var state = shareState.withLock { $0 }
        state.owner = state.owner.copy()
        state.participants = state.participants.map { $0.copy() }
        state.currentUser = state.currentUser.map { $0.copy() }
        let copy = Share(recordID: recordID, shareState: state)
        let snapshot = self.state.withLock { $0 }
        copy.state.withLock { $0 = snapshot }
        return copy
    }

    /// The type, name, participants and fields.
    public override var description: String {
        let state = shareState.withLock { $0 }
        let kind = state.rootRecordID.map { "root \($0.recordName)" } ?? "zone \(recordID.zoneID.zoneName)"
        return "<Share \(recordID.recordName) \(kind) public=\(state.publicPermission) participants=\(state.participants.count)>"
    }
}
