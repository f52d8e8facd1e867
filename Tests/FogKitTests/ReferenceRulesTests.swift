import FogKit
import FogKitTesting
import Foundation
import Testing

/// The rules of references (issue 15, "References"; reference §3.6, §6.3, §12): `deleteSelf`
/// cascades (chains, cycles, lists, batches, change feeds, access), the 750 limit, zones and
/// parents, and dangling `.none` references. `ModifyRecordsTests` and `ValidationTests` hold
/// the older cases; `Docs/CloudKitDifferences.md` ("References, parents and cascades") the
/// decisions.
@Suite struct ReferenceRulesTests {
    let store: TestStore
    var db: Database { store.privateDatabase }
    static let zoneID = RecordZone.ID(zoneName: "Refs")

    init() throws { store = try TestStore() }

    private func makeZone() async throws { try await db.save(RecordZone(zoneID: Self.zoneID)) }

    static func id(_ name: String, _ zone: RecordZone.ID = zoneID) -> Record.ID { .init(recordName: name, zoneID: zone) }

    static func node(
        _ name: String, _ zone: RecordZone.ID = zoneID, owner: String? = nil, action: Record.ReferenceAction = .deleteSelf
    )
        -> Record
    {
        let r = Record(recordType: "Node", recordID: id(name, zone))
        r["n"] = name
        if let owner { r["owner"] = Record.Reference(recordID: id(owner, zone), action: action) }
        return r
    }

    /// The names of the zone's records that a full change feed reports deleted.
    private func deletedNames(since token: ServerChangeToken? = nil) async throws -> Set<String> {
        Set(
            try await db.recordZoneChanges(inZoneWith: Self.zoneID, since: token, resultsLimit: 10_000).deletions.map(\.recordID.recordName)
        )
    }

    /// Each item's error code (`nil`: succeeded), whether the request returns its results or
    /// throws `partialFailure`.
    private func codes(
        _ database: Database, saving: [Record], deleting: [Record.ID], atomically: Bool
    ) async throws -> [Record.ID: FogError.Code?] {
        let ids = saving.map(\.recordID) + deleting
        do {
            let result = try await database.modifyRecords(saving: saving, deleting: deleting, atomically: atomically)
            var codes: [Record.ID: FogError.Code?] = [:]
            for (id, r) in result.saveResults { codes[id] = .some(r.fogCode) }
            for (id, r) in result.deleteResults { codes[id] = .some(r.fogCode) }
            return codes
        } catch let error as FogError where error.code == .partialFailure {
            var codes: [Record.ID: FogError.Code?] = [:]
            for id in ids { codes[id] = .some(fogCode(error.partialErrorsByItemID?[id])) }
            return codes
        }
    }

    // MARK: - Cascades

    @Test(arguments: [false, true])
    func aChainIsDeletedFromItsHead(customZone: Bool) async throws {
        let zone: RecordZone.ID = customZone ? Self.zoneID : .default
        if customZone { try await makeZone() }
        let records = [Self.node("A", zone), Self.node("B", zone, owner: "A"), Self.node("C", zone, owner: "B"), Self.node("X", zone)]
        _ = try await db.modifyRecords(saving: records, deleting: [])
        try await db.deleteRecord(withID: Self.id("A", zone))
        for name in ["A", "B", "C"] { await expectNotStored(Self.id(name, zone), in: db) }
        #expect(try await db.record(for: Self.id("X", zone))["n"] as? String == "X")
        #expect(try store.admin.checkIntegrity().isSound)
    }

    /// A long chain is deleted without deep recursion (each link is a separate record).
    @Test func aLongChainIsDeletedFromItsHead() async throws {
        try await makeZone()
        let length = 20_000
        for part in stride(from: 0, to: length, by: 400) {
            let records = (part..<part + 400).map { i in Self.node("c\(i)", owner: i == 0 ? nil : "c\(i - 1)") }
            _ = try await db.modifyRecords(saving: records, deleting: [])
        }
        try await db.deleteRecord(withID: Self.id("c0"))
        for i in [1, length / 2, length - 1] { await expectNotStored(Self.id("c\(i)"), in: db) }
        #expect(try store.admin.storeInfo().recordCount < length)
        let report = try store.admin.checkIntegrity()
        #expect(report.isSound, "\(report.problems.prefix(5))")
    }

