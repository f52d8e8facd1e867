import Foundation

/// Runs the `fog` tool that `swift build` puts beside the test bundle, as a process.
public enum FogTool {
    /// The built `fog` executable, beside the running test bundle.
    public static var url: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("fog")
    }

    /// What a run of `fog` gave.
    public struct Run: Sendable {
        /// The exit status.
        public var status: Int32
        /// Everything written to standard output.
        public var out: String
        /// Everything written to standard error.
        public var err: String
    }

    /// The executable is missing: `swift build` did not build it beside the tests.
    public struct NotBuilt: Error, CustomStringConvertible {
        /// Where it was looked for.
        public let path: String
        public var description: String { "fog must be built beside the tests: \(path)" }
    }

    /// Runs `fog` (or `executable`) with `arguments`, standard input from `stdin` (the null
    /// device when `nil`, so never a terminal); returns its exit status, standard output and
    /// standard error, which go through files (a pipe could fill and block the tool).
    @discardableResult
    public static func run(_ arguments: [String], stdin: URL? = nil, executable: URL = url) throws -> Run {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else { throw NotBuilt(path: executable.path) }
        let directory = try TemporaryDirectory("fog-run")
        let out = directory.appending("out"), err = directory.appending("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let status = try Spawn.run(
            executable.path, arguments, stdin: stdin?.path ?? "/dev/null", stdout: out.path, stderr: err.path)
        return Run(
            status: status, out: String(decoding: try Data(contentsOf: out), as: UTF8.self),
            err: String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }
}
