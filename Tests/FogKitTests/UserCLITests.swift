import FogKit
import FogKitTesting
import Foundation
import Testing

/// `fog user add` and `fog user list`, run as the built tool.
@Suite struct UserCLITests {
    static let identifier = "iCloud.test.users"

    @Test func addAndListUsers() async throws {
        let directory = try TemporaryDirectory("fog-users")
        let storeURL = directory.appending("store")
        do {
            let admin = try Container.Administrator(identifier: Self.identifier, directory: storeURL)
            defer { admin.close() }
            try admin.container(user: "alice").close()
        }
        let added = try InterchangeCLITests.fog([
            "user", "add", "bob", "--email", "bob@example.com", "--name", "Bob van Smith", "--store", storeURL.path,
        ])
        #expect(added.status == 0, "\(added.err)")
        #expect(added.out.hasPrefix("bob\t_"), "\(added.out)")
        #expect(added.out.contains("\tbob@example.com\tBob van Smith"), "\(added.out)")

        let single = try InterchangeCLITests.fog(["user", "add", "carol", "--name", "Carol", "--store", storeURL.path])
        #expect(single.status == 0, "\(single.err)")

        let listed = try InterchangeCLITests.fog(["user", "list", "--store", storeURL.path])
        #expect(listed.status == 0, "\(listed.err)")
        let lines = listed.out.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(lines.map { $0.first } == ["alice", "bob", "carol"])
        #expect(lines.first?.dropFirst(2) == ["-", "-"], "alice has no entry")
        #expect(lines.last?.last == "Carol")

        let admin = try Container.Administrator(identifier: Self.identifier, directory: storeURL)
        defer { admin.close() }
        let alice = try admin.container(user: "alice")
        defer { alice.close() }
        let bob = try #require(try await alice.userIdentity(forEmailAddress: "bob@example.com"))
        #expect(bob.nameComponents?.givenName == "Bob van")
        #expect(bob.nameComponents?.familyName == "Smith")
        #expect(bob.userRecordID?.recordName == lines[1][1])
    }

    @Test func badInputFailsWithTheLibrarysMessageAndStoresNothing() async throws {
        let directory = try TemporaryDirectory("fog-users")
        let storeURL = directory.appending("store")
        try Container.Administrator(identifier: Self.identifier, directory: storeURL).close()
        let badEmail = try InterchangeCLITests.fog(["user", "add", "bob", "--email", "bob@example", "--store", storeURL.path])
        #expect(badEmail.status != 0)
        #expect(badEmail.err.contains("invalidArguments") && badEmail.err.contains("emailAddress"), "\(badEmail.err)")
        let blankName = try InterchangeCLITests.fog(["user", "add", "bob", "--name", "  ", "--store", storeURL.path])
        #expect(blankName.status != 0)
        #expect(blankName.err.contains("givenName"), "\(blankName.err)")
        let listed = try InterchangeCLITests.fog(["user", "list", "--store", storeURL.path])
        #expect(listed.out == "no users\n", "\(listed.out)")
    }

    /// `fog demo` ends with the two-user sharing scenario (share, accept, read and edit, no
    /// other note visible, revoke) and seed 002's feature flags (only the Admin role writes).
    @Test func theDemoSharesANoteBetweenTwoUsers() async throws {
        let directory = try TemporaryDirectory("fog-demo")
        let storeURL = directory.appending("store")
        for run in 1...2 {
            let demo = try InterchangeCLITests.fog(["demo", "--store", storeURL.path])
            #expect(demo.status == 0, "run \(run): \(demo.err)")
            for line in [
                "with bob@example.com (read-write): fogkit:share/",
                "Bob accepts as privateUser, readWrite; his shared database lists alice's zone Notes",
                "(and coffee)\"", "through his shared database: unknownItem", "the shared note is gone for him: zoneNotFound",
                "Anyone reads it, signed in or not: tipJar = 1", "Bob, not an Admin, tries to turn it off: permissionFailure",
            ] {
                #expect(demo.out.contains(line), "run \(run) lacks \(line):\n\(demo.out)")
            }
        }
    }
}
