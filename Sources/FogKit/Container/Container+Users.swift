import Foundation

extension Container {
    /// The identity of the user whose directory entry has `emailAddress` (compared without
    /// regard to case), or `nil` when no user of the container has it, as CloudKit's
    /// `userIdentity(forEmailAddress:)` answers for an address it does not know.
    ///
    /// ```swift
    /// if let bob = try await container.userIdentity(forEmailAddress: "bob@example.com") {
    ///     print(bob.nameComponents?.givenName ?? "", bob.userRecordID!.recordName)
    /// }
    /// ```
    ///
    /// The embedding program ties email addresses to users with
    /// ``Container/Administrator/addUser(_:emailAddress:nameComponents:)`` (see `Docs/Users.md`).
    ///
    /// - Throws: ``FogError/Code/notAuthenticated`` for a container opened on behalf of
    ///   nobody; ``FogError/Code/invalidArguments`` when `emailAddress` is not an email
    ///   address.
    public func userIdentity(forEmailAddress emailAddress: String) async throws -> UserIdentity? {
        try userIdentityNow(forEmailAddress: emailAddress)
    }

    /// ``userIdentity(forEmailAddress:)`` without suspending.
    func userIdentityNow(forEmailAddress emailAddress: String) throws -> UserIdentity? {
        try checkUserLookup()
        return try fogTry { try engine.users.entry(forEmailAddress: emailAddress, call: "userIdentity(forEmailAddress:)")?.userIdentity }
    }

    /// The identity of the user whose user record ID is `userRecordID`, or `nil` when the
    /// container has no such user (as CloudKit answers). A user without a directory entry
    /// has an identity with no name and no email address.
    ///
    /// User record IDs are in the default zone: an ID in another zone names no user, so
    /// the answer is `nil`.
    ///
    /// - Throws: ``FogError/Code/notAuthenticated`` for a container opened on behalf of nobody.
    public func userIdentity(forUserRecordID userRecordID: Record.ID) async throws -> UserIdentity? {
        try userIdentityNow(forUserRecordID: userRecordID)
    }

    /// ``userIdentity(forUserRecordID:)`` without suspending.
    func userIdentityNow(forUserRecordID userRecordID: Record.ID) throws -> UserIdentity? {
        try checkUserLookup()
        guard userRecordID.zoneID.zoneName == RecordZone.ID.defaultZoneName else { return nil }
        return try fogTry { try engine.users.identity(forRecordName: userRecordID.recordName) }
    }

    func checkUserLookup() throws(FogError) {
        if closed.isSet { throw FogError(.internalError, message: "the container is closed") }
        try engine.access.check(.discoverUsers, in: privateCloudDatabase.context)
    }
}

extension Container.Administrator {
    /// Adds a user to the container, or changes its entry in the user directory: the email
    /// address by which others find the user (``Container/userIdentity(forEmailAddress:)``)
    /// and the user's name. Returns the user's identity.
    ///
    /// `user` is the name a container is opened with (`Container(…, user:)`). A user the
    /// store does not know yet is registered as opening a container for it would: a user
    /// record name and its `Users` records. The email address and name replace those the
    /// entry had; `nil` removes them.
    ///
    /// ```swift
    /// var name = PersonNameComponents()
    /// name.givenName = "Bob"
    /// name.familyName = "Smith"
    /// let bob = try await admin.addUser("bob", emailAddress: "bob@example.com", nameComponents: name)
    /// ```
    ///
    /// CloudKit has no such call: Apple's accounts hold these. Keeping the directory is
    /// administration, which only the embedding program does (`fog user add`).
    ///
    /// - Throws: ``FogError/Code/invalidArguments`` for an empty or too long user name, a
    ///   malformed email address, or a name with no part or an empty part;
    ///   ``FogError/Code/constraintViolation`` when another user has the email address.
    ///   Nothing is stored then.
    @discardableResult
    public func addUser(
        _ user: String, emailAddress: String? = nil, nameComponents: PersonNameComponents? = nil
    ) async throws -> UserIdentity {
        try authorize(.changeUsers)
        return try await mapStorageErrors {
            try await engine.users.setEntry(identity: user, emailAddress: emailAddress, nameComponents: nameComponents).userIdentity
        }
    }

    /// Every user the store knows, by the name containers are opened with: each user's
    /// identity, with the email address and name of its directory entry when it has one.
    public func users() throws -> [String: UserIdentity] {
        try authorize(.readUsers)
        return try fogTry {
            var all: [String: UserIdentity] = [:]
            for entry in try engine.users.allUsers() { all[entry.identity] = entry.userIdentity }
            return all
        }
    }
}
