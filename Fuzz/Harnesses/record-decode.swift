// Fuzzes the record decoder, `RecordCodec.decode`, on arbitrary bytes read in the fixture
// store (so that name ids resolve): damaged bytes must throw, never crash.

import Foundation

@testable import FogKit

@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
)
    -> CInt
{
    writeSeedsIfAsked(Fixture.shared.storedRecords())
    _ = Fixture.shared
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = input(data, size)
    let fixture = Fixture.shared
    try? fixture.engine.read { _, names in
        for keys: Set<String>? in [nil, [], ["title", "tags", "missing"]] {
            guard let stored = try? RecordCodec.decode(buffer, names: &names, desiredKeys: keys) else { continue }
            let record = stored.makeRecord(zoneID: fixture.zoneID, assetDirectory: fixture.directory)
            for key in record.allKeys() { _ = record.fieldValue(forKey: key) }
            _ = record.recordID
            _ = record.recordChangeTag
            _ = RecordCodec.countedSize(of: stored.values)
        }
    }
    return 0
}
