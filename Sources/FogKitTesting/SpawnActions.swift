#if canImport(Glibc)
import Glibc
#endif

/// The file actions every child the tests start gets last: close every descriptor above
/// standard error in the child, between its fork and its exec.
///
/// `posix_spawn` hands a child every descriptor of this process that lacks close-on-exec, and
/// the test bundle holds many: SwiftNIO accepts connections without `SOCK_CLOEXEC`
/// (`accept4(fd, nil, nil, SOCK_NONBLOCK)`), so the server end of a connection a FogServer
/// test has open is inherited by a `chromium`, `fog` or helper process another test starts
/// meanwhile, and outlives NIO's close until that child exits: the peer sees no FIN (for
/// `SlowClientTests` ~30 s instead of the 1 s idle timeout). Closing them in the child is
/// atomic with the spawn, which marking them close-on-exec in this process could not be.
enum SpawnActions {
    #if canImport(Glibc)
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which Swift's Glibc module
    /// does not export (`spawn.h` declares it under `__USE_GNU`); looked up once.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: AddCloseFrom.self)
    }

    /// Adds the action that closes descriptors 3 and up (after the actions already added,
    /// which set up 0, 1 and 2).
    static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) throws {
        guard let addCloseFrom else { throw SpawnError(description: "glibc lacks posix_spawn_file_actions_addclosefrom_np (2.34+)") }
        let rc = addCloseFrom(&actions, 3)
        guard rc == 0 else { throw SpawnError(description: "cannot add closefrom: \(String(cString: strerror(rc)))") }
    }

    /// Runs `body` with spawn attributes that give the child an empty signal mask and the
    /// default action for the signals a test sends or a program handles, as Foundation's
    /// `Process` does. A child inherits the mask of the thread that spawns it, and the test
    /// runner's threads block some signals: without this, a child started from one of them
    /// ignored `terminate()` and ran on (holding whatever it had inherited).
    static func withDefaultSignals<R>(_ body: (UnsafePointer<posix_spawnattr_t>) throws -> R) rethrows -> R {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        return try body(&attributes)
    }
    #else
    /// Elsewhere (Darwin: `POSIX_SPAWN_CLOEXEC_DEFAULT` would be the way) nothing yet.
    static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) throws {}

    /// Elsewhere, no attributes.
    static func withDefaultSignals<R>(_ body: (UnsafePointer<posix_spawnattr_t>?) throws -> R) rethrows -> R { try body(nil) }
    #endif
}
