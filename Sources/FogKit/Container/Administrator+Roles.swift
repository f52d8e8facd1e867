import Foundation

extension Container.Administrator {
    // MARK: - Security roles

    /// Makes a user a member of a custom security role of the administrator's environment,
    /// as CloudKit's console does (roles cannot be managed from CloudKit's client API).
    ///
    /// The role's grants (`GRANT … TO Role` in the schema) then apply to the user's access
    /// to the public database, at once, for containers already open too. Adding a member
    /// twice changes nothing.
    ///
    /// ```swift
    /// try await admin.importSchema(Schema(parsing: """
    ///     CREATE ROLE Admin;
    ///     RECORD TYPE AppFeatures (name STRING, GRANT READ TO "_world", GRANT READ, CREATE, WRITE TO Admin);
    ///     """))
    /// try await admin.addUser(try admin.userRecordID(forUser: "alice"), toRole: "Admin")
    /// ```
    ///
    /// - Parameters:
    ///   - userRecordID: The user's record ID, as ``Container/userRecordID()`` returns it
    ///     (or ``userRecordID(forUser:)``); its zone is ignored.
    ///   - role: A custom role the environment's schema creates (`CREATE ROLE`).
    /// - Throws: ``FogError/Code/invalidArguments`` for a built-in role (`_world`, `_icloud`,
    ///   `_creator` apply by themselves) or a role the schema lacks;
    ///   ``FogError/Code/unknownItem`` for a user the environment has never seen.
    public func addUser(_ userRecordID: Record.ID, toRole role: Schema.Role) async throws {
        try authorize(.changeRoleMembers)
        _ = try await mapStorageErrors { try await engine.catalog.setMembership(true, user: userRecordID.recordName, role: role) }
    }

    /// Removes a user from a custom security role of the administrator's environment (see
    /// ``addUser(_:toRole:)``). Takes effect at once, for containers already open too;
    /// removing a user who is not a member changes nothing.
    ///
    /// - Throws: ``FogError/Code/invalidArguments`` for a built-in role or a role the
    ///   schema lacks.
    public func removeUser(_ userRecordID: Record.ID, fromRole role: Schema.Role) async throws {
        try authorize(.changeRoleMembers)
        _ = try await mapStorageErrors { try await engine.catalog.setMembership(false, user: userRecordID.recordName, role: role) }
    }

    /// The members of a custom security role of the administrator's environment, as user
    /// record IDs, in name order.
    ///
    /// - Throws: ``FogError/Code/invalidArguments`` for a built-in role or a role the
    ///   schema lacks.
    public func users(inRole role: Schema.Role) throws -> [Record.ID] {
        try authorize(.readRoleMembers)
        return try mapStorageErrors { try engine.catalog.members(of: role).map { Record.ID(recordName: $0) } }
    }

    /// The user record ID of the user a container is opened for
    /// (`Container(…, user: user)`) in the administrator's environment, registering the
    /// user as opening such a container would (a user record name of `_` and 32 hex
    /// digits, and the user's `Users` records).
    ///
    /// - Throws: ``FogError/Code/invalidArguments`` for an identity that is empty or longer
    ///   than 255 bytes.
    public func userRecordID(forUser user: String) throws -> Record.ID {
        try authorize(.lookUpUser)
        if user.isEmpty || user.utf8.count > 255 {
            throw FogError(.invalidArguments, message: "the user identity must be 1 to 255 bytes long")
        }
        return Record.ID(recordName: try mapStorageErrors { try engine.users.userRecordName(for: user) })
    }
}
