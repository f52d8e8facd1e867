import FogKit
import Foundation
import HTTPTypes
import Hummingbird

/// `users/caller`, `users/discover` and the older `users/current` and `users/lookup/*`.
enum UserEndpoints {
    /// A user identity dictionary's members: `userRecordName`, `lookupInfo`, `nameComponents`.
    static func identity(_ identity: UserIdentity?, recordName: String) -> [(String, JSON)] {
        var members: [(String, JSON)] = [("userRecordName", .string(recordName))]
        var lookup: [(String, JSON)] = []
        if let email = identity?.lookupInfo?.emailAddress { lookup.append(("emailAddress", .string(email))) }
        if let phone = identity?.lookupInfo?.phoneNumber { lookup.append(("phoneNumber", .string(phone))) }
        lookup.append(("userRecordName", .string(recordName)))
        members.append(("lookupInfo", .object(lookup)))
        if let name = identity?.nameComponents {
            var parts: [(String, JSON)] = []
            for (key, value) in [
                ("namePrefix", name.namePrefix), ("givenName", name.givenName), ("middleName", name.middleName),
                ("familyName", name.familyName), ("nameSuffix", name.nameSuffix), ("nickname", name.nickname),
            ] {
                if let value { parts.append((key, .string(value))) }
            }
            members.append(("nameComponents", .object(parts)))
        }
        return members
    }

    /// The caller's record name and identity; `AUTHENTICATION_REQUIRED` for nobody.
    static func callerIdentity(_ call: EndpointCall) async throws -> (String, UserIdentity?) {
        guard call.caller.user != nil else {
            throw ServerError(.authenticationRequired, "this request needs a signed-in user", redirectURL: call.state.signInURL)
        }
        let id = try await call.container.userRecordID()
        return (id.recordName, try await call.container.userIdentity(forUserRecordID: id))
    }

    /// `users/caller`: the caller's identity at the top level (and again in `users`, as the
    /// documentation shows it). Works under a server-to-server key, naming the key's user.
    @Sendable static func caller(_ call: EndpointCall) async throws -> JSON {
        let (name, identity) = try await callerIdentity(call)
        let members = self.identity(identity, recordName: name)
        return .object(members + [("users", .array([.object(members)]))])
    }

    /// `users/current` (deprecated): `{userRecordName, firstName, lastName}`.
    @Sendable static func current(_ call: EndpointCall) async throws -> JSON {
        let (name, identity) = try await callerIdentity(call)
        return .object(user(identity, recordName: name, email: false))
    }

    static func user(_ identity: UserIdentity?, recordName: String, email: Bool) -> [(String, JSON)] {
        var members: [(String, JSON)] = [("userRecordName", .string(recordName))]
        if let given = identity?.nameComponents?.givenName { members.append(("firstName", .string(given))) }
        if let family = identity?.nameComponents?.familyName { members.append(("lastName", .string(family))) }
        if email, let address = identity?.lookupInfo?.emailAddress { members.append(("emailAddress", .string(address))) }
        return members
    }

    struct DiscoverRequest: Decodable {
        struct LookupInfo: Decodable {
            var emailAddress: String?
            var phoneNumber: String?
            var userRecordName: String?
        }
        var lookupInfos: [LookupInfo]?
    }

    /// The identity a lookup info finds, through the container's own lookups (which the
    /// directory's discoverability rules govern).
    static func find(_ info: DiscoverRequest.LookupInfo, call: EndpointCall) async throws -> UserIdentity? {
        if let email = info.emailAddress { return try await call.container.userIdentity(forEmailAddress: email) }
        if let name = info.userRecordName { return try await call.container.userIdentity(forUserRecordID: Record.ID(recordName: name)) }
        return nil
    }

    /// `users/discover`: POST finds the identities of `lookupInfos` (email addresses or user
    /// record names; unknown ones are left out); GET, the caller's address book, which FogKit
    /// does not have, so no identities.
    @Sendable static func discover(_ call: EndpointCall) async throws -> JSON {
        _ = try await callerIdentity(call)
        guard call.request.method == .post else { return .object([("users", .array([]))]) }
        var users: [JSON] = []
        for info in try call.decode(DiscoverRequest.self).lookupInfos ?? [] {
            if let identity = try await find(info, call: call), let id = identity.userRecordID {
                users.append(.object(self.identity(identity, recordName: id.recordName)))
            }
        }
        return .object([("users", .array(users))])
    }

    struct LookupRequest: Decodable {
        struct User: Decodable {
            var emailAddress: String?
            var userRecordName: String?
        }
        var users: [User]?
    }

    /// `users/lookup/email` (deprecated): user dictionaries with their email address.
    @Sendable static func lookupEmail(_ call: EndpointCall) async throws -> JSON {
        try await lookup(call, email: true)
    }

    /// `users/lookup/id` (deprecated): user dictionaries without an email address.
    @Sendable static func lookupID(_ call: EndpointCall) async throws -> JSON {
        try await lookup(call, email: false)
    }

    /// `users/lookup/contacts` (deprecated): the caller's contacts; FogKit has none.
    @Sendable static func lookupContacts(_ call: EndpointCall) async throws -> JSON {
        _ = try await callerIdentity(call)
        return .object([("users", .array([]))])
    }

    static func lookup(_ call: EndpointCall, email: Bool) async throws -> JSON {
        _ = try await callerIdentity(call)
        var users: [JSON] = []
        for user in try call.decode(LookupRequest.self).users ?? [] {
            let info = DiscoverRequest.LookupInfo(
                emailAddress: email ? user.emailAddress : nil, userRecordName: email ? nil : user.userRecordName)
            if let identity = try await find(info, call: call), let id = identity.userRecordID {
                users.append(.object(self.user(identity, recordName: id.recordName, email: email)))
            }
        }
        return .object([("users", .array(users))])
    }
}
