// Fuzzes the change token decoder: `ServerChangeToken(data:)` read as a zone and as a
// database token (`ChangeTokenContent`), and in a zone and a database change feed of the
// fixture store. Bad bytes must give `invalidArguments` (or `changeTokenExpired`), never crash.

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
            fixture.engine.zoneChanges(fixture.zoneID, since: nil, desiredKeys: nil, limit: 2, context: fixture.database.context)
                .token,
            fixture.engine.zoneChanges(fixture.zoneID, since: nil, desiredKeys: nil, limit: 0, context: fixture.database.context)
                .token,
            fixture.engine.databaseChanges(since: nil, limit: 0, context: fixture.database.context).token,
            fixture.engine.databaseChanges(since: nil, limit: 1, context: fixture.database.context).token,
        ].map { Array($0.data) })
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(input(data, size))
    check(ServerChangeToken(data: Data(bytes)))
    // The same bytes with a valid checksum, so that mutations reach the fields behind it.
    if bytes.count > 8 {
        var body = ByteWriter(capacity: bytes.count)
        body.bytes = Array(bytes[..<(bytes.count - 8)])
        body.u64(ChangeTokenContent.checksum(body.bytes[...]))
        check(ServerChangeToken(data: Data(body.bytes)))
    }
    return 0
}

func check(_ token: ServerChangeToken) {
    for kind in [ChangeTokenContent.Kind.zone, .database] {
        guard let content = try? ChangeTokenContent(token, expected: kind) else { continue }
        // A token that decodes encodes to a token that decodes to the same content.
        guard (try? ChangeTokenContent(content.token, expected: kind)) == content else {
            fatalError("a change token does not decode as it was encoded")
        }
    }
    let fixture = Fixture.shared
    let context = fixture.database.context
    do {
        _ = try fixture.engine.zoneChanges(fixture.zoneID, since: token, desiredKeys: nil, limit: 3, context: context)
    } catch let error as FogError {
        guard [.invalidArguments, .changeTokenExpired].contains(error.code) else { fatalError("zone changes: \(error)") }
    } catch {
        fatalError("zone changes: \(error)")
    }
    do {
        _ = try fixture.engine.databaseChanges(since: token, limit: 3, context: context)
    } catch let error as FogError {
        guard [.invalidArguments, .changeTokenExpired].contains(error.code) else { fatalError("database changes: \(error)") }
    } catch {
        fatalError("database changes: \(error)")
    }
}
