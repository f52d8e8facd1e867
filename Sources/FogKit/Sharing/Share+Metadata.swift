import Foundation

extension Share {
    /// What a share's URL tells the user who opens it: the share, its owner, its root, and the
    /// user's place in it (CloudKit's `CKShare.Metadata`). Get it with
    /// ``Container/shareMetadata(for:)`` and accept the share with ``Container/accept(_:)``.
    ///
    /// A value, where `CKShare.Metadata` is a class. Two metadata are equal when they describe
    /// the same share (record ID) of the same container, whatever the caller's status in it.
    public struct Metadata: Sendable, Hashable, CustomStringConvertible {
        /// The share, as the user sees it: its ``Share/currentUserParticipant`` is the user's
        /// participant (`nil` for someone who may join a public share but has not). Its zone ID
        /// names the owner (their user record name), as zones of the shared database do.
        public let share: Share
        /// The container's identifier.
        public let containerIdentifier: String
        /// The owner's identity.
        public let ownerIdentity: UserIdentity
        /// The root record of a hierarchy share; `nil` for a zone-wide share.
        public let hierarchicalRootRecordID: Record.ID?
        /// The root record of a hierarchy share, only when asked for
        /// (``FetchShareMetadataOperation/shouldFetchRootRecord``); `nil` otherwise.
        public let rootRecord: Record?
        /// The user's role: ``Share/ParticipantRole/owner``, ``Share/ParticipantRole/privateUser``
        /// for an invited participant, or ``Share/ParticipantRole/publicUser`` for someone who
        /// may join a public share.
        public let participantRole: ParticipantRole
        /// What the user may do with the shared records.
        public let participantPermission: ParticipantPermission
        /// Whether the user accepted: ``Share/ParticipantAcceptanceStatus/unknown`` for someone
        /// who may join a public share and has not.
        public let participantStatus: ParticipantAcceptanceStatus

        /// Whether both describe the same share of the same container.
        public static func == (a: Metadata, b: Metadata) -> Bool {
            a.share.recordID == b.share.recordID && a.share.recordID.zoneID == b.share.recordID.zoneID
                && a.containerIdentifier == b.containerIdentifier
        }

        /// Hashes the share's record ID.
        public func hash(into hasher: inout Hasher) { hasher.combine(share.recordID) }

        /// The share's record name, the user's role and status.
        public var description: String {
            "<Share.Metadata \(share.recordID.recordName) \(participantRole) \(participantPermission) \(participantStatus)>"
        }

        init(share: Share, containerIdentifier: String, rootRecord: Record? = nil) {
            self.share = share
            self.containerIdentifier = containerIdentifier
            ownerIdentity = share.owner.userIdentity
            hierarchicalRootRecordID = share.rootRecordID
            self.rootRecord = rootRecord
            if let me = share.currentUserParticipant {
                participantRole = me.role
                participantPermission = me.permission
                participantStatus = me.acceptanceStatus
            } else {
                participantRole = .publicUser
                participantPermission = share.publicPermission
                participantStatus = .unknown
            }
        }
    }
}

extension Container {
    /// The metadata of the share at `url` (a saved share's ``Share/url``), for the owner, a
    /// participant the share names, or anyone when the share has a public permission.
    ///
    /// ```swift
    /// let metadata = try await bob.shareMetadata(for: url)
    /// let share = try await bob.accept(metadata)
    /// ```
    ///
    /// - Throws: ``FogError/Code/participantMayNeedVerification`` for a user whom a share
    ///   without public permission does not name (or who was removed from it), as CloudKit;
    ///   ``FogError/Code/unknownItem`` when the share does not exist (any more);
    ///   ``FogError/Code/invalidArguments`` for a URL that is not a FogKit share URL;
    ///   ``FogError/Code/notAuthenticated`` for a container opened on behalf of nobody.
    public func shareMetadata(for url: URL) async throws -> Share.Metadata {
        try metadata(for: url)
    }

