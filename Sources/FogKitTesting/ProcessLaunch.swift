import Foundation
import Synchronization

private let launchLock = Mutex(())

extension Process {
    /// Starts the process while no other thread of the tests starts one: every test that
    /// starts a `Process` goes through here, so that launches are one place to change.
    ///
    /// Foundation's `Process.run()` on Linux can crash in `memmove` while it lists
    /// `/proc/self/fd` (an over-read of glibc's directory buffer, swift-corelibs-foundation
    /// pull request 5472); serialising launches does not prevent that, so the tests that start
    /// processes most (`FogTool.run`) use `posix_spawn` instead.
    public func launchSerially() throws {
        try launchLock.withLock { _ in try run() }
    }
}
