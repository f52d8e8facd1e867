import Foundation

/// Who asks for something: a signed-in user, nobody, or the embedding program's
/// administrator (``Container/Administrator``).
///
/// The administrator is not a database user: it has no private database and reads
/// no records through databases; it runs the container-level calls (schema, indexes,
/// backups, store information, integrity). See `Docs/Access.md`.
enum Caller: Sendable, Hashable {
    /// A user, by user record name (`_` and 32 hex digits).
    case user(String)
    /// A container opened on behalf of nobody (`user: nil`).
    case anonymous
    /// The administrator handle.
    case administrator

    /// `.user(name)`, or `.anonymous` for `nil`.
    @inline(__always)
    init(user: String?) {
        if let user { self = .user(user) } else { self = .anonymous }
    }
}

/// What a caller wants to do.
enum AccessAction: Sendable, Hashable {
    /// Fetch records by ID.
    case fetch
    /// Run (or explain) a query; asked once per query, then per candidate through
    /// ``AccessPolicy/queryCandidates(_:)``.
    case query
    /// Save a record: create one (no creator yet) or modify one (its creator given).
    case save
    /// Delete a record named in a request.
    case delete
    /// Delete a record because a record it references with `deleteSelf` is deleted.
    case cascadeDelete
    /// Fetch zones.
    case zoneRead
    /// Create (save) zones.
    case zoneModify
    /// Delete or purge zones.
    case zoneDelete
    /// Read a zone's change feed.
    case zoneChanges
    /// Read a database's change feed.
    case databaseChanges
    /// Read the current user's identity (user record ID, current user record).
    case currentUser
    /// Look up other users' identities in the user directory
    /// (`userIdentity(forEmailAddress:)`, `userIdentity(forUserRecordID:)`).
    case discoverUsers
    /// Read a share's metadata by its URL (`shareMetadata(for:)`); the request says the
    /// caller's ``ShareStanding`` in it.
    case shareMetadata
    /// Accept a share (`accept(_:)`); the request says the caller's ``ShareStanding`` in it.
    case acceptShare
    /// Leave a share: a participant's delete of the share record in the shared database.
    case leaveShare
    /// One of the container-level administrative calls.
    case administer(AdministrativeCall)
    /// Save, delete or fetch one's subscriptions, or read one's notifications: a user's, in
    /// any database (which kinds a database allows is the subscription service's per-item check).
    case manageSubscriptions
    /// Keep, list, fetch and forget one's own long-lived operations: a user's.
    case longLivedOperations

    /// Whether the action changes records or zones.
    var writes: Bool {
        switch self {
        case .save, .delete, .cascadeDelete, .zoneModify, .zoneDelete, .manageSubscriptions: true
        default: false
        }
    }
}

/// The container-level administrative calls, each only for the administrator.
enum AdministrativeCall: String, Sendable, Hashable, CaseIterable {
    case setIndexes, readIndexes, indexAdvice, backup, storeInfo, checkIntegrity, migrate
    case readSchema, importSchema, deploySchema, resetDevelopment
    /// Adding a user or changing its directory entry; listing the directory.
    case changeUsers, readUsers
    case changeRoleMembers, readRoleMembers, lookUpUser
    /// Reading or changing a document the store keeps for the program that serves it.
    case readStoreDocument, changeStoreDocument
    /// Copying the whole store to another place or backend.
    case copyStore