    /// The metadata of the share at `url`, with its root record (the fields `rootKeys` names,
    /// `nil` for all) when `fetchingRoot` and the share has a root.
    func metadata(for url: URL, fetchingRoot: Bool = false, rootKeys: [String]? = nil) throws -> Share.Metadata {
        let user = try shareUser(.shareMetadata)
        let location = try ShareLocation(url: url)
        let (share, standing) = try fogTry { try engine.shares.share(at: location, for: user) }
        try engine.access.check(
            .shareMetadata, AccessRequest(caller: .user(user), recordName: location.recordName, shareStanding: standing))
        var root: Record?
        if fetchingRoot, let id = share.rootRecordID {
            root = try fogTry { try engine.shares.rootRecord(id.recordName, at: location, desiredKeys: rootKeys) }
        }
        return Share.Metadata(share: share, containerIdentifier: containerIdentifier ?? "", rootRecord: root)
    }

    /// The metadata of the share at each URL, each with its own result (see
    /// ``shareMetadata(for:)`` for the errors).
    ///
    /// - Throws: ``FogError/Code/notAuthenticated`` for a container opened on behalf of nobody.
    public func shareMetadatas(for urls: [URL]) async throws -> [URL: Result<Share.Metadata, any Error>] {
        _ = try shareUser(.shareMetadata)
        var results: [URL: Result<Share.Metadata, any Error>] = [:]
        for url in urls {
            do { results[url] = .success(try await shareMetadata(for: url)) } catch { results[url] = .failure(error) }
        }
        return results
    }

    /// Accepts each share, each with its own result (the errors are those of accepting one
    /// share, `accept(_:)` with one metadata).
    ///
    /// - Throws: ``FogError/Code/notAuthenticated`` for a container opened on behalf of nobody.
    public func accept(_ metadatas: [Share.Metadata]) async throws -> [Share.Metadata: Result<Share, any Error>] {
        _ = try shareUser(.acceptShare)
        var results: [Share.Metadata: Result<Share, any Error>] = [:]
        for metadata in metadatas {
            do { results[metadata] = .success(try await accept(metadata)) } catch { results[metadata] = .failure(error) }
        }
        return results
    }

    /// Accepts the share `metadata` describes, as the container's user: an invited participant
    /// becomes ``Share/ParticipantAcceptanceStatus/accepted``; on a share with a public
    /// permission, anyone else joins as a ``Share/ParticipantRole/publicUser`` with that
    /// permission. Accepting again, or as the owner, changes nothing. Returns the share as the
    /// user now sees it.
    ///
    /// The share changes in its owner's zone (a new change tag, in the owner's change feeds).
    /// The owner's zone then appears in the user's shared database (`Docs/Sharing.md`).
    ///
    /// - Throws: as ``shareMetadata(for:)``, judged again when accepting (a participant removed
    ///   since gets ``FogError/Code/participantMayNeedVerification``);
    ///   ``FogError/Code/tooManyParticipants`` when a public share is full.
    public func accept(_ metadata: Share.Metadata) async throws -> Share {
        let (user, location) = try acceptance(of: metadata)
        let access = engine.access
        return try await mapStorageErrors {
            try await engine.shares.accept(at: location, for: user) { standing in
                try access.check(.acceptShare, AccessRequest(caller: .user(user), recordName: location.recordName, shareStanding: standing))
            }
        }
    }

    /// ``accept(_:)-(Share.Metadata)`` for a caller that may block its thread (an operation).
    func acceptAndWait(_ metadata: Share.Metadata) throws -> Share {
        let (user, location) = try acceptance(of: metadata)
        let access = engine.access
        return try mapStorageErrors {
            try engine.shares.acceptAndWait(at: location, for: user) { standing in
                try access.check(.acceptShare, AccessRequest(caller: .user(user), recordName: location.recordName, shareStanding: standing))
            }
        }
    }

    /// The user who accepts, and where the share `metadata` describes lives.
    private func acceptance(of metadata: Share.Metadata) throws(FogError) -> (String, ShareLocation) {
        let user = try shareUser(.acceptShare)
        let id = metadata.share.recordID
        return (user, ShareLocation(owner: id.zoneID.ownerName, zoneName: id.zoneID.zoneName, recordName: id.recordName))
    }

    /// The container's user record name, or the error the policy gives nobody for `action`.
    func shareUser(_ action: AccessAction) throws(FogError) -> String {
        if closed.isSet { throw FogError(.internalError, message: "the container is closed") }
        guard let userRecordName else {
            try engine.access.check(action, AccessRequest(caller: .anonymous))
            throw FogError(.notAuthenticated, message: "sharing needs a user")
        }
        return userRecordName
    }
}
