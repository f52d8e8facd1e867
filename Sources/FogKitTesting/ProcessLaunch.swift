import Foundation
import Synchronization

private let launchLock = Mutex(())

extension Process {
    /// Starts the process while no other thread of the tests starts one.
    ///
    /// Foundation's `Process.run()` on Linux crashed once in `memmove` while the test bundle
    /// started many processes from parallel tests (`fog`, helpers, servers); launches are
    /// serialised so that a race inside it cannot end the whole test run. Waiting for the
    /// processes is not serialised.
    public func launchSerially() throws {
        try launchLock.withLock { _ in try run() }
    }
}