    /// What the call does, for messages.
    var what: String {
        switch self {
        case .setIndexes: "changing indexes (setIndexes)"
        case .readIndexes: "reading index definitions (indexes(ofRecordType:))"
        case .indexAdvice: "reading index advice (indexAdvice())"
        case .backup: "backing up the store (backup(to:))"
        case .storeInfo: "describing the store (storeInfo())"
        case .checkIntegrity: "checking the store's integrity (checkIntegrity())"
        case .migrate: "migrating the store to this FogKit's format (it was written by an older version)"
        case .readSchema: "reading the schema (schema(for:))"
        case .importSchema: "importing a schema (importSchema(_:))"
        case .deploySchema: "deploying the schema to production (deploySchema())"
        case .resetDevelopment: "resetting the development environment (resetDevelopmentEnvironment())"
        case .changeUsers: "changing the user directory (addUser(_:emailAddress:nameComponents:))"
        case .readUsers: "listing the user directory (users())"
        case .changeRoleMembers: "changing a security role's members (addUser(_:toRole:), removeUser(_:fromRole:))"
        case .readRoleMembers: "reading a security role's members (users(inRole:))"
        case .lookUpUser: "looking up a user's record ID (userRecordID(forUser:))"
        case .readStoreDocument: "reading a store document (storeDocument(named:))"
        case .changeStoreDocument: "changing a store document (updateStoreDocument(named:_:))"
        case .copyStore: "copying the store (copyStore(to:progress:))"
        }
    }
}

/// Everything the policy may look at for one decision. Fields that do not apply are
/// `nil`: a database-level question (may this caller read the private database at
/// all?) has no zone or record; an administrative call has no scope.
///
/// Made of references to strings the caller already holds: building one does not
/// allocate.
struct AccessRequest: Sendable {
    var caller: Caller
    /// The database, or `nil` for container-level calls.
    var scope: Database.Scope?
    /// The zone's owner (user record name; empty for the public database), when known.
    var zoneOwner: String?
    /// The zone's name, when known.
    var zoneName: String?
    /// The record's type, when a record is concerned.
    var recordType: String?
    /// The record's name, when a record is concerned (for messages).
    var recordName: String?
    /// The record's creator (user record name), for existing records.
    var creator: String?
    /// For ``AccessAction/cascadeDelete``: the record whose deletion cascades.
    var cascadeOrigin: String?
    /// For share actions: the caller's standing in the share.
    var shareStanding: ShareStanding?
    /// In the shared database, for a query: the shares of the zone the caller accepted.
    var acceptedShares: [AcceptedShare]?
    /// In the shared database, for a write: the permission of the accepted share that covers
    /// the record (``shareStanding`` says whether one does).
    var sharePermission: Share.ParticipantPermission?
    /// In the shared database, for a delete: whether the record is the root of its share.
    var isShareRoot = false

    @inline(__always)
    init(
        caller: Caller, scope: Database.Scope? = nil, zoneOwner: String? = nil, zoneName: String? = nil, recordType: String? = nil,
        recordName: String? = nil, creator: String? = nil, cascadeOrigin: String? = nil, shareStanding: ShareStanding? = nil,
        acceptedShares: [AcceptedShare]? = nil
    ) {
        self.caller = caller
        self.scope = scope
        self.zoneOwner = zoneOwner
        self.zoneName = zoneName
        self.recordType = recordType
        self.recordName = recordName
        self.creator = creator
        self.cascadeOrigin = cascadeOrigin
        self.shareStanding = shareStanding
        self.acceptedShares = acceptedShares
    }
}

/// Where a user stands in a share, for the share actions.
enum ShareStanding: Sendable, Hashable {
    /// The user owns the share.
    case owner
    /// The user is an invited participant with this status.
    case participant(Share.ParticipantAcceptanceStatus)
    /// The user is not invited, but the share has a public permission: anyone may join.
    case publicAccess
    /// The user is not invited to a share without public permission.
    case outsider
}

/// What the accepted shares of one zone cover, for the shared database: every record (a
/// zone-wide share), the share records, and the records whose `parent` chain reaches a root
/// that names one of the shares.
struct SharedCoverage: Sendable {
    /// Whether a zone-wide share covers the whole zone.
    let zoneWide: Bool
    /// Each hierarchy share's name → its root's name.
    let roots: [String: String]
    /// The names of the share records.
    let shareNames: Set<String>

