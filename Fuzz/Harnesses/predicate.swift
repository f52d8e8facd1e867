// Fuzzes the predicate parser: `QueryPredicate(format:argumentArray:)` on arbitrary text.
// A predicate that parses must print (`description`) as a format that parses back to an
// equal predicate — cursors depend on it — and must be evaluable on a record.

import Foundation

@testable import FogKit

/// The values placeholders take (`%@`, `%K`, `%d`, …), in turn from an offset the input may
/// choose. Finite values only: non-finite numbers in predicates are another check's subject.
let pool: [Any] = [
    "title", 7, 2.5, Date(timeIntervalSinceReferenceDate: 800_000_000), Data([1, 2]), ["red", "green"], [1, 5],
    Location(latitude: 48.85, longitude: 2.35), Record.Reference(recordID: Record.ID(recordName: "i0"), action: .none),
    true, "n", FieldValue.stringList(["a"]), Int64.max, -0.0,
]

@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
)
    -> CInt
{
    writeSeedsIfAsked(
        [
            "TRUEPREDICATE", "n == 1 AND title BEGINSWITH 'it'", "NOT (n IN {1, 2, 3})", "ANY tags == \"red\"",
            "n BETWEEN {1, 5}", "title CONTAINS[cd] 'x' && n != 2", "%K == %@", "tags CONTAINS %@",
            "distanceToLocation:fromLocation:(place, CAST({48.85, 2.35}, \"CLLocation\")) < 5",
            "self CONTAINS 'item'", "when <= CAST(800000000, \"NSDate\")", "owner == CAST(\"i0\", \"CKReference\")",
            "blob == CAST(\"0102\", \"NSData\")", "#AND == 1", "n >= %d AND score < %f", "recordID IN %@",
            "creationDate > now() - 5", "\u{3}%@ == n AND %K IN %@", "title == 'caf\u{E9}' AND tags CONTAINS 't3'",
        ].map { Array($0.utf8) })
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var bytes = input(data, size)[...]
    // A leading control character chooses where in the pool the arguments start.
    var offset = 0
    if let first = bytes.first, first < 0x20 {
        offset = Int(first)
        bytes = bytes.dropFirst()
    }
    let format = String(decoding: UnsafeRawBufferPointer(rebasing: bytes), as: UTF8.self)
    let placeholders = min(PredicateLexer.tokenize(format).placeholders, 64)
    let arguments = (0..<placeholders).map { pool[($0 + offset) % pool.count] }
    guard let predicate = try? QueryPredicate(format: format, argumentArray: arguments) else { return 0 }
    // The documented invariant: the canonical text parses back to an equal predicate.
    let text = predicate.description
    let again: QueryPredicate
    do {
        again = try QueryPredicate(format: text)
    } catch {
        fatalError("the canonical text of \(format.debugDescription) does not parse: \(text.debugDescription): \(error)")
    }
    guard again == predicate else {
        fatalError("the canonical text of \(format.debugDescription) parses to another predicate: \(text.debugDescription)")
    }
    FixtureView.shared.evaluate(predicate)
    return 0
}

/// A record of the fixture encoded in memory and read as queries read stored records.
final class FixtureView: @unchecked Sendable {
    static let shared = FixtureView()
    let bytes: [UInt8]
    let ids: [String: Int64]

    private init() {
        let record = Fixture.item(3, in: .default)
        var values: [String: FieldValue] = [:]
        for key in record.allKeys() { values[key] = record.fieldValue(forKey: key) }
        let stored = StoredRecord(
            recordType: "Item", recordName: "i3", zone: 0, values: values, parent: "i0", share: nil,
            creationDate: Date(timeIntervalSinceReferenceDate: 800_000_000),
            modificationDate: Date(timeIntervalSinceReferenceDate: 800_000_100), creator: "alice", modifier: "bob",
            changeSequence: 4)
        var ids: [String: Int64] = [:]
        bytes = try! RecordCodec.encode(stored) { name in
            if let id = ids[name] { return id }
            ids[name] = Int64(ids.count + 1)
            return Int64(ids.count)
        }
        self.ids = ids
    }

    func evaluate(_ predicate: QueryPredicate) {
        bytes.withUnsafeBytes { buffer in
            let view = try! RecordView(buffer, checking: .all)
            let fields = ViewFields(view: view, ids: FieldIDs(ids), creator: "alice", modifier: "bob")
            _ = PredicateEvaluator(now: Date(timeIntervalSinceReferenceDate: 800_000_050), searchFields: nil)
                .matches(predicate.node, fields)
        }
    }
}
