import FogKitTesting
import Foundation

@testable import FogKit

extension TestStore {
    /// The files in the store's assets folder, sorted, once no collection waits.
    ///
    /// A collection that finds the asset lock taken waits for the next one. In a test run the
    /// lock can be taken for a moment by a child process that another test forks: a `flock` is
    /// shared with a forked child until it runs `exec` and closes its copy of the descriptor.
    /// So a deferred collection is run again here (for a second at most) before counting.
    var settledAssetFiles: [String] {
        let assets = container.engine.records.assets
        for _ in 0..<100 where assets.hasPendingCollection {
            assets.collect()
            if assets.hasPendingCollection { usleep(10_000) }
        }
        let folder = directory.appendingPathComponent("assets")
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }
}
