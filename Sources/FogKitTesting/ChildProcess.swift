import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A program started with `posix_spawn`, for tests that start, read, kill and wait for other
/// processes: the part of Foundation's `Process` they use, without its `run()`, which on
/// Linux (Swift 6.3.1) can crash the test process by over-reading `/proc/self/fd`
/// (swift-corelibs-foundation pull request 5472; see ``Spawn``).
public final class ChildProcess: Sendable {
    /// Where a standard stream of the child goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case discard
        /// This process's own stream.
        case inherit
        /// A file, created or truncated.
        case file(String)
        /// A pipe whose reading end is ``standardOutput`` or ``standardError``.
        case pipe
    }

    /// How the child ended.
    public enum TerminationReason: Sendable, Equatable {
        /// It exited; ``terminationStatus`` is its exit status.
        case exit
        /// A signal ended it; ``terminationStatus`` is the signal's number.
        case uncaughtSignal
    }

    /// The child's process ID.
    public let processIdentifier: pid_t
    /// The reading end of the child's standard output, when it is ``Stream/pipe``.
    public let standardOutput: FileHandle?
    /// The reading end of the child's standard error, when it is ``Stream/pipe``.
    public let standardError: FileHandle?
    /// The raw wait status, once the child has been waited for.
    private let status = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments`; `environment` replaces this process's (`nil`:
    /// this process's). Standard input is `/dev/null`.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, standardOutput: Stream = .discard,
        standardError: Stream = .discard
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var parentEnds: [Int32: FileHandle] = [:]
        var childEnds: [Int32] = []
        defer { for fd in childEnds { close(fd) } }
        for (target, stream) in [(Int32(1), standardOutput), (Int32(2), standardError)] {
            switch stream {
            case .discard: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .inherit: break
            case .file(let path): posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .pipe:
                // A socket pair made close-on-exec atomically (Glibc's module does not export
                // `pipe2`), so no other child started meanwhile inherits an end; dup2 gives this
                // child its own copy without the flag.
                var fds: [Int32] = [0, 0]
                guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
                    throw SpawnError(description: "cannot make a socket pair: errno \(errno)")
                }
                posix_spawn_file_actions_adddup2(&actions, fds[1], target)
                parentEnds[target] = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)
                childEnds.append(fds[1])
            }
        }
        try SpawnActions.closeInheritedDescriptors(&actions)
        let all = [executable] + arguments
        var argv: [UnsafeMutablePointer<CChar>?] = all.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let rc: Int32
        if let environment {
            var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for pointer in envp { free(pointer) } }
            rc = SpawnActions.withDefaultSignals { posix_spawn(&pid, executable, &actions, $0, &argv, &envp) }
        } else {
            rc = SpawnActions.withDefaultSignals { posix_spawn(&pid, executable, &actions, $0, &argv, environ) }
        }
        guard rc == 0 else { throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(rc)))") }
        processIdentifier = pid
        self.standardOutput = parentEnds[1]
        self.standardError = parentEnds[2]
    }

    /// Whether the child is still running (it is reaped when it has ended).
    public var isRunning: Bool {
        status.withLock { status in
            guard status == nil else { return false }
            var raw: Int32 = 0
            let rc = waitpid(processIdentifier, &raw, WNOHANG)
            if rc == processIdentifier { status = raw }
            return rc == 0
        }
    }

    /// Waits until the child has ended (blocking this thread, not holding the lock that
    /// ``isRunning`` takes).
    public func waitUntilExit() {
        while status.withLock({ $0 }) == nil {
            var raw: Int32 = 0
            let rc = waitpid(processIdentifier, &raw, 0)
            if rc == processIdentifier {
                status.withLock { $0 = $0 ?? raw }
            } else if rc == -1, errno != EINTR {
                // Reaped by another caller: its status is being stored.
                usleep(1_000)
            }
        }
    }

    /// Sends `signal` to the child while it runs.
    public func signal(_ signal: Int32) {
        if isRunning { _ = kill(processIdentifier, signal) }
    }

    /// Sends SIGTERM, as `Process.terminate()` does.
    public func terminate() { signal(SIGTERM) }

    /// How the child ended (after ``waitUntilExit()``).
    public var terminationReason: TerminationReason {
        waitUntilExit()
        let raw = status.withLock { $0 } ?? 0
        return raw & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    /// The exit status, or the signal's number (after ``waitUntilExit()``).
    public var terminationStatus: Int32 {
        waitUntilExit()
        let raw = status.withLock { $0 } ?? 0
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
    }

    /// A child still running when its handle goes is killed, and every child is reaped (a
    /// test that only sent SIGTERM, or none, leaves no zombie behind).
    deinit {
        signal(SIGKILL)
        waitUntilExit()
    }

    /// The executable `name` found on `PATH` (`name` itself when it has a slash), or `nil`.
    public static func which(_ name: String) -> String? {
        if name.contains("/") { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }
}
