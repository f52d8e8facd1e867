import Foundation

/// Finds share participants for users by email address or user record ID (CloudKit's
/// `CKFetchShareParticipantsOperation`), as ``Container/shareParticipant(forEmailAddress:)``
/// and ``Container/shareParticipant(forUserRecordID:)`` do for one.
///
/// Each participant is a ``Share/ParticipantRole/privateUser`` with
/// ``Share/ParticipantPermission/readOnly`` permission and
/// ``Share/ParticipantAcceptanceStatus/unknown`` status, to add to a share.
///
/// Callbacks, in order: ``perShareParticipantResultBlock`` (and the older
/// ``shareParticipantFetchedBlock`` for each participant found) for each lookup info, then
/// ``fetchShareParticipantsResultBlock`` (and the older
/// ``fetchShareParticipantsCompletionBlock``). A lookup info that finds no user of the
/// container fails with ``FogError/Code/unknownItem`` (FogKit knows no phone numbers, so one
/// with only a phone number always does), a malformed email address with
/// ``FogError/Code/invalidArguments``, and the operation then with
/// ``FogError/Code/partialFailure``, keyed by lookup info. A container opened for nobody fails
/// the whole operation with ``FogError/Code/notAuthenticated``.
public final class FetchShareParticipantsOperation: ContainerOperation, @unchecked Sendable {
    /// Who to find.
    public var userIdentityLookupInfos: [UserIdentity.LookupInfo]?

    /// Called for each lookup info with its participant or the item's error.
    public var perShareParticipantResultBlock: ((UserIdentity.LookupInfo, Result<Share.Participant, any Error>) -> Void)?
    /// Called once at the end.
    public var fetchShareParticipantsResultBlock: ((Result<Void, any Error>) -> Void)?
    /// The older callback, called for each participant found.
    @available(*, deprecated, renamed: "perShareParticipantResultBlock")
    public var shareParticipantFetchedBlock: ((Share.Participant) -> Void)? {
        get { legacyFetched }
        set { legacyFetched = newValue }
    }
    /// The older final callback.
    @available(*, deprecated, renamed: "fetchShareParticipantsResultBlock")
    public var fetchShareParticipantsCompletionBlock: (((any Error)?) -> Void)? {
        get { legacyCompletion }
        set { legacyCompletion = newValue }
    }

    private var legacyFetched: ((Share.Participant) -> Void)?
    private var legacyCompletion: (((any Error)?) -> Void)?

    /// Creates an operation that finds the participants for `userIdentityLookupInfos`.
    public convenience init(userIdentityLookupInfos: [UserIdentity.LookupInfo]) {
        self.init()
        self.userIdentityLookupInfos = userIdentityLookupInfos
    }

    override func execute(in container: Container) {
        do {
            try container.checkUserLookup()
        } catch {
            return finish(with: error)
        }
        let infos = userIdentityLookupInfos ?? []
        var partial: [AnyHashable: any Error] = [:]
        for info in infos {
            let result = Result { try container.participant(for: info) }
            switch result {
            case .success(let participant): legacyFetched?(participant)
            case .failure(let error): partial[info] = error
            }
            perShareParticipantResultBlock?(info, result)
        }
        let error = Self.partialFailure(partial, of: infos.count, "participant lookups")
        fetchShareParticipantsResultBlock?(error.map { .failure($0) } ?? .success(()))
        legacyCompletion?(error)
    }

    override func finish(with error: FogError) {
        for info in userIdentityLookupInfos ?? [] { perShareParticipantResultBlock?(info, .failure(error)) }
        fetchShareParticipantsResultBlock?(.failure(error))
        legacyCompletion?(error)
    }
}
