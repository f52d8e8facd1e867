import FogStorage
import Foundation
import Synchronization

/// `schema`: ("m", role name, user record name) → ∅: the user is a member of the custom role.
/// `Docs/OnDiskFormat.md` describes it; change both together.
extension Layout {
    /// `schema`: ("m", role name, user record name) → ∅.
    static func memberKey(role: String, user: String) -> [UInt8] {
        var w = KeyWriter(capacity: 8 + role.utf8.count + user.utf8.count)
        w.append("m")
        w.append(role)
        w.append(user)
        return w.bytes
    }

    /// ("m", role name): the members of one role (of every role with `role` nil).
    static func memberPrefix(role: String?) -> [UInt8] {
        var w = KeyWriter(capacity: 4 + (role?.utf8.count ?? 0))
        w.append("m")
        if let role { w.append(role) }
        return w.bytes
    }
}

/// The grants of every record type and the custom roles of every user, as the public
/// database's access checks read them, cached in memory.
///
/// The `schema` table is the truth (`"t"`, `"g"` and `"m"` entries); every change of them
/// (an import, a deployment, a reset, a type created just in time, a membership change)
/// increments `meta/schemaVersion`. A reader or writer compares the version in its own
/// transaction with the cached one and reloads on a difference, so a change is seen at
/// once by every container open on the store, and a transaction sees its own snapshot.
final class PublicRoleCache: Sendable {
    /// The roles' entries of one catalog version.
    struct Snapshot: Sendable {
        var version: Int64
        /// The record types in the catalog, by name id.
        var types: Set<Int64> = []
        /// The grants of each record type: role name → permissions.
        var grants: [Int64: [String: Schema.Permissions]] = [:]
        /// The custom roles of each user, by user record name.
        var roles: [String: Set<String>] = [:]

        /// What the roles grant `caller` on record type `typeID` (`nil`: a name the store
        /// never saw). A type missing from the catalog has no grants, except with
        /// `justInTime` (a save in development, which adds the type with CloudKit's default
        /// grants before the record is written): then it has those defaults.
        func grants(ofType typeID: Int64?, named typeName: String, caller: Caller, justInTime: Bool) -> PublicGrants {
            let roles: Set<String>
            if case .user(let user) = caller { roles = self.roles[user] ?? [] } else { roles = [] }
            if let typeID, types.contains(typeID) || grants[typeID] != nil {
                return PublicGrants(grants: grants[typeID] ?? [:], caller: caller, roles: roles)
            }
            guard justInTime else { return .none }
            let defaults = SchemaCatalog<StoreBackend>.defaultGrants(of: typeName)
            return PublicGrants(
                grants: Dictionary(uniqueKeysWithValues: defaults.map { ($0.key.name, $0.value) }), caller: caller, roles: roles)
        }
    }

    private let cached = Mutex<Snapshot?>(nil)

    /// The entries as `txn` sees them.
    func snapshot<Store>(core: EngineCore<Store>, txn: Store.ReadTransaction) throws -> Snapshot {
        let version = try core.schemaVersion(in: txn)
        if let hit = cached.withLock({ $0?.version == version ? $0 : nil }) { return hit }
        var snapshot = Snapshot(version: version)
        try txn.scan(core.schema, range: .prefix(Layout.recordTypePrefix)) { key, value in
            // A retired type (an import removed it) has no grants.
            guard value.isEmpty else { return true }
            var reader = KeyReader(key)
            _ = try reader.readString()
            snapshot.types.insert(try reader.readInt64())
            return true
        }
        try txn.scan(core.schema, range: .prefix(Layout.grantPrefix(type: nil))) { key, value in
            var reader = KeyReader(key)
            _ = try reader.readString()
            guard value.count == 1 else { throw FormatError(message: "grant of \(value.count) bytes") }
            snapshot.grants[try reader.readInt64(), default: [:]][try reader.readString()] = Schema.Permissions(rawValue: value[0])
            return true
        }
        try txn.scan(core.schema, range: .prefix(Layout.memberPrefix(role: nil))) { key, _ in
            var reader = KeyReader(key)
            _ = try reader.readString()
            let role = try reader.readString()
            snapshot.roles[try reader.readString(), default: []].insert(role)
            return true
        }
        // Only committed snapshots fill the cache.
        if txn.isReadOnly { cached.withLock { $0 = snapshot } }
        return snapshot
    }
}

/// The public database's role checks of one read: the cached entries, the caller, and the
/// grants of each record type met so far.
struct PublicReadRoles {
    let snapshot: PublicRoleCache.Snapshot
    let caller: Caller
    /// The name id of the caller's user record name (`nil`: anonymous, or a name no record holds).
    let callerID: Int64?
    private var byType: [Int64: PublicGrants] = [:]