    init(_ shares: [AcceptedShare]) {
        zoneWide = shares.contains { $0.root == nil }
        var roots: [String: String] = [:]
        for share in shares { if let root = share.root { roots[share.name] = root } }
        self.roots = roots
        shareNames = Set(shares.map(\.name))
    }

    /// Whether a record is covered: `share` is what its `share` field names and `parent` its
    /// parent; `ancestor` gives the `share` and `parent` of a record by name (`nil`: none).
    func covers(
        _ name: String, share: String?, parent: String?, memo: inout [String: Bool],
        ancestor: (String) throws -> (share: String?, parent: String?)?
    ) rethrows -> Bool {
        if zoneWide || shareNames.contains(name) { return true }
        var path: [String] = []
        var visited: Set<String> = []
        var result = false
        var (current, share, parent) = (name, share, parent)
        while visited.insert(current).inserted {
            if let known = memo[current] {
                result = known
                break
            }
            path.append(current)
            if let share, roots[share] == current {
                result = true
                break
            }
            guard let next = parent, let found = try ancestor(next) else { break }
            (current, share, parent) = (next, found.share, found.parent)
        }
        for node in path { memo[node] = result }
        return result
    }
}

/// Which query candidates a caller may see, decided once per query and applied to
/// each candidate by name id, without allocating.
enum CandidateCheck: Sendable {
    /// Every candidate the query reaches.
    case everyone
    /// Only records whose creator has this name id.
    case creator(Int64)
    /// No candidate.
    case nobody
    /// Only records the shares cover (the shared database): the query run decides each
    /// candidate with ``SharedCoverage`` (its `parent` chain), not by creator.
    case sharedRecords(SharedCoverage)

    @inline(__always)
    func allows(creator: Int64) -> Bool {
        switch self {
        case .everyone: true
        case .creator(let id): id == creator
        case .nobody: false
        case .sharedRecords: true
        }
    }
}

/// The one place FogKit decides who may do what: every database path, change feed
/// and administrative call asks it, with the caller, the database, the zone and its
/// owner, the record's type and creator, and the action. It returns, or throws a
/// ``FogError`` with CloudKit's code (``FogError/Code/notAuthenticated``,
/// ``FogError/Code/permissionFailure``, ``FogError/Code/badDatabase``) and a message
/// naming what and where.
///
/// The rules (CloudKit's; see `Docs/Access.md` for the table):
/// - Nobody (anonymous) reads the public database; everything else needs a user.
/// - A user reads and writes their private database; the shared database holds the owners'
///   zones the user accepted a share of.
/// - In the public database, the security roles of the record's type decide who reads,
///   creates, changes and deletes records, directly or through a `deleteSelf` cascade
///   (``checkRoles(_:_:grants:)``, in `PublicRoles.swift`).
/// - User records (type `Users`) are never deleted.
/// - Users look other users up in the user directory; nobody (anonymous) cannot.
/// - A share's metadata and its acceptance are for its owner, its invited participants, and
///   anyone when it has a public permission.
/// - In the shared database a user reads the records an accepted share covers, and writes
///   them with `readWrite` permission (never a share's root: only its owner deletes that).
/// - Zones are created and deleted only in the private database.
/// - Only the administrator runs container-level calls; the administrator is not a
///   database user.
///
/// Security roles and sharing will extend this type, not its callers.
struct AccessPolicy: Sendable {
    /// CloudKit's rules, as described above.
    static let standard = AccessPolicy()

    /// Throws unless `request.caller` may perform `action`.
    @inline(__always)
    func check(_ action: AccessAction, _ request: AccessRequest) throws(FogError) {
        // The hot case: a user reading their own private database.
        if case .user = request.caller, request.scope == .private, !action.writes, request.zoneOwner == nil { return }
        try decide(action, request)
    }

