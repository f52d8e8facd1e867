import FogKit
import FogKitTesting
import Foundation
import Testing

/// The sync part of `fog demo`: two local note stores, each with a SyncEngine, sync through
/// a container.
@Suite struct DemoSyncTests {
    @Test func theDemoSyncsTwoNoteStoresThroughTheContainer() throws {
        let work = try TemporaryDirectory("sync-demo")
        let out = try SchemaCommandTests.fogSucceeds(["demo", "--store", work.appending("store").path])
        let lines = out.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("Two of alice's devices") })
        let part = Array(lines[start...])
        #expect(part.contains("  laptop fetches: \"Pack for the trip\""), "\(part)")
        #expect(part.contains { $0.contains("phone: conflict on the note (serverRecordChanged)") }, "\(part)")
        #expect(part.contains("    phone:  \"Pack for the trip: passport, charger\""), "\(part)")
        #expect(part.contains("    laptop: \"Pack for the trip: passport, charger\""), "\(part)")
    }
}
