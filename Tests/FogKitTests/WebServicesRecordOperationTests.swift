import FogKit
import FogKitTesting
import Foundation
import Testing

/// `Database.modify(_:atomically:)`: the seven operations of Web Services' `records/modify`,
/// each with its own rule, results in request order, per-zone atomicity.
@Suite struct WebServicesRecordOperationTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    typealias Fields = [String: WebServices.FieldValueDictionary]

    /// A record made as the server makes it: from a dictionary with a name, a change tag and
    /// only some fields.
    static func fromDictionary(
        _ name: String, tag: String?, _ fields: Fields, zoneID: RecordZone.ID = .default
    ) throws -> Record {
        try Record(
            WebServices.RecordDictionary(recordName: name, recordType: "Note", recordChangeTag: tag, fields: fields), zoneID: zoneID)
    }

    static func string(_ s: String) -> WebServices.FieldValueDictionary { .init(value: .string(s)) }

    /// Saves a Note `name` with fields a, b and c and returns it as stored.
    func stored(_ name: String, zoneID: RecordZone.ID = .default) async throws -> Record {
        let r = Record(recordType: "Note", recordID: .init(recordName: name, zoneID: zoneID))
        r["a"] = "a0"
        r["b"] = "b0"
        r["c"] = "c0"
        return try await db.save(r)
    }

    func fogError(_ result: Result<Record?, any Error>) -> FogError? {
        if case .failure(let e) = result { return e as? FogError }
        return nil
    }

    func saved(_ result: Result<Record?, any Error>) throws -> Record {
        try #require(try result.get())
    }

    // MARK: - Each operation

    @Test func createMakesANewRecord() async throws {
        let r = try Self.fromDictionary("n1", tag: nil, ["a": Self.string("x")])
        let results = try await db.modify([.create(r)], atomically: false)
        #expect(try saved(results[0])["a"] as? String == "x")
        #expect(try await db.record(for: r.recordID)["a"] as? String == "x")
    }

    @Test func createOfAStoredRecordFailsWithServerRecordChanged() async throws {
        let existing = try await stored("n1")
        let r = try Self.fromDictionary("n1", tag: nil, ["a": Self.string("x")])
        let results = try await db.modify([.create(r)], atomically: false)
        let error = try #require(fogError(results[0]))
        #expect(error.code == .serverRecordChanged)
        #expect(error.serverRecord?.recordChangeTag == existing.recordChangeTag)
        #expect(try await db.record(for: r.recordID)["a"] as? String == "a0")
    }

    @Test func updateWritesTheSentFieldsKeepsTheOthersAndRemovesACleared() async throws {
        let existing = try await stored("n1")
        let r = try Self.fromDictionary("n1", tag: existing.recordChangeTag, ["a": Self.string("a1"), "b": Self.string("b1")])
        r["b"] = nil  // the server clears a field sent as `{}` this way
        let results = try await db.modify([.update(r)], atomically: false)
        let result = try saved(results[0])
        #expect(result.recordChangeTag != existing.recordChangeTag)
        let after = try await db.record(for: r.recordID)
        #expect(after["a"] as? String == "a1")
        #expect(after["b"] == nil)
        #expect(after["c"] as? String == "c0")
    }

    @Test func updateWithAStaleTagFailsWithTheServerRecord() async throws {
        let first = try await stored("n1")
        let fresh = try await db.record(for: first.recordID)
        fresh["a"] = "a1"
        let current = try await db.save(fresh)
        let r = try Self.fromDictionary("n1", tag: first.recordChangeTag, ["a": Self.string("stale")])
        let results = try await db.modify([.update(r)], atomically: false)
        let error = try #require(fogError(results[0]))
        #expect(error.code == .serverRecordChanged)
        let server = try #require(error.serverRecord)
        #expect(server.recordChangeTag == current.recordChangeTag)
        #expect(server["a"] as? String == "a1")
        #expect(try await db.record(for: r.recordID)["a"] as? String == "a1")
    }

    @Test func updateAndReplaceOfAMissingRecordFailWithUnknownItem() async throws {
        let u = try Self.fromDictionary("u", tag: "1", ["a": Self.string("x")])
        let r = try Self.fromDictionary("r", tag: "1", ["a": Self.string("x")])
        let results = try await db.modify([.update(u), .replace(r)], atomically: false)
        #expect(fogError(results[0])?.code == .unknownItem)
        #expect(fogError(results[1])?.code == .unknownItem)
    }

    @Test func updateWithoutAChangeTagIsRefused() async throws {
        _ = try await stored("n1")
        let r = try Self.fromDictionary("n1", tag: nil, ["a": Self.string("x")])
        let results = try await db.modify([.update(r)], atomically: false)
        #expect(fogError(results[0])?.code == .invalidArguments)
        #expect(try await db.record(for: r.recordID)["a"] as? String == "a0")
    }

    @Test func forceUpdateIgnoresTheTagKeepsTheOtherFieldsAndCreatesWhenMissing() async throws {
        _ = try await stored("n1")
        let r = try Self.fromDictionary("n1", tag: "stale", ["a": Self.string("a1")])
        let new = try Self.fromDictionary("n2", tag: nil, ["a": Self.string("new")])
        let results = try await db.modify([.forceUpdate(r), .forceUpdate(new)], atomically: false)
        _ = try saved(results[0])
        _ = try saved(results[1])
        let after = try await db.record(for: r.recordID)
        #expect(after["a"] as? String == "a1")
        #expect(after["b"] as? String == "b0")
        #expect(after["c"] as? String == "c0")
        #expect(try await db.record(for: new.recordID)["a"] as? String == "new")
    }

    @Test func replaceRemovesTheFieldsNotSent() async throws {
        let existing = try await stored("n1")
        let r = try Self.fromDictionary("n1", tag: existing.recordChangeTag, ["a": Self.string("a1"), "d": Self.string("d1")])
        let results = try await db.modify([.replace(r)], atomically: false)
        let result = try saved(results[0])
        #expect(result.allKeys() == ["a", "d"])
        let after = try await db.record(for: r.recordID)
        #expect(after.allKeys() == ["a", "d"])
        #expect(after["a"] as? String == "a1")
        #expect(after["d"] as? String == "d1")
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func replaceWithAStaleTagFails() async throws {
        let first = try await stored("n1")
        let fresh = try await db.record(for: first.recordID)
        fresh["a"] = "a1"
        try await db.save(fresh)
        let r = try Self.fromDictionary("n1", tag: first.recordChangeTag, ["a": Self.string("x")])
        let results = try await db.modify([.replace(r)], atomically: false)
        let error = try #require(fogError(results[0]))
        #expect(error.code == .serverRecordChanged)
        #expect(error.serverRecord != nil)
        #expect(try await db.record(for: r.recordID).allKeys() == ["a", "b", "c"])
    }

    @Test func forceReplaceReplacesWithoutATagAndCreatesWhenMissing() async throws {
        _ = try await stored("n1")
        let r = try Self.fromDictionary("n1", tag: nil, ["b": Self.string("b1")])
        let new = try Self.fromDictionary("n2", tag: nil, ["a": Self.string("new")])
        let results = try await db.modify([.forceReplace(r), .forceReplace(new)], atomically: false)
        _ = try saved(results[0])
        _ = try saved(results[1])
        let after = try await db.record(for: r.recordID)
        #expect(after.allKeys() == ["b"])
        #expect(after["b"] as? String == "b1")
        #expect(try await db.record(for: new.recordID)["a"] as? String == "new")
    }

    @Test func replaceKeepsTheEncryptedFieldsTheRecordHoldsAndRemovesTheOthers() async throws {
        let r = Record(recordType: "Note", recordID: .init(recordName: "n1"))
        r["a"] = "a0"
        r.encryptedValues["secret"] = "s0"
        r.encryptedValues["other"] = "o0"
        let existing = try await db.save(r)
        let dictionary = WebServices.RecordDictionary(
            recordName: "n1", recordType: "Note", recordChangeTag: existing.recordChangeTag,
            fields: [
                "a": Self.string("a1"),
                "secret": {
                    var f = Self.string("s1")
                    f.isEncrypted = true
                    return f
                }(),
            ])
        let results = try await db.modify([.replace(try Record(dictionary))], atomically: false)
        _ = try saved(results[0])
        let after = try await db.record(for: r.recordID)
        #expect(after.allKeys() == ["a"])
        #expect(after.encryptedValues["secret"] as? String == "s1")
        #expect(after.encryptedValues["other"] == nil)
    }

    @Test func deleteWithTheStoredTagDeletes() async throws {
        let existing = try await stored("n1")
        let tag = try #require(existing.recordChangeTag)
        let results = try await db.modify([.delete(existing.recordID, recordChangeTag: tag)], atomically: false)
        #expect(try results[0].get() == nil)
        await #expect(throws: FogError.self) { try await db.record(for: existing.recordID) }
    }

    @Test func deleteWithAStaleTagFailsAndTheRecordStays() async throws {
        let first = try await stored("n1")
        let fresh = try await db.record(for: first.recordID)
        fresh["a"] = "a1"
        let current = try await db.save(fresh)
        let results = try await db.modify([.delete(first.recordID, recordChangeTag: first.recordChangeTag!)], atomically: false)
        let error = try #require(fogError(results[0]))
        #expect(error.code == .serverRecordChanged)
        #expect(error.serverRecord?.recordChangeTag == current.recordChangeTag)
        #expect(try await db.record(for: first.recordID)["a"] as? String == "a1")
    }

    @Test func deleteOfAMissingRecordFailsWithUnknownItem() async throws {
        let id = Record.ID(recordName: "ghost")
        let results = try await db.modify(
            [.delete(id, recordChangeTag: "1"), .forceDelete(.init(recordName: "ghost2"))], atomically: false)
        #expect(fogError(results[0])?.code == .unknownItem)
        #expect(fogError(results[1])?.code == .unknownItem)
    }

    @Test func forceDeleteDeletesWithoutATag() async throws {
        let existing = try await stored("n1")
        let fresh = try await db.record(for: existing.recordID)
        fresh["a"] = "a1"
        try await db.save(fresh)
        let results = try await db.modify([.forceDelete(existing.recordID)], atomically: false)
        #expect(try results[0].get() == nil)
        await #expect(throws: FogError.self) { try await db.record(for: existing.recordID) }
    }

    // MARK: - Batches

    @Test func aMixedBatchAnswersInRequestOrder() async throws {
        let d1 = try await stored("d1")
        let d2 = try await stored("d2")
        let u1 = try await stored("u1")
        let operations: [WebServices.RecordOperation] = [
            .forceDelete(d1.recordID),
            .create(try Self.fromDictionary("c1", tag: nil, ["a": Self.string("c")])),
            .delete(d2.recordID, recordChangeTag: d2.recordChangeTag!),
            .update(try Self.fromDictionary("u1", tag: u1.recordChangeTag, ["a": Self.string("u")])),
            .create(try Self.fromDictionary("u1x", tag: nil, ["a": Self.string("c2")])),
            .forceDelete(.init(recordName: "missing")),
        ]
        #expect(operations.map(\.recordID.recordName) == ["d1", "c1", "d2", "u1", "u1x", "missing"])
        let results = try await db.modify(operations, atomically: false)
        #expect(results.count == 6)
        #expect(try results[0].get() == nil)
        #expect(try saved(results[1]).recordID.recordName == "c1")
        #expect(try results[2].get() == nil)
        #expect(try saved(results[3]).recordID.recordName == "u1")
        #expect(try saved(results[3])["a"] as? String == "u")
        #expect(try saved(results[4]).recordID.recordName == "u1x")
        #expect(fogError(results[5])?.code == .unknownItem)
    }

    /// A custom zone (atomic) with a good create, a good delete and one stale update.
    func atomicBatch(atomically: Bool) async throws -> (RecordZone.ID, [Result<Record?, any Error>]) {
        let zone = try await db.save(RecordZone(zoneName: "Atomic")).zoneID
        let first = try await stored("stale", zoneID: zone)
        let fresh = try await db.record(for: first.recordID)
        fresh["a"] = "a1"
        try await db.save(fresh)
        let doomed = try await stored("doomed", zoneID: zone)
        let results = try await db.modify(
            [
                .create(try Self.fromDictionary("new", tag: nil, ["a": Self.string("n")], zoneID: zone)),
                .update(try Self.fromDictionary("stale", tag: first.recordChangeTag, ["a": Self.string("x")], zoneID: zone)),
                .forceDelete(doomed.recordID),
            ], atomically: atomically)
        return (zone, results)
    }

    @Test func anAtomicBatchWritesNothingWhenOneOperationFails() async throws {
        let (zone, results) = try await atomicBatch(atomically: true)
        #expect(fogError(results[0])?.code == .batchRequestFailed)
        #expect(fogError(results[1])?.code == .serverRecordChanged)
        #expect(fogError(results[1])?.serverRecord != nil)
        #expect(fogError(results[2])?.code == .batchRequestFailed)
        await #expect(throws: FogError.self) { try await db.record(for: .init(recordName: "new", zoneID: zone)) }
        #expect(try await db.record(for: .init(recordName: "stale", zoneID: zone))["a"] as? String == "a1")
        #expect(try await db.record(for: .init(recordName: "doomed", zoneID: zone))["a"] as? String == "a0")
        #expect(try store.admin.checkIntegrity().isSound)
    }

    @Test func aNonAtomicBatchAppliesTheOthers() async throws {
        let (zone, results) = try await atomicBatch(atomically: false)
        #expect(try saved(results[0])["a"] as? String == "n")
        #expect(fogError(results[1])?.code == .serverRecordChanged)
        #expect(try results[2].get() == nil)
        #expect(try await db.record(for: .init(recordName: "new", zoneID: zone))["a"] as? String == "n")
        await #expect(throws: FogError.self) { try await db.record(for: .init(recordName: "doomed", zoneID: zone)) }
    }

    @Test func aRepeatedIDFailsEveryOccurrence() async throws {
        let existing = try await stored("n1")
        let results = try await db.modify(
            [.forceUpdate(try Self.fromDictionary("n1", tag: nil, ["a": Self.string("x")])), .forceDelete(existing.recordID)],
            atomically: false)
        #expect(fogError(results[0])?.code == .invalidArguments)
        #expect(fogError(results[1])?.code == .invalidArguments)
    }

    @Test func moreThan400OperationsFailTheRequest() async throws {
        let operations = (0..<401).map { WebServices.RecordOperation.forceDelete(.init(recordName: "r\($0)")) }
        await #expect {
            try await db.modify(operations, atomically: false)
        } throws: { ($0 as? FogError)?.code == .limitExceeded }
    }
}