    @Test func cyclesEnd() async throws {
        try await makeZone()
        // A ↔ B, a three-record cycle, and a record that owns itself.
        let records = [
            Self.node("A", owner: "B"), Self.node("B", owner: "A"),
            Self.node("P", owner: "R"), Self.node("Q", owner: "P"), Self.node("R", owner: "Q"),
            Self.node("S", owner: "S"), Self.node("T", owner: "S"),
        ]
        _ = try await db.modifyRecords(saving: records, deleting: [])
        try await db.deleteRecord(withID: Self.id("A"))
        await expectNotStored(Self.id("A"), in: db)
        await expectNotStored(Self.id("B"), in: db)
        #expect(try await db.record(for: Self.id("P")).recordType == "Node")
        try await db.deleteRecord(withID: Self.id("Q"))
        for name in ["P", "Q", "R"] { await expectNotStored(Self.id(name), in: db) }
        try await db.deleteRecord(withID: Self.id("S"))
        for name in ["S", "T"] { await expectNotStored(Self.id(name), in: db) }
        #expect(try await deletedNames() == ["A", "B", "P", "Q", "R", "S", "T"])
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func referencesInsideAListAreHonoured() async throws {
        try await makeZone()
        let holder = Self.node("holder")
        holder["owners"] = [
            Record.Reference(recordID: Self.id("weak"), action: .none),
            Record.Reference(recordID: Self.id("one"), action: .deleteSelf),
            Record.Reference(recordID: Self.id("two"), action: .deleteSelf),
            Record.Reference(recordID: Self.id("two"), action: .deleteSelf),
        ]
        let again = Self.node("again")
        again["owners"] = [Record.Reference(recordID: Self.id("two"), action: .deleteSelf)]
        let records = [Self.node("weak"), Self.node("one"), Self.node("two"), holder, again]
        _ = try await db.modifyRecords(saving: records, deleting: [])

        // The `.none` element does not cascade.
        try await db.deleteRecord(withID: Self.id("weak"))
        #expect(try await db.record(for: holder.recordID).recordType == "Node")
        // Removing an element from the list stops its cascade.
        let edit = try await db.record(for: again.recordID)
        edit["owners"] = [Record.Reference(recordID: Self.id("one"), action: .deleteSelf)]
        try await db.save(edit)
        // Deleting any deleteSelf target of the list deletes the holder.
        try await db.deleteRecord(withID: Self.id("two"))
        await expectNotStored(holder.recordID, in: db)
        #expect(try await db.record(for: again.recordID).recordType == "Node")
        try await db.deleteRecord(withID: Self.id("one"))
        await expectNotStored(again.recordID, in: db)
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func deletingTheTargetOfANoneReferenceLeavesItDangling() async throws {
        try await makeZone()
        let list = Self.node("list")
        list["targets"] = [Record.Reference(recordID: Self.id("target"), action: .none)]
        _ = try await db.modifyRecords(
            saving: [Self.node("target"), Self.node("single", owner: "target", action: .none), list], deleting: [])
        try await db.deleteRecord(withID: Self.id("target"))
        let single = try await db.record(for: Self.id("single"))
        #expect(single["owner"] as? Record.Reference == Record.Reference(recordID: Self.id("target"), action: .none))
        let kept = try await db.record(for: Self.id("list"))
        #expect((kept["targets"] as? [Record.Reference])?.map(\.recordID) == [Self.id("target")])
        // A record saved again under the dead name is referenced again, still without cascade.
        try await db.save(Self.node("target"))
        try await db.deleteRecord(withID: Self.id("target"))
        #expect(try await db.record(for: Self.id("single")).recordType == "Node")
    }

    /// A request that deletes a target and one of its referrers: the referrer's delete
    /// succeeds whether the cascade reached it first or not, and the feed has each deletion
    /// once.
    @Test(arguments: [false, true])
    func aCascadeInsideABatch(atomically: Bool) async throws {
        try await makeZone()
        let records = [Self.node("A"), Self.node("B", owner: "A"), Self.node("C", owner: "B"), Self.node("X")]
        _ = try await db.modifyRecords(saving: records, deleting: [])
        let before = try await db.recordZoneChanges(inZoneWith: Self.zoneID, since: nil).changeToken
        let result = try await codes(
            db, saving: [Self.node("new")], deleting: [Self.id("A"), Self.id("C"), Self.id("X")], atomically: atomically)
        #expect(result.count == 4)
        for name in ["A", "C", "X", "new"] {
            #expect(result[Self.id(name)] == .some(nil), "\(name): \(String(describing: result[Self.id(name)]))")
        }
        for name in ["A", "B", "C", "X"] { await expectNotStored(Self.id(name), in: db) }
        let changes = try await db.recordZoneChanges(inZoneWith: Self.zoneID, since: before)
        #expect(changes.deletions.map(\.recordID.recordName).sorted() == ["A", "B", "C", "X"])
        #expect(changes.modificationResultsByID.keys.map(\.recordName) == ["new"])
        #expect(try store.admin.checkIntegrity().isSound)
    }

    /// Saves apply before deletes: a referrer saved in the request that deletes its target
    /// is deleted by the cascade, and its save still succeeds.
    @Test(arguments: [false, true])
    func aReferrerSavedWithItsTargetsDeletion(atomically: Bool) async throws {
        try await makeZone()
        _ = try await db.modifyRecords(saving: [Self.node("A"), Self.node("B", owner: "A")], deleting: [])
        let b = try await db.record(for: Self.id("B"))
        b["n"] = "edited"
        let result = try await codes(db, saving: [b, Self.node("C", owner: "A")], deleting: [Self.id("A")], atomically: atomically)
        for name in ["A", "B", "C"] { #expect(result[Self.id(name)] == .some(nil), "\(name)") }
        for name in ["A", "B", "C"] { await expectNotStored(Self.id(name), in: db) }
        #expect(try await deletedNames() == ["A", "B", "C"])
        #expect(try store.admin.checkIntegrity().isSound)
    }

    /// In an atomic request, a delete whose cascade is refused fails the zone's other changes;
    /// in a non-atomic one only that delete fails.
    @Test(arguments: [false, true])
    func aRefusedCascadeInsideABatch(atomically: Bool) async throws {
        let bob = try store.container(user: "bob").publicCloudDatabase
        let pub = store.publicDatabase
        _ = try await pub.modifyRecords(saving: [Self.node("A", .default), Self.node("B", .default, owner: "A")], deleting: [])
        try await bob.save(Self.node("C", .default, owner: "B"))  // bob's: alice may not delete it
        try await pub.save(Self.node("D", .default))
        let result = try await codes(pub, saving: [], deleting: [Self.id("A", .default), Self.id("D", .default)], atomically: atomically)
        #expect(result[Self.id("A", .default)] == .some(.permissionFailure))
        // The public default zone is not atomic: D is deleted either way.
        #expect(result[Self.id("D", .default)] == .some(nil))
        await expectNotStored(Self.id("D", .default), in: pub)
        // Bob's record two steps down is named in the refusal.
        let single = try await pub.modifyRecords(saving: [], deleting: [Self.id("A", .default)], atomically: false)
        if case .failure(let error as FogError) = single.deleteResults[Self.id("A", .default)] {
            #expect(error.message.contains("record C") || error.message.contains(" C"), "\(error.message)")
        }
        for name in ["A", "B", "C"] { #expect(try await pub.record(for: Self.id(name, .default)).recordType == "Node") }
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func aCascadeAppearsInTheChangeFeedAsDeletions() async throws {
        try await makeZone()
        let listed = Self.node("listed")
        listed["owners"] = [Record.Reference(recordID: Self.id("B"), action: .deleteSelf)]
        _ = try await db.modifyRecords(saving: [Self.node("A"), Self.node("B", owner: "A"), listed, Self.node("X")], deleting: [])
        let before = try await db.recordZoneChanges(inZoneWith: Self.zoneID, since: nil).changeToken
        try await db.deleteRecord(withID: Self.id("A"))
        let changes = try await db.recordZoneChanges(inZoneWith: Self.zoneID, since: before)
        #expect(changes.modificationResultsByID.isEmpty)
        #expect(Set(changes.deletions.map(\.recordID.recordName)) == ["A", "B", "listed"])
        #expect(changes.deletions.count == 3)
        #expect(changes.deletions.allSatisfy { $0.recordType == "Node" })
        // From the start: X is the only record left.
        let all = try await db.recordZoneChanges(inZoneWith: Self.zoneID, since: nil)
        #expect(all.modificationResultsByID.keys.map(\.recordName) == ["X"])
    }

    /// The cascade finds its referrers through the `refs` table: in a zone of 5,000 unrelated
    /// records, deleting a target deletes exactly its three referrers (the bound on the work is
    /// explained in `Docs/OnDiskFormat.md`, "refs").
    @Test func aCascadeInALargeZoneDeletesOnlyTheReferrers() async throws {
        try await makeZone()
        for part in stride(from: 0, to: 5_000, by: 400) {
            let records = (part..<min(part + 400, 5_000)).map { i in
                // Unrelated records, some with references of their own.
                Self.node("u\(i)", owner: i % 2 == 0 ? "u\(i + 1)" : nil, action: i % 4 == 0 ? .none : .deleteSelf)
            }
            _ = try await db.modifyRecords(saving: records, deleting: [])
        }
        let referrers = [Self.node("r0", owner: "T"), Self.node("r1", owner: "T"), Self.node("r2", owner: "r0")]
        _ = try await db.modifyRecords(saving: [Self.node("T")] + referrers, deleting: [])
        let before = try await db.recordZoneChanges(inZoneWith: Self.zoneID, since: nil, resultsLimit: 10_000).changeToken
        try await db.deleteRecord(withID: Self.id("T"))
        #expect(try await deletedNames(since: before) == ["T", "r0", "r1", "r2"])
        #expect(try store.admin.storeInfo().recordCount >= 5_000)
    }

    // MARK: - The 750 limit

    static func owned(_ range: Range<Int>, by target: String = "target") -> [Record] {
        range.map { Self.node("owned\($0)", owner: target) }
    }

    @Test(arguments: [false, true])
    func exactly750ReferrersSaveAndThe751stIsLimitExceeded(atomically: Bool) async throws {
        try await makeZone()
        try await db.save(Self.node("target"))
        for chunk in [0..<375, 375..<750] {
            let result = try await db.modifyRecords(saving: Self.owned(chunk), deleting: [])
            #expect(result.saveResults.values.allSatisfy { $0.succeeded })
        }
        // The 751st, saved with an unrelated record and a new field.
        let extra = Self.owned(750..<751)[0]
        extra["fresh"] = 1
        let bystander = Self.node("bystander")
        bystander["other"] = "x"
        let result = try await codes(db, saving: [bystander, extra], deleting: [], atomically: atomically)
        #expect(result[extra.recordID] == .some(.limitExceeded))
        let error = await expectFogError(.limitExceeded) { try await db.save(extra) }
        #expect(error?.message.contains("target") == true && error?.message.contains("750") == true, "\(String(describing: error))")
        // Nothing of the failed save is written: not the record, not its field's type.
        await expectNotStored(extra.recordID, in: db)
        let retyped = Self.node("retyped")
        retyped["fresh"] = "a string now"
        try await db.save(retyped)
        if atomically {
            #expect(result[bystander.recordID] == .some(.batchRequestFailed))
            await expectNotStored(bystander.recordID, in: db)
        } else {
            #expect(result[bystander.recordID] == .some(nil))
        }
        // Re-saving a referrer does not count it twice; a referrer that moves away makes room.
        let edit = try await db.record(for: Self.id("owned0"))
        edit["n"] = "edited"
        try await db.save(edit)
        await expectFogError(.limitExceeded) { try await db.save(Self.owned(751..<752)[0]) }
        let moved = try await db.record(for: Self.id("owned1"))
        moved["owner"] = Record.Reference(recordID: Self.id("elsewhere"), action: .deleteSelf)
        try await db.save(moved)
        try await db.save(Self.owned(751..<752)[0])
        // The target's deletion takes its 750 referrers and nothing else.
        let before = try await db.recordZoneChanges(inZoneWith: Self.zoneID, since: nil, resultsLimit: 10_000).changeToken
        try await db.deleteRecord(withID: Self.id("target"))
        let bystanders = atomically ? 0 : 1
        #expect(try await deletedNames(since: before).count == 751)
        #expect(
            try await db.recordZoneChanges(inZoneWith: Self.zoneID, since: nil, resultsLimit: 10_000).modificationResultsByID.count == 2
                + bystanders)
        #expect(try await db.record(for: Self.id("owned1")).recordType == "Node")
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func theLimitCountsTheReferrersOfOneAtomicRequest() async throws {
        try await makeZone()
        try await db.save(Self.node("target"))
        _ = try await db.modifyRecords(saving: Self.owned(0..<400), deleting: [])
        await expectFogError(.partialFailure) { try await db.modifyRecords(saving: Self.owned(400..<751), deleting: []) }
        let result = try await db.modifyRecords(saving: Self.owned(400..<751), deleting: [], atomically: false)
        #expect(result.saveResults.values.filter { $0.succeeded }.count == 350)
        #expect(result.saveResults[Self.id("owned750")]?.fogCode == .limitExceeded)
    }

    // MARK: - Zones and parents

    @Test func aReferenceIntoAnotherZoneIsInvalidArgumentsNamingTheField() async throws {
        try await makeZone()
        let other = RecordZone.ID(zoneName: "Other")
        try await db.save(RecordZone(zoneID: other))
        for action in [Record.ReferenceAction.none, .deleteSelf] {
            let single = Self.node("single")
            single["link"] = Record.Reference(recordID: Self.id("t", other), action: action)
            let error = await expectFogError(.invalidArguments) { try await db.save(single) }
            #expect(error?.message.contains("'link'") == true, "\(String(describing: error))")
            let list = Self.node("list")
            list["links"] = [
                Record.Reference(recordID: Self.id("t"), action: action), Record.Reference(recordID: Self.id("t", other), action: action),
            ]
            let listError = await expectFogError(.invalidArguments) { try await db.save(list) }
            #expect(listError?.message.contains("'links'") == true, "\(String(describing: listError))")
            let child = Self.node("child")
            child.parent = Record.Reference(recordID: Self.id("t", other), action: .none)
            let parentError = await expectFogError(.invalidArguments) { try await db.save(child) }
            #expect(parentError?.message.contains("parent") == true, "\(String(describing: parentError))")
            for r in [single, list, child] { await expectNotStored(r.recordID, in: db) }
        }
    }

    @Test func parentsFollowCloudKitsRules() async throws {
        try await makeZone()
        try await db.save(Self.node("folder"))
        // Action deleteSelf: invalidArguments (CloudKit throws).
        let strong = Self.node("strong")
        strong.parent = Record.Reference(recordID: Self.id("folder"), action: .deleteSelf)
        await expectFogError(.invalidArguments) { try await db.save(strong) }
        // A parent that does not exist: referenceViolation.
        let orphan = Self.node("orphan")
        orphan.setParent(Self.id("ghost"))
        await expectFogError(.referenceViolation) { try await db.save(orphan) }
        // A parent that exists: saved; deleting the parent leaves the child and its parent value.
        let child = Self.node("child")
        child.setParent(Self.id("folder"))
        try await db.save(child)
        try await db.deleteRecord(withID: Self.id("folder"))
        let kept = try await db.record(for: child.recordID)
        #expect(kept.parent?.recordID == Self.id("folder"))
        #expect(kept.parent?.action == Record.ReferenceAction.none)
        // The child may still be saved: an unchanged parent is not checked again.
        kept["n"] = "edited"
        try await db.save(kept)
        for r in [strong, orphan] { await expectNotStored(r.recordID, in: db) }
        #expect(try store.admin.checkIntegrity().isSound)
    }
}
