import FogKit
import FogKitTesting
import Foundation
import Testing

/// Save policies and conflicts (reference §6.3 save policies, §7.3).
@Suite struct SavePolicyTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    /// Saves a Note with `a`, `b` and `c` and returns the stored record.
    static func seed(_ db: Database, name: String = "note") async throws -> Record {
        let r = Record(recordType: "Note", recordID: .init(recordName: name))
        r["a"] = "a1"
        r["b"] = "b1"
        r["c"] = 1
        return try await db.save(r)
    }

    @Test func savePolicyRawValuesMatchCloudKit() {
        #expect(RecordSavePolicy.ifServerRecordUnchanged.rawValue == 0)
        #expect(RecordSavePolicy.changedKeys.rawValue == 1)
        #expect(RecordSavePolicy.allKeys.rawValue == 2)
    }

    // MARK: - ifServerRecordUnchanged

    @Test func savingANewRecordWhoseIDExistsIsServerRecordChanged() async throws {
        let stored = try await Self.seed(db)

        let intruder = Record(recordType: "Note", recordID: stored.recordID)
        intruder["a"] = "intruder"
        let error = try #require(await expectFogError(.serverRecordChanged) { try await db.save(intruder) })
        let server = try #require(error.serverRecord)
        #expect(server.recordID == stored.recordID)
        #expect(server["a"] as? String == "a1")
        #expect(server.recordChangeTag == stored.recordChangeTag)
        let client = try #require(error.clientRecord)
        #expect(client.recordID == stored.recordID)
        #expect(client["a"] as? String == "intruder")
        #expect(error.ancestorRecord == nil, "a record never fetched has no ancestor")

        // The same through modifyRecords, per item.
        let result = try await db.modifyRecords(saving: [intruder], deleting: [], atomically: false)
        #expect(result.saveResults[stored.recordID]?.fogCode == .serverRecordChanged)
        expectSameRecord(try await db.record(for: stored.recordID), stored)
    }

    @Test func aStaleChangeTagIsServerRecordChangedWithServerClientAndAncestor() async throws {
        let stored = try await Self.seed(db)
        let mine = try await db.record(for: stored.recordID)
        let theirs = try await db.record(for: stored.recordID)

        theirs["a"] = "a2-theirs"
        let theirsSaved = try await db.save(theirs)

        mine["a"] = "a2-mine"  // changed
        mine["b"] = nil  // removed
        mine["d"] = "new"  // added
        let error = try #require(await expectFogError(.serverRecordChanged) { try await db.save(mine) })
        let server = try #require(error.serverRecord)
        #expect(server["a"] as? String == "a2-theirs")
        #expect(server.recordChangeTag == theirsSaved.recordChangeTag)
        let client = try #require(error.clientRecord)
        #expect(client["a"] as? String == "a2-mine")
        #expect(client["b"] == nil)
        #expect(client["d"] as? String == "new")
        let ancestor = try #require(error.ancestorRecord)
        #expect(ancestor.recordID == stored.recordID)
        #expect(ancestor["a"] as? String == "a1")
        #expect(ancestor["b"] as? String == "b1")
        #expect(ancestor["c"] as? Int == 1)
        #expect(ancestor["d"] == nil)
        #expect(ancestor.allKeys() == ["a", "b", "c"])
        #expect(ancestor.recordChangeTag == stored.recordChangeTag)
        #expect(ancestor.changedKeys().isEmpty)

        // The store still holds their version.
        expectSameRecord(try await db.record(for: stored.recordID), theirsSaved)
    }

    @Test func resolvingAConflictByEditingTheServerRecordSucceeds() async throws {
        let stored = try await Self.seed(db)
        let mine = try await db.record(for: stored.recordID)
        let theirs = try await db.record(for: stored.recordID)
        theirs["a"] = "theirs"
        try await db.save(theirs)
        mine["b"] = "mine"
        let error = try #require(await expectFogError(.serverRecordChanged) { try await db.save(mine) })
        let server = try #require(error.serverRecord)
        server["b"] = "mine"
        let merged = try await db.save(server)
        #expect(merged["a"] as? String == "theirs")
        #expect(merged["b"] as? String == "mine")
    }

    @Test func savingWithTheTagOfADeletedRecordIsUnknownItem() async throws {
        let stored = try await Self.seed(db)
        let fetched = try await db.record(for: stored.recordID)
        try await db.deleteRecord(withID: stored.recordID)
        fetched["a"] = "resurrected?"
        await expectFogError(.unknownItem) { try await db.save(fetched) }
        await expectNotStored(stored.recordID, in: db)
    }

    @Test func aSaveWithTheCurrentTagSendsOnlyChangedKeys() async throws {
        let stored = try await Self.seed(db)
        // A record fetched with only some keys, saved under the default policy,
        // leaves the other keys alone.
        let partial = try #require(try await db.records(for: [stored.recordID], desiredKeys: ["a"])[stored.recordID]?.get())
        partial["a"] = "a2"
        let saved = try await db.save(partial)
        #expect(saved["a"] as? String == "a2")
        #expect(saved["b"] as? String == "b1")
        #expect(saved["c"] as? Int == 1)
    }

    // MARK: - changedKeys

    @Test func changedKeysOverwritesWithoutCheckingTheTagAndKeepsOtherKeys() async throws {
        let stored = try await Self.seed(db)
        let stale = try await db.record(for: stored.recordID)
        let other = try await db.record(for: stored.recordID)
        other["b"] = "b2-other"
        other["c"] = 2
        try await db.save(other)

        stale["a"] = "a2-stale"
        stale["c"] = nil
        let result = try await db.modifyRecords(saving: [stale], deleting: [], savePolicy: .changedKeys, atomically: false)
        let saved = try #require(try result.saveResults[stored.recordID]?.get())
        #expect(saved["a"] as? String == "a2-stale")  // overwritten
        #expect(saved["b"] as? String == "b2-other")  // not changed locally: kept
        #expect(saved["c"] == nil)  // removal sent
        #expect(saved.recordChangeTag != stale.recordChangeTag)
        let fetched = try await db.record(for: stored.recordID)
        expectSameRecord(fetched, saved)
    }

    @Test func changedKeysWithANewRecordOverwritesAnExistingOne() async throws {
        let stored = try await Self.seed(db)
        let blind = Record(recordType: "Note", recordID: stored.recordID)
        blind["a"] = "blind"
        _ = try await db.modifyRecords(saving: [blind], deleting: [], savePolicy: .changedKeys, atomically: false)
        let fetched = try await db.record(for: stored.recordID)
        #expect(fetched["a"] as? String == "blind")
        #expect(fetched["b"] as? String == "b1")
        #expect(fetched.creationDate == stored.creationDate)
    }

    // MARK: - allKeys

    @Test func allKeysWritesEveryLocalKeyWithoutCheckingTheTag() async throws {
        let stored = try await Self.seed(db)
        let stale = try await db.record(for: stored.recordID)
        let other = try await db.record(for: stored.recordID)
        other["a"] = "a2-other"
        other["b"] = "b2-other"
        other["e"] = "server only"
        try await db.save(other)

        stale["d"] = "d-stale"  // the only changed key; a, b, c are still local keys
        let result = try await db.modifyRecords(saving: [stale], deleting: [], savePolicy: .allKeys, atomically: false)
        let saved = try #require(try result.saveResults[stored.recordID]?.get())
        #expect(saved["a"] as? String == "a1")  // unchanged local keys are written too
        #expect(saved["b"] as? String == "b1")
        #expect(saved["c"] as? Int == 1)
        #expect(saved["d"] as? String == "d-stale")
        #expect(saved["e"] as? String == "server only")  // server-only key survives
        expectSameRecord(try await db.record(for: stored.recordID), saved)
    }

    @Test func allKeysKeepsKeysOmittedByDesiredKeys() async throws {
        let stored = try await Self.seed(db)
        let partial = try #require(try await db.records(for: [stored.recordID], desiredKeys: ["a"])[stored.recordID]?.get())
        #expect(partial.allKeys() == ["a"])
        partial["a"] = "a2"
        let result = try await db.modifyRecords(saving: [partial], deleting: [], savePolicy: .allKeys, atomically: false)
        let saved = try #require(try result.saveResults[stored.recordID]?.get())
        #expect(saved["a"] as? String == "a2")
        #expect(saved["b"] as? String == "b1")
        #expect(saved["c"] as? Int == 1)
        let fetched = try await db.record(for: stored.recordID)
        #expect(fetched.allKeys() == ["a", "b", "c"])
        #expect(fetched["b"] as? String == "b1")
    }

    @Test func allKeysSendsRemovalsOfChangedKeys() async throws {
        let stored = try await Self.seed(db)
        let fetched = try await db.record(for: stored.recordID)
        fetched["b"] = nil
        _ = try await db.modifyRecords(saving: [fetched], deleting: [], savePolicy: .allKeys, atomically: false)
        #expect(try await db.record(for: stored.recordID).allKeys() == ["a", "c"])
    }

    // MARK: - Failed saves change nothing

    @Test(arguments: RecordSavePolicy.allCases)
    func aFailedSaveLeavesTheStoredRecordUnchanged(policy: RecordSavePolicy) async throws {
        let stored = try await Self.seed(db)
        let before = try await db.record(for: stored.recordID)

        // Under the default policy: a stale tag. Under every policy: a type clash.
        if policy == .ifServerRecordUnchanged {
            let stale = try await db.record(for: stored.recordID)
            let other = try await db.record(for: stored.recordID)
            other["a"] = "a-other"
            let afterOther = try await db.save(other)
            stale["a"] = "a-stale"
            stale["b"] = nil
            let result = try await db.modifyRecords(saving: [stale], deleting: [], savePolicy: policy, atomically: false)
            #expect(result.saveResults[stored.recordID]?.fogCode == .serverRecordChanged)
            expectSameRecord(try await db.record(for: stored.recordID), afterOther)
            return
        }
        let bad = try await db.record(for: stored.recordID)
        bad["a"] = "changed"
        bad["c"] = "not an int"  // c is INT64
        let result = try await db.modifyRecords(saving: [bad], deleting: [], savePolicy: policy, atomically: false)
        #expect(result.saveResults[stored.recordID]?.fogCode == .invalidArguments)
        expectSameRecord(try await db.record(for: stored.recordID), before)
    }

    @Test func aFailedConflictDoesNotConsumeTheTag() async throws {
        let stored = try await Self.seed(db)
        let intruder = Record(recordType: "Note", recordID: stored.recordID)
        await expectFogError(.serverRecordChanged) { try await db.save(intruder) }
        // The holder of the current tag can still save.
        let fetched = try await db.record(for: stored.recordID)
        #expect(fetched.recordChangeTag == stored.recordChangeTag)
        stored["a"] = "still mine"
        let saved = try await db.save(stored)
        #expect(saved["a"] as? String == "still mine")
    }
}
