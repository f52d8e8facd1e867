import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program with `posix_spawn` and waits for it, its standard streams from and to files.
///
/// Foundation's `Process.run()` on Linux (Swift 6.3.1) can crash the test process: it reads
/// `/proc/self/fd` with a 256-byte over-read past glibc's directory buffer
/// (swift-corelibs-foundation pull request 5472), which a test bundle holding many open
/// descriptors hits now and then. The tests that run `fog` many times use this instead.
enum Spawn {
    /// Runs `executable` with `arguments` (its environment: this process's), standard input
    /// from `stdin`, standard output and error into `stdout` and `stderr` (created or
    /// truncated); returns the exit status, or the signal number when a signal ended it.
    static func run(_ executable: String, _ arguments: [String], stdin: String, stdout: String, stderr: String) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try SpawnActions.closeInheritedDescriptors(&actions)
        let all = [executable] + arguments
        var argv: [UnsafeMutablePointer<CChar>?] = all.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let rc = SpawnActions.withDefaultSignals { posix_spawn(&pid, executable, &actions, $0, &argv, environ) }
        guard rc == 0 else { throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw SpawnError(description: "cannot wait for \(executable): errno \(errno)") }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }
}

/// A program that could not be started or waited for.
struct SpawnError: Error, CustomStringConvertible {
    let description: String
}