    /// Throws unless `context`'s caller may perform `action` in its database at all
    /// (before any zone or record is known).
    @inline(__always)
    func check(_ action: AccessAction, in context: DatabaseContext) throws(FogError) {
        // The hot case of ``check(_:_:)``, decided before any request is built: building and
        // dropping one costs about 2,000 instructions per fetch (callgrind, W2a).
        if context.user != nil, context.scope == .private, !action.writes { return }
        if let problem = context.accountProblem, context.scope != .public || action.writes || action == .currentUser {
            throw problem.error(action == .currentUser ? "the current user" : "the \(context.scope) database")
        }
        try decide(action, AccessRequest(caller: context.caller, scope: context.scope))
    }

    /// Which candidates of a query the caller may see, once the database-level
    /// ``AccessAction/query`` check passed: in the shared database, the records the shares of
    /// the zone the caller accepted cover (``CandidateCheck/sharedRecords(_:)``, from
    /// `request.acceptedShares`); elsewhere every record of a database the caller may read
    /// (``CandidateCheck/everyone``).
    @inline(__always)
    func queryCandidates(_ request: AccessRequest) -> CandidateCheck {
        if request.scope == .shared { return .sharedRecords(SharedCoverage(request.acceptedShares ?? [])) }
        return .everyone
    }

    /// The decision, outside the inlined fast path.
    func decide(_ action: AccessAction, _ request: AccessRequest) throws(FogError) {
        if case .administer(let call) = action {
            guard case .administrator = request.caller else {
                throw FogError(
                    .permissionFailure,
                    message: "\(call.what) is administration: only a Container.Administrator may do it, not \(describe(request.caller))")
            }
            return
        }
        if action == .shareMetadata || action == .acceptShare || action == .leaveShare {
            try decideShare(action, request)
            return
        }
        if action == .longLivedOperations {
            switch request.caller {
            case .user: return
            case .anonymous:
                throw FogError(
                    .notAuthenticated, message: "long-lived operations belong to a user; the container was opened on behalf of nobody")
            case .administrator:
                throw FogError(.permissionFailure, message: "the administrator is not a user of the container and has no operations")
            }
        }
        if action == .discoverUsers {
            switch request.caller {
            case .user: return
            case .anonymous:
                throw FogError(.notAuthenticated, message: "looking up users needs a user; the container was opened on behalf of nobody")
            case .administrator:
                throw FogError(
                    .permissionFailure,
                    message: "the administrator is not a user of the container; it lists the user directory with users()")
            }
        }
        guard let scope = request.scope else {
            throw FogError(.internalError, message: "access to \(action) was asked without a database")
        }
        let user: String
        switch request.caller {
        case .administrator:
            throw FogError(
                .permissionFailure,
                message: "the administrator is not a database user; open a container for a user to use the \(scope) database")
        case .anonymous:
            if action == .currentUser {
                throw FogError(.notAuthenticated, message: "the container was opened on behalf of nobody")
            }
            if action.writes {
                throw FogError(.notAuthenticated, message: "writing needs a user; the container was opened on behalf of nobody")
            }
            if scope != .public {
                throw FogError(
                    .notAuthenticated, message: "the \(scope) database needs a user; the container was opened on behalf of nobody")
            }
            return
        case .user(let name):
            user = name
        }
        switch action {
        case .zoneModify, .zoneDelete:
            // A request naming no zone changes nothing; it only needs a user.
            guard request.zoneName != nil else { return }
            switch scope {
            case .private: return
            case .public: throw FogError(.badDatabase, message: "the public database has only its default zone")
            case .shared: throw FogError(.badDatabase, message: "zones cannot be created or deleted in the shared database")
            }
        case .delete, .cascadeDelete:
            if scope == .shared, request.recordName != nil {
                try decideSharedWrite(action, request)
                if request.isShareRoot {
                    throw FogError(
                        .permissionFailure,
                        message: "record \(request.recordName ?? "") is the root of a share: only its owner deletes it"
                            + cascadeNote(request))
                }
            }
            // In the public database the security roles decide the rest (`checkRoles`).
            if request.recordType == Record.SystemType.userRecord {
                throw FogError(
                    .permissionFailure, message: "user record \(request.recordName ?? "") cannot be deleted" + cascadeNote(request))
            }
        case .save:
            if scope == .shared, request.recordName != nil { try decideSharedWrite(action, request) }
            // In the public database the security roles decide (`checkRoles`).
            _ = user
        case .fetch:
            // A record of an owner's zone in the shared database: only the shared ones.
            if scope == .shared, let recordName = request.recordName, request.shareStanding != .participant(.accepted) {
                throw FogError(.unknownItem, message: Self.notShared(recordName))
            }
        case .query, .zoneRead, .zoneChanges, .databaseChanges, .currentUser, .discoverUsers, .shareMetadata, .acceptShare,
            .leaveShare, .administer, .manageSubscriptions, .longLivedOperations:
            return
        }
    }

