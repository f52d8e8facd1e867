// Fuzzes query cursor decoding: a cursor decoded from JSON (as an app keeps it with
// `Codable`), its position read by the order key decoders, and, when it decodes, continued
// on the fixture store. A cursor that was tampered with must fail with `invalidArguments`,
// never crash.

import Foundation

@testable import FogKit

@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
)
    -> CInt
{
    let fixture = Fixture.shared
    writeSeedsIfAsked(
        try! [
            ("TRUEPREDICATE", []),
            ("n >= 1", [Query.SortDescriptor(key: "n", ascending: true)]),
            ("n >= 1", [Query.SortDescriptor(key: "title", ascending: false)]),
            (
                "tags CONTAINS 'red'",
                [Query.SortDescriptor(key: "n", ascending: false), Query.SortDescriptor(key: "title", ascending: true)]
            ),
            ("n == 2", []),
            ("TRUEPREDICATE", [LocationSortDescriptor(key: "place", relativeLocation: Location(latitude: 48.85, longitude: 2.35))]),
        ].compactMap { (format: String, sort: [Query.SortDescriptor]) -> [UInt8]? in
            let query = Query(recordType: "Item", predicate: try QueryPredicate(format: format))
            query.sortDescriptors = sort
            guard let cursor = try fixture.database.runQuery(query, zoneID: nil, desiredKeys: nil, resultsLimit: 1).cursor else {
                return nil
            }
            return Array(try JSONEncoder().encode(cursor))
        })
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Data(input(data, size))
    // The position decoders on raw bytes.
    _ = try? OrderKey.row(ofPosition: Array(bytes))
    _ = try? OrderKey.valueAndRow(ofPosition: Array(bytes))
    guard let cursor = try? JSONDecoder().decode(QueryCursor.self, from: bytes) else { return 0 }
    _ = cursor.description
    do {
        _ = try Fixture.shared.database.runQuery(continuing: cursor, desiredKeys: nil, resultsLimit: 2)
    } catch let error as FogError {
        guard [.invalidArguments, .zoneNotFound].contains(error.code) else { fatalError("continuing a cursor: \(error)") }
    } catch {
        fatalError("continuing a cursor: \(error)")
    }
    return 0
}
