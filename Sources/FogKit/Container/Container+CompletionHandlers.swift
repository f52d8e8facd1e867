import Foundation

// CloudKit's completion-handler container methods, each a thin layer over its `async` twin
// (see `completeLater`).

extension Container {
    /// The account status of the container's user (CloudKit's
    /// `accountStatus(completionHandler:)`).
    public func accountStatus(completionHandler: @escaping @Sendable (AccountStatus, (any Error)?) -> Void) {
        completeLater(
            { try await self.accountStatus() },
            { result in
                switch result {
                case .success(let status): completionHandler(status, nil)
                case .failure(let error): completionHandler(.couldNotDetermine, error)
                }
            })
    }

    /// The ID of the user's record (CloudKit's `fetchUserRecordID(completionHandler:)`);
    /// `notAuthenticated` for a container opened on behalf of nobody.
    public func fetchUserRecordID(completionHandler: @escaping @Sendable (Record.ID?, (any Error)?) -> Void) {
        completeLater(
            { try await self.userRecordID() }, pair: completionHandler)
    }

    /// The metadata of the share at `url` (CloudKit's
    /// `fetchShareMetadata(with:completionHandler:)`).
    public func fetchShareMetadata(with url: URL, completionHandler: @escaping @Sendable (Share.Metadata?, (any Error)?) -> Void) {
        completeLater({ try await self.shareMetadata(for: url) }, pair: completionHandler)
    }

    /// Accepts a share as the container's user (CloudKit's `accept(_:completionHandler:)`).
    public func accept(_ metadata: Share.Metadata, completionHandler: @escaping @Sendable (Share?, (any Error)?) -> Void) {
        completeLater({ try await self.accept(metadata) }, pair: completionHandler)
    }

    /// A participant for the user with this email address (CloudKit's
    /// `fetchShareParticipant(withEmailAddress:completionHandler:)`).
    public func fetchShareParticipant(
        withEmailAddress emailAddress: String, completionHandler: @escaping @Sendable (Share.Participant?, (any Error)?) -> Void
    ) {
        completeLater({ try await self.shareParticipant(forEmailAddress: emailAddress) }, pair: completionHandler)
    }

    /// A participant for the user with this user record ID (CloudKit's
    /// `fetchShareParticipant(withUserRecordID:completionHandler:)`).
    public func fetchShareParticipant(
        withUserRecordID userRecordID: Record.ID, completionHandler: @escaping @Sendable (Share.Participant?, (any Error)?) -> Void
    ) {
        completeLater({ try await self.shareParticipant(forUserRecordID: userRecordID) }, pair: completionHandler)
    }

    /// The identity of the user with this email address, or `nil` and no error for an
    /// unknown one (CloudKit's deprecated `discoverUserIdentity(withEmailAddress:completionHandler:)`).
    public func discoverUserIdentity(
        withEmailAddress emailAddress: String, completionHandler: @escaping @Sendable (UserIdentity?, (any Error)?) -> Void
    ) {
        completeLater(
            { try await self.userIdentity(forEmailAddress: emailAddress) },
            { result in
                switch result {
                case .success(let identity): completionHandler(identity, nil)
                case .failure(let error): completionHandler(nil, error)
                }
            })
    }

    /// The identity of the user with this user record ID, or `nil` and no error for an
    /// unknown one (CloudKit's deprecated `discoverUserIdentity(withUserRecordID:completionHandler:)`).
    public func discoverUserIdentity(
        withUserRecordID userRecordID: Record.ID, completionHandler: @escaping @Sendable (UserIdentity?, (any Error)?) -> Void
    ) {
        completeLater(
            { try await self.userIdentity(forUserRecordID: userRecordID) },
            { result in
                switch result {
                case .success(let identity): completionHandler(identity, nil)
                case .failure(let error): completionHandler(nil, error)
                }
            })
    }
}