    /// Share metadata and acceptance: for the owner, for invited participants who were not
    /// removed, and for anyone when the share has a public permission; anyone else gets
    /// `participantMayNeedVerification`, as CloudKit answers someone a private share does not name.
    private func decideShare(_ action: AccessAction, _ request: AccessRequest) throws(FogError) {
        let what =
            switch action {
            case .acceptShare: "accepting a share"
            case .leaveShare: "leaving a share"
            default: "reading a share's metadata"
            }
        switch request.caller {
        case .anonymous:
            throw FogError(.notAuthenticated, message: "\(what) needs a user; the container was opened on behalf of nobody")
        case .administrator:
            throw FogError(.permissionFailure, message: "the administrator is not a database user; \(what) needs a user")
        case .user:
            switch request.shareStanding {
            case .owner?, .publicAccess?, .participant(.pending)?, .participant(.accepted)?:
                return
            default:
                if action == .leaveShare { throw FogError(.unknownItem, message: Self.notShared(request.recordName ?? "")) }
                throw FogError(
                    .participantMayNeedVerification,
                    message: "\(what): share \(request.recordName ?? "") does not name this user as a participant")
            }
        }
    }

    /// A write in the shared database: the record must be one an accepted share covers (a
    /// new record: under one), with `readWrite` permission.
    private func decideSharedWrite(_ action: AccessAction, _ request: AccessRequest) throws(FogError) {
        let name = request.recordName ?? ""
        guard request.shareStanding == .participant(.accepted) else {
            if request.creator == nil, action == .save {
                throw FogError(
                    .permissionFailure, message: "record \(name) is not under a record shared with this user: it cannot be created here")
            }
            if action == .cascadeDelete {
                // Not naming the record: the user may not know it.
                throw FogError(
                    .permissionFailure,
                    message:
                        "deleting \(request.cascadeOrigin ?? "") would delete a record not shared with this user through a deleteSelf reference"
                )
            }
            throw FogError(.unknownItem, message: Self.notShared(name))
        }
        guard request.sharePermission == .readWrite else {
            throw FogError(
                .permissionFailure, message: "record \(name) is shared with this user read-only" + cascadeNote(request))
        }
    }

    /// The message for a record of a shared zone that does not exist or that no accepted
    /// share covers: the same words for both, so that a user cannot tell which.
    static func notShared(_ recordName: String) -> String {
        "record \(recordName) does not exist or is not shared with this user"
    }

    func cascadeNote(_ request: AccessRequest) -> String {
        guard let origin = request.cascadeOrigin else { return "" }
        return "; deleting \(origin) would delete it through a deleteSelf reference"
    }

    private func describe(_ caller: Caller) -> String {
        switch caller {
        case .user: "a container's user"
        case .anonymous: "a container opened on behalf of nobody"
        case .administrator: "the administrator"
        }
    }
}

extension DatabaseContext {
    /// The caller this context acts for.
    @inline(__always)
    var caller: Caller { Caller(user: user) }
}
