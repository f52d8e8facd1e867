import Foundation

/// Who a user of a container is: the user's record ID, name and email address
/// (CloudKit's `CKUserIdentity`).
///
/// A container gives one for a user its store knows:
///
/// ```swift
/// if let bob = try await container.userIdentity(forEmailAddress: "bob@example.com") {
///     print(bob.userRecordID!.recordName, bob.nameComponents?.givenName ?? "")
/// }
/// ```
///
/// The name and the email address come from the container's user directory, which only
/// the embedding program changes (``Container/Administrator/addUser(_:emailAddress:nameComponents:)``,
/// `fog user add`); see `Docs/Users.md`. `CKUserIdentity` is a class; this is a value,
/// which compares by all its properties.
public struct UserIdentity: Sendable, Hashable, CustomStringConvertible {
    /// What a user is looked up by: an email address, a phone number or a user record ID
    /// (CloudKit's `CKUserIdentity.LookupInfo`).
    ///
    /// An identity a container returns carries, in its ``UserIdentity/lookupInfo``, the
    /// user's email address from the directory (when it has one) and the user's record ID.
    public struct LookupInfo: Sendable, Hashable, CustomStringConvertible {
        /// The email address, when looked up by one.
        public let emailAddress: String?
        /// The phone number, when looked up by one. FogKit's directory holds no phone numbers.
        public let phoneNumber: String?
        /// The user record ID, when looked up by one.
        public let userRecordID: Record.ID?

        /// Lookup information for an email address.
        public init(emailAddress: String) {
            self.init(emailAddress: emailAddress, phoneNumber: nil, userRecordID: nil)
        }

        /// Lookup information for a phone number.
        public init(phoneNumber: String) {
            self.init(emailAddress: nil, phoneNumber: phoneNumber, userRecordID: nil)
        }

        /// Lookup information for a user record ID.
        public init(userRecordID: Record.ID) {
            self.init(emailAddress: nil, phoneNumber: nil, userRecordID: userRecordID)
        }

        init(emailAddress: String?, phoneNumber: String?, userRecordID: Record.ID?) {
            self.emailAddress = emailAddress
            self.phoneNumber = phoneNumber
            self.userRecordID = userRecordID
        }

        /// Lookup information for each email address, in order.
        public static func lookupInfos(withEmails emails: [String]) -> [LookupInfo] {
            emails.map { LookupInfo(emailAddress: $0) }
        }

        /// Lookup information for each phone number, in order.
        public static func lookupInfos(withPhoneNumbers phoneNumbers: [String]) -> [LookupInfo] {
            phoneNumbers.map { LookupInfo(phoneNumber: $0) }
        }

        /// Lookup information for each user record ID, in order.
        public static func lookupInfos(with recordIDs: [Record.ID]) -> [LookupInfo] {
            recordIDs.map { LookupInfo(userRecordID: $0) }
        }

        /// The parts that are set, such as `LookupInfo(emailAddress: bob@example.com)`.
        public var description: String {
            var parts: [String] = []
            if let emailAddress { parts.append("emailAddress: \(emailAddress)") }
            if let phoneNumber { parts.append("phoneNumber: \(phoneNumber)") }
            if let userRecordID { parts.append("userRecordID: \(userRecordID.recordName)") }
            return "LookupInfo(\(parts.joined(separator: ", ")))"
        }
    }

    /// The user's record ID: the ID of the user's `Users` records, in the default zone.
    public let userRecordID: Record.ID?
    /// How the user can be looked up: the directory's email address and the user record ID.
    public let lookupInfo: LookupInfo?
    /// The user's name, when the directory has one.
    public let nameComponents: PersonNameComponents?
    /// Whether the user has an account: always `true` for an identity a container
    /// returns (every user of a FogKit store has one).
    public let hasiCloudAccount: Bool

    init(userRecordID: Record.ID?, lookupInfo: LookupInfo?, nameComponents: PersonNameComponents?, hasiCloudAccount: Bool) {
        self.userRecordID = userRecordID
        self.lookupInfo = lookupInfo
        self.nameComponents = nameComponents
        self.hasiCloudAccount = hasiCloudAccount
    }

    /// The user record name, email address and name, such as
    /// `UserIdentity(_3f…, bob@example.com, Bob Smith)`.
    public var description: String {
        var parts = [userRecordID?.recordName ?? "no user record"]
        if let email = lookupInfo?.emailAddress { parts.append(email) }
        if let nameComponents { parts.append(Self.displayName(nameComponents)) }
        return "UserIdentity(\(parts.joined(separator: ", ")))"
    }

    /// The set components, in the order prefix, given, middle, family, suffix, then
    /// the nickname in quotes.
    static func displayName(_ name: PersonNameComponents) -> String {
        var words = [name.namePrefix, name.givenName, name.middleName, name.familyName, name.nameSuffix].compactMap { $0 }
        if let nickname = name.nickname { words.append("\"\(nickname)\"") }
        return words.joined(separator: " ")
    }
}
