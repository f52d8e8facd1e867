import FogStorage
import Foundation

/// One user of the directory: who the user is to the embedding program (the identity a
/// container is opened with), the user record name, and what the directory ties to them.
struct UserDirectoryEntry: Sendable, Hashable {
    /// The `user:` string containers are opened with.
    var identity: String
    /// `_` and 32 hex digits.
    var userRecordName: String
    /// The email address as it was given (looked up without regard to case).
    var emailAddress: String?
    /// The user's name.
    var nameComponents: PersonNameComponents?

    /// The public form.
    var userIdentity: UserIdentity {
        let id = Record.ID(recordName: userRecordName)
        return UserIdentity(
            userRecordID: id, lookupInfo: .init(emailAddress: emailAddress, phoneNumber: nil, userRecordID: id),
            nameComponents: nameComponents, hasiCloudAccount: true)
    }

    /// The value of the entry's `FF ("u", user record name)` key (see `Layout+Users.swift`).
    func encoded() -> [UInt8] {
        var w = KeyWriter(capacity: 64)
        w.append(Layout.directoryEntryVersion)
        w.append(identity)
        for part in [emailAddress] + Self.parts(of: nameComponents) {
            if let part { w.append(part) } else { w.appendNull() }
        }
        return w.bytes
    }

    static func decode(_ bytes: [UInt8], userRecordName: String) throws -> UserDirectoryEntry {
        do {
            var r = KeyReader(bytes)
            let version = try r.readInt64()
            guard version == Layout.directoryEntryVersion else {
                throw FormatError(message: "user directory entry of \(userRecordName) has version \(version)")
            }
            let identity = try r.readString()
            var optionals: [String?] = []
            for _ in 0..<7 { optionals.append(r.readNullIfPresent() ? nil : try r.readString()) }
            var name: PersonNameComponents?
            if optionals[1...].contains(where: { $0 != nil }) {
                var components = PersonNameComponents()
                components.namePrefix = optionals[1]
                components.givenName = optionals[2]
                components.middleName = optionals[3]
                components.familyName = optionals[4]
                components.nameSuffix = optionals[5]
                components.nickname = optionals[6]
                name = components
            }
            return UserDirectoryEntry(identity: identity, userRecordName: userRecordName, emailAddress: optionals[0], nameComponents: name)
        } catch let error as KeyDecodingError {
            throw FormatError(message: "user directory entry of \(userRecordName): \(error)")
        }
    }

    /// The six parts the directory keeps, in their stored order (the phonetic
    /// representation is not kept).
    static func parts(of name: PersonNameComponents?) -> [String?] {
        guard let name else { return [nil, nil, nil, nil, nil, nil] }
        return [name.namePrefix, name.givenName, name.middleName, name.familyName, name.nameSuffix, name.nickname]
    }
}