    init<Store>(core: EngineCore<Store>, caller: Caller, txn: Store.ReadTransaction, names: inout NameResolver<Store>) throws {
        snapshot = try core.publicRoles.snapshot(core: core, txn: txn)
        self.caller = caller
        if case .user(let user) = caller { callerID = try names.id(user) } else { callerID = nil }
    }

    /// The caller's grants on record type `typeID`.
    mutating func grants<Store>(ofType typeID: Int64, names: inout NameResolver<Store>) throws -> PublicGrants {
        if let known = byType[typeID] { return known }
        let grants = snapshot.grants(ofType: typeID, named: try names.name(typeID), caller: caller, justInTime: false)
        byType[typeID] = grants
        return grants
    }

    /// Whether the caller is the creator `creator` (a name id).
    @inline(__always)
    func isCaller(_ creator: Int64) -> Bool { callerID == creator }

    /// The access policy's refusal of a fetch of the record `view` (`id`), or `nil` when the
    /// caller may read it.
    mutating func refusal<Store>(of view: RecordView, id: Record.ID, names: inout NameResolver<Store>) throws -> FogError? {
        let grants = try grants(ofType: view.type, names: &names)
        if AccessPolicy.standard.mayRead(grants, callerIsCreator: isCaller(view.creator)) { return nil }
        let request = AccessRequest(
            caller: caller, scope: .public, zoneOwner: "", zoneName: id.zoneID.zoneName, recordType: try names.name(view.type),
            recordName: id.recordName, creator: try names.name(view.creator))
        do {
            try AccessPolicy.standard.checkRoles(.fetch, request, grants: grants)
            return nil
        } catch {
            return error
        }
    }

    /// Whether the caller may read the record `view` (a public change feed shows it).
    mutating func mayRead<Store>(_ view: RecordView, names: inout NameResolver<Store>) throws -> Bool {
        AccessPolicy.standard.mayRead(try grants(ofType: view.type, names: &names), callerIsCreator: isCaller(view.creator))
    }
}

extension SchemaCatalog {
    // MARK: - Role membership

    /// Makes user `user` (a user record name) a member of custom role `role`, or no longer
    /// one; returns whether anything changed. A change increments `meta/schemaVersion`.
    ///
    /// - Throws: ``FogError/Code/invalidArguments`` for a built-in role or a role the
    ///   catalog lacks; ``FogError/Code/unknownItem`` for a user the store never saw.
    func setMembership(_ member: Bool, user: String, role: Schema.Role) async throws -> Bool {
        try Self.checkMembershipRole(role)
        let users = core.store.table(named: Layout.users)
        return try await write { [self] txn, _ in
            try checkRoleExists(role, txn: txn.readView)
            if member {
                var known = false
                try txn.readView.scan(users) { _, value in
                    known = value.elementsEqual(user.utf8)
                    return !known
                }
                guard known else { throw FogError(.unknownItem, message: "no user of this environment has user record name \(user)") }
            }
            let key = Layout.memberKey(role: role.name, user: user)
            let present = try txn.readView.withValue(forKey: key, in: core.schema) { _ in true } ?? false
            guard present != member else { return false }
            if member { try txn.put([], forKey: key, in: core.schema) } else { try txn.delete(key, in: core.schema) }
            _ = try nextCounter(Layout.metaSchemaVersion, in: txn)
            return true
        }
    }

    /// The members of custom role `role`, by user record name, in name order.
    func members(of role: Schema.Role) throws -> [String] {
        try Self.checkMembershipRole(role)
        return try read { txn, _ in
            try checkRoleExists(role, txn: txn)
            var members: [String] = []
            try txn.scan(core.schema, range: .prefix(Layout.memberPrefix(role: role.name))) { key, _ in
                var reader = KeyReader(key)
                _ = try reader.readString()
                _ = try reader.readString()
                members.append(try reader.readString())
                return true
            }
            return members
        }
    }

    /// Deletes the memberships of `role` (a role the catalog loses).
    func deleteMembers(of role: Schema.Role, txn: Store.WriteTransaction) throws {
        try txn.deleteAll(in: core.schema, range: .prefix(Layout.memberPrefix(role: role.name)))
    }

    private static func checkMembershipRole(_ role: Schema.Role) throws(FogError) {
        if role.isBuiltIn {
            throw FogError(
                .invalidArguments,
                message:
                    "\(role.name) is a built-in role: it applies by itself (to everyone, signed-in users or creators) and has no members")
        }
    }

    private func checkRoleExists(_ role: Schema.Role, txn: Store.ReadTransaction) throws {
        guard try txn.withValue(forKey: Layout.roleKey(role.name), in: core.schema, { _ in true }) != nil else {
            throw FogError(.invalidArguments, message: "the schema has no role \(role.name) (CREATE ROLE \(role.name); then import it)")
        }
    }
}
