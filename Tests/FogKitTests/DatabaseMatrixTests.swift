import FogKit
import FogKitTesting
import Foundation
import Testing

/// The permission matrix of the private and shared databases (the public database's is in
/// `PublicRolesTests`): who may create, read, change, delete, query and follow the change
/// feed of alice's records in each. `Docs/Access.md` prints ``matrix``;
/// ``docPrintsTheMatrix()`` checks that it does.
@Suite struct DatabaseMatrixTests {
    enum Outcome: Equatable, Sendable {
        case allowed, listed
        case error(FogError.Code)

        var text: String {
            switch self {
            case .allowed: "allowed"
            case .listed: "listed"
            case .error(let code): "`\(code)`"
            }
        }
    }

    enum Operation: String, CaseIterable, Sendable {
        case create, read, write, delete, query, feed
    }

    struct Row: Sendable {
        let database: Database.Scope
        let caller: String
        let user: String?
        let outcomes: [Operation: Outcome]

        var markdown: String {
            "| \(database) | \(caller) | " + Operation.allCases.map { outcomes[$0]!.text }.joined(separator: " | ") + " |"
        }
    }

    static func all(_ outcome: Outcome, query: Outcome? = nil) -> [Operation: Outcome] {
        var outcomes = Dictionary(uniqueKeysWithValues: Operation.allCases.map { ($0, outcome) })
        if let query {
            outcomes[.query] = query
            outcomes[.feed] = query
        }
        return outcomes
    }

    /// The matrix, printed in `Docs/Access.md`.
    static let matrix: [Row] = [
        Row(database: .private, caller: "the owner (alice)", user: "alice", outcomes: all(.allowed, query: .listed)),
        Row(database: .private, caller: "another user", user: "dave", outcomes: all(.error(.zoneNotFound))),
        Row(database: .private, caller: "anonymous", user: nil, outcomes: all(.error(.notAuthenticated))),
        Row(
            database: .shared, caller: "a `readWrite` participant", user: "bob",
            outcomes: all(.allowed, query: .listed)),
        Row(
            database: .shared, caller: "a `readOnly` participant", user: "carol",
            outcomes: [
                .create: .error(.permissionFailure), .read: .allowed, .write: .error(.permissionFailure),
                .delete: .error(.permissionFailure), .query: .listed, .feed: .listed,
            ]),
        Row(database: .shared, caller: "a user the share does not name", user: "dave", outcomes: all(.error(.zoneNotFound))),
        Row(database: .shared, caller: "the owner (alice)", user: "alice", outcomes: all(.error(.zoneNotFound))),
        Row(database: .shared, caller: "anonymous", user: nil, outcomes: all(.error(.notAuthenticated))),
    ]

    static let zone = RecordZone.ID(zoneName: "Work")

    /// Alice's zone Work with `root`, `keep` and `gone` under it, shared with bob
    /// (`readWrite`) and carol (`readOnly`), who both accepted.
    final class Fixture {
        let store: TestStore
        let owner: String

        init() async throws {
            store = try TestStore()
            let db = store.privateDatabase
            try await db.save(RecordZone(zoneID: DatabaseMatrixTests.zone))
            _ = try await store.admin.addUser("bob", emailAddress: "bob@example.com")
            _ = try await store.admin.addUser("carol", emailAddress: "carol@example.com")
            _ = try store.container(user: "dave")
            let root = Record(recordType: "Doc", recordID: Record.ID(recordName: "root", zoneID: DatabaseMatrixTests.zone))
            var records = [root]
            for name in ["keep", "gone"] {
                let record = Record(recordType: "Doc", recordID: Record.ID(recordName: name, zoneID: DatabaseMatrixTests.zone))
                record.setParent(root)
                record["v"] = 1
                records.append(record)
            }
            let share = Share(rootRecord: root)
            let bob = try await store.container.shareParticipant(forEmailAddress: "bob@example.com")
            bob.permission = .readWrite
            share.addParticipant(bob)
            share.addParticipant(try await store.container.shareParticipant(forEmailAddress: "carol@example.com"))
            let result = try await db.modifyRecords(saving: records + [share], deleting: [])
            let url = try #require(try result.saveResults[share.recordID]?.get() as? Share).url
            for user in ["bob", "carol"] {
                let container = try store.container(user: user)
                _ = try await container.accept(try await container.shareMetadata(for: try #require(url)))
            }
            owner = try await store.container.userRecordID().recordName
        }

        func database(_ row: Row) throws -> Database {
            try store.container(user: row.user).database(with: row.database)
        }

        /// The zone as the row's caller names it: their own private zone Work, or alice's.
        func zoneID(_ row: Row) -> RecordZone.ID {
            row.database == .private ? DatabaseMatrixTests.zone : RecordZone.ID(zoneName: "Work", ownerName: owner)
        }
    }

    static func outcome(_ body: () async throws -> Bool) async -> Outcome {
        do {
            return try await body() ? .listed : .allowed
        } catch let error as FogError {
            // A batch of one reports its item's error inside `partialFailure`.
            if error.code == .partialFailure, let item = error.partialErrorsByItemID?.values.first as? FogError {
                return .error(item.code)
            }
            return .error(error.code)
        } catch {
            return .error(.internalError)
        }
    }

    @Test(arguments: matrix.indices) func cell(_ index: Int) async throws {
        let row = Self.matrix[index]
        let fixture = try await Fixture()
        let db = try fixture.database(row)
        let zone = fixture.zoneID(row)
        func id(_ name: String) -> Record.ID { Record.ID(recordName: name, zoneID: zone) }
        for operation in Operation.allCases {
            let got: Outcome
            switch operation {
            case .create:
                got = await Self.outcome {
                    let record = Record(recordType: "Doc", recordID: id("new"))
                    record.setParent(id("root"))
                    _ = try await db.save(record)
                    return false
                }
            case .read:
                got = await Self.outcome {
                    _ = try await db.record(for: id("keep"))
                    return false
                }
            case .write:
                got = await Self.outcome {
                    // Built without a fetch, so that a refused read does not decide the write.
                    let record = Record(recordType: "Doc", recordID: id("keep"))
                    record.setParent(id("root"))
                    record["v"] = 2
                    _ = try await db.modifyRecords(saving: [record], deleting: [], savePolicy: .changedKeys)
                    return false
                }
            case .delete:
                got = await Self.outcome {
                    _ = try await db.deleteRecord(withID: id("gone"))
                    return false
                }
            case .query:
                got = await Self.outcome {
                    let query = Query(recordType: "Doc", predicate: try QueryPredicate(format: "v > 0"))
                    let (results, _) = try await db.records(matching: query, inZoneWith: zone)
                    return results.contains { $0.0.recordName == "keep" }
                }
            case .feed:
                got = await Self.outcome {
                    let changes = try await db.recordZoneChanges(inZoneWith: zone, since: nil)
                    return changes.modificationResultsByID.keys.contains { $0.recordName == "keep" }
                }
            }
            #expect(got == row.outcomes[operation], "\(row.database), \(row.caller), \(operation)")
        }
        #expect(try fixture.store.admin.checkIntegrity().isSound)
    }

    @Test func docPrintsTheMatrix() throws {
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Docs/Access.md")
        let text = try String(contentsOf: doc, encoding: .utf8)
        let table =
            ["| Database | Caller | create | read | write | delete | query | feed |", "|---|---|---|---|---|---|---|---|"]
            + Self.matrix.map(\.markdown)
        #expect(text.contains(table.joined(separator: "\n")), "Docs/Access.md should print:\n\(table.joined(separator: "\n"))")
    }
}
