import Foundation

/// What the security roles of the public database grant one caller on one record type
/// (CloudKit's rules, reference §11; `Docs/Access.md`, "Security roles").
///
/// Permissions are the union of the roles that apply: `_world` to everyone, anonymous
/// callers included; `_icloud` to any user; a custom role to its members; and `_creator`
/// to the creator of each record, which is why ``ownRecords`` is kept apart.
struct PublicGrants: Sendable, Hashable {
    /// What the caller may do with any record of the type.
    var anyRecord: Schema.Permissions = []
    /// What `_creator` adds on the records the caller created (empty for anonymous callers).
    var ownRecords: Schema.Permissions = []

    /// A record type no role grants anything: unusable in the public database.
    static let none = PublicGrants()

    /// The caller's permissions from the grants of a record type (role name → permissions),
    /// `roles` being the custom roles the caller is a member of.
    init(grants: [String: Schema.Permissions], caller: Caller, roles: Set<String>) {
        for (role, permissions) in grants {
            switch role {
            case Schema.Role.world.name:
                anyRecord.formUnion(permissions)
            case Schema.Role.authenticated.name:
                if case .user = caller { anyRecord.formUnion(permissions) }
            case Schema.Role.creator.name:
                if case .user = caller { ownRecords.formUnion(permissions) }
            default:
                if roles.contains(role) { anyRecord.formUnion(permissions) }
            }
        }
    }

    init() {}

    /// The caller's permissions on one record.
    @inline(__always)
    func permissions(callerIsCreator: Bool) -> Schema.Permissions {
        callerIsCreator ? anyRecord.union(ownRecords) : anyRecord
    }

    /// Whether the caller may read some record of the type (the caller's own at least).
    var readsSome: Bool { anyRecord.union(ownRecords).contains(.read) }
}

extension AccessPolicy {
    /// Throws unless `request.caller` may perform `action` on a record: the rules of
    /// ``check(_:_:)``, then, in the public database, the security roles (``checkRoles(_:_:grants:)``).
    func check(_ action: AccessAction, _ request: AccessRequest, grants: PublicGrants) throws(FogError) {
        try check(action, request)
        try checkRoles(action, request, grants: grants)
    }

    /// The security roles of the public database, for a caller ``check(_:_:)`` let through:
    /// a fetch needs READ, a new record CREATE, a change or a delete (direct or through a
    /// `deleteSelf` cascade) WRITE, from the union of the roles that apply to the caller
    /// and the record (`request.creator`). Other databases and actions pass.
    ///
    /// - Throws: ``FogError/Code/permissionFailure`` naming the record, its type and the
    ///   permission it lacks.
    func checkRoles(_ action: AccessAction, _ request: AccessRequest, grants: PublicGrants) throws(FogError) {
        guard request.scope == .public else { return }
        let needed: Schema.Permissions
        let verb: String
        switch action {
        case .fetch:
            (needed, verb) = (.read, "read")
        case .save:
            (needed, verb) = request.creator == nil ? (.create, "created") : (.write, "changed")
        case .delete, .cascadeDelete:
            (needed, verb) = (.write, "deleted")
        default:
            return
        }
        let isCreator: Bool
        if case .user(let user) = request.caller, let creator = request.creator { isCreator = creator == user } else { isCreator = false }
        guard !grants.permissions(callerIsCreator: isCreator).contains(needed) else { return }
        let record = request.recordName.map { "record \($0) of type " } ?? "a record of type "
        let who: String
        switch request.caller {
        case .anonymous: who = "nobody (anonymous)"
        case .user: who = isCreator ? "its creator" : request.creator == nil ? "this user" : "a user who is not its creator"
        case .administrator: who = "the administrator"
        }
        throw FogError(
            .permissionFailure,
            message: "\(record)\(request.recordType ?? "?") in the public database cannot be \(verb) by \(who): "
                + "no security role that applies grants \(needed) on the record type" + cascadeNote(request))
    }

    /// Which candidates of a public-database query the caller may see: every one when a
    /// role grants READ on the type, the caller's own (`callerID`, the name id of the
    /// caller's user record name, `nil` when the store never saw it) when only `_creator`
    /// does, none otherwise.
    func queryCandidates(_ request: AccessRequest, grants: PublicGrants, callerID: Int64?) -> CandidateCheck {
        guard request.scope == .public else { return queryCandidates(request) }
        if grants.anyRecord.contains(.read) { return .everyone }
        if grants.ownRecords.contains(.read), let callerID { return .creator(callerID) }
        return .nobody
    }

    /// Whether the caller may read a record in the public database: a public change feed
    /// leaves out, without an error, the records the caller may not read; a fetch asks
    /// ``checkRoles(_:_:grants:)`` for the error.
    @inline(__always)
    func mayRead(_ grants: PublicGrants, callerIsCreator: Bool) -> Bool {
        grants.permissions(callerIsCreator: callerIsCreator).contains(.read)
    }
}
