import FogKit
import FogKitTesting
import Foundation
import Testing

/// `fog role add | remove | list`, run as the built tool, on a store with the seed schema's
/// `Admin` role.
@Suite struct RoleCommandTests {
    @Test func addListRemoveTheMembersOfARole() async throws {
        let work = try TemporaryDirectory("role-cli")
        let store = try SchemaCommandTests.seededStore(in: work)
        #expect(try SchemaCommandTests.fogSucceeds(["role", "list", "Admin", "--store", store]).isEmpty)
        try SchemaCommandTests.fogSucceeds(["role", "add", "Admin", "alice", "--store", store])
        let listed = try SchemaCommandTests.fogSucceeds(["role", "list", "Admin", "--store", store])

        // The member is alice's user record name, as a container opened for alice has it.
        let alice = try Container(
            identifier: SchemaCommandTests.identifier, directory: URL(fileURLWithPath: store), user: "alice",
            configuration: .init(durability: .none))
        let name = try await alice.userRecordID().recordName
        alice.close()
        #expect(listed == name + "\n")
        // Production has its own members.
        try SchemaCommandTests.fogSucceeds(["schema", "deploy", "--store", store])
        #expect(try SchemaCommandTests.fogSucceeds(["role", "list", "Admin", "--store", store, "--environment", "production"]).isEmpty)

        try SchemaCommandTests.fogSucceeds(["role", "remove", "Admin", "alice", "--store", store])
        #expect(try SchemaCommandTests.fogSucceeds(["role", "list", "Admin", "--store", store]).isEmpty)

        // Refusals: a role the schema lacks, a built-in role, a missing user.
        let unknown = try FogTool.run(["role", "add", "Nobody", "alice", "--store", store])
        #expect(unknown.status != 0 && unknown.err.contains("Nobody"), "\(unknown.err)")
        let builtIn = try FogTool.run(["role", "add", "_world", "alice", "--store", store])
        #expect(builtIn.status != 0 && builtIn.err.contains("built-in"), "\(builtIn.err)")
        let missing = try FogTool.run(["role", "add", "Admin", "--store", store])
        #expect(missing.status != 0, "\(missing.err)")
    }
}