extension UserDirectory {
    /// Sets the directory entry of `identity`, registering the user first when the store
    /// does not know it (its user record name and `Users` records, as opening a container
    /// for it would). The email address and name replace the entry's; `nil` removes them.
    ///
    /// - Throws: ``FogError/Code/invalidArguments`` for a bad user name, email address or
    ///   name, and ``FogError/Code/constraintViolation`` when the email address belongs to
    ///   another user; nothing is stored then.
    func setEntry(identity: String, emailAddress: String?, nameComponents: PersonNameComponents?) async throws -> UserDirectoryEntry {
        let call = "addUser(_:emailAddress:nameComponents:)"
        try UserDirectoryRules.checkUserName(identity, in: call)
        let emailKey = try emailAddress.map { (email) throws(FogError) in try UserDirectoryRules.emailKey(email, in: call) }
        if let nameComponents { try UserDirectoryRules.checkName(nameComponents, in: call) }
        // Only the parts the directory keeps (a phonetic representation is dropped).
        let kept = nameComponents.map { name in
            var copy = PersonNameComponents()
            (copy.namePrefix, copy.givenName, copy.middleName) = (name.namePrefix, name.givenName, name.middleName)
            (copy.familyName, copy.nameSuffix, copy.nickname) = (name.familyName, name.nameSuffix, name.nickname)
            return copy
        }
        return try await write { [self] txn, names in
            let recordName = try registeredName(of: identity, in: txn, names: &names)
            let entryKey = Layout.userEntryKey(recordName)
            if let emailKey, let owner = try txn.value(forKey: Layout.userEmailKey(emailKey), in: users) {
                let ownerName = String(decoding: owner, as: UTF8.self)
                if ownerName != recordName {
                    let other = try entry(forRecordName: ownerName, in: txn)?.identity ?? ownerName
                    throw FogError(
                        .constraintViolation,
                        message: "\(call): the email address \(emailAddress ?? "") belongs to user \(other); remove it there first")
                }
            }
            if let old = try txn.value(forKey: entryKey, in: users) {
                let previous = try UserDirectoryEntry.decode(old, userRecordName: recordName)
                if let oldEmail = previous.emailAddress {
                    _ = try txn.delete(Layout.userEmailKey(oldEmail.lowercased()), in: users)
                }
            }
            let entry = UserDirectoryEntry(
                identity: identity, userRecordName: recordName, emailAddress: emailAddress, nameComponents: kept)
            if let emailKey { try txn.put(Array(recordName.utf8), forKey: Layout.userEmailKey(emailKey), in: users) }
            try txn.put(entry.encoded(), forKey: entryKey, in: users)
            return entry
        }
    }

    /// The user whose directory entry has `emailAddress` (without regard to case), or
    /// `nil`. The address must be well formed (``UserDirectoryRules/emailKey(_:in:argument:)``).
    func entry(forEmailAddress emailAddress: String, call: String) throws -> UserDirectoryEntry? {
        let emailKey = try UserDirectoryRules.emailKey(emailAddress, in: call)
        return try read { txn, _ in
            guard let owner = try txn.value(forKey: Layout.userEmailKey(emailKey), in: users) else { return nil }
            let recordName = String(decoding: owner, as: UTF8.self)
            guard let entry = try entry(forRecordName: recordName, in: txn) else {
                throw FormatError(message: "user directory: email address \(emailKey) names user \(recordName), who has no entry")
            }
            return entry
        }
    }

    /// The identity of the user with user record name `recordName`: from its directory
    /// entry, or, for a user the store knows without one, with no email address and no
    /// name. `nil` for a name the store never gave out.
    func identity(forRecordName recordName: String) throws -> UserIdentity? {
        try read { txn, _ in
            if let entry = try entry(forRecordName: recordName, in: txn) { return entry.userIdentity }
            // Registering a user creates its private default zone; nothing else does.
            let home = ZoneAddress(scope: Database.Scope.private.rawValue, owner: recordName, zoneName: RecordZone.ID.defaultZoneName)
            guard try zones.zoneInfo(at: home, in: txn) != nil else { return nil }
            let id = Record.ID(recordName: recordName)
            return UserIdentity(
                userRecordID: id, lookupInfo: UserIdentity.LookupInfo(userRecordID: id), nameComponents: nil, hasiCloudAccount: true)
        }
    }

    /// Every user the store knows, with its directory entry (or none), by identity order.
    func allUsers() throws -> [UserDirectoryEntry] {
        try read { txn, _ in
            var found: [(String, String)] = []
            try txn.scan(users, range: Layout.userIdentityRange) { key, value in
                found.append((String(decoding: key, as: UTF8.self), String(decoding: value, as: UTF8.self)))
                return true
            }
            return try found.map { identity, recordName in
                try entry(forRecordName: recordName, in: txn)
                    ?? UserDirectoryEntry(identity: identity, userRecordName: recordName)
            }
        }
    }

    /// The stored directory entry of `recordName`, or `nil`.
    func entry(forRecordName recordName: String, in txn: some StorageReadTransaction) throws -> UserDirectoryEntry? {
        guard let bytes = try txn.value(forKey: Layout.userEntryKey(recordName), in: users) else { return nil }
        return try UserDirectoryEntry.decode(bytes, userRecordName: recordName)
    }
}
