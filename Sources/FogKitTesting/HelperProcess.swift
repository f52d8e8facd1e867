import Foundation
import Synchronization

/// A running `FogTestHelper` (or `fog`) process, built beside the test bundle: the tests
/// start one to share a store with them, read what it prints, and kill it.
public final class HelperProcess: Sendable {
    private let process: ChildProcess
    private let output = Output()

    private final class Output: Sendable {
        let data = Mutex(Data())
    }

    /// The executable named `name` in the directory of the test bundle (where SwiftPM
    /// builds every executable of the package).
    public static func executable(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Starts `executable` with `arguments` and `environment` added to this process's (with
    /// `posix_spawn`: see ``ChildProcess``).
    public init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws {
        // `FOG_HELPER_STDERR=1` passes the helpers' errors through, to see why one failed.
        let process = try ChildProcess(
            executable.path, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            standardOutput: .pipe,
            standardError: ProcessInfo.processInfo.environment["FOG_HELPER_STDERR"] != nil ? .inherit : .discard)
        self.process = process
        let output = self.output
        process.standardOutput?.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
            } else {
                output.data.withLock { $0.append(data) }
            }
        }
    }

    /// Everything the process has printed so far.
    public var printed: String { String(decoding: output.data.withLock { $0 }, as: UTF8.self) }

    /// The lines printed so far (complete lines only).
    public var lines: [Substring] {
        let text = printed
        guard let end = text.lastIndex(of: "\n") else { return [] }
        return text[..<end].split(separator: "\n")
    }

    /// Waits until a printed line starts with `prefix` and returns it, or returns `nil`
    /// when the process exits or `timeout` seconds pass first.
    public func waitForLine(startingWith prefix: String, timeout: TimeInterval = 60) async throws -> String? {
        let start = Date()
        while Date().timeIntervalSince(start) < timeout {
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return String(line) }
            if !process.isRunning {
                // Let the last output arrive.
                try await Task.sleep(for: .milliseconds(50))
                return lines.first(where: { $0.hasPrefix(prefix) }).map(String.init)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// Whether the process is still running.
    public var isRunning: Bool { process.isRunning }

    /// Kills the process with SIGKILL, as a crash would, and waits for it to end.
    public func kill() {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// Waits for the process to exit and returns its status.
    public func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit { kill() }
}
