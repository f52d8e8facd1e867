import FogKitTesting
import Foundation
import Testing

/// Runs the `fog` tool that `swift build` puts beside the test bundle.
enum FogTool {
    /// The built `fog` executable.
    static var url: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("fog")
    }

    /// What a run of `fog` gave.
    struct Run {
        var status: Int32
        var out: String
        var err: String
    }

    /// Runs `fog` (or `executable`) with `arguments`, standard input from `stdin` (the null
    /// device when `nil`, so never a terminal); returns its exit status, standard output and
    /// standard error.
    @discardableResult
    static func run(_ arguments: [String], stdin: URL? = nil, executable: URL = url) throws -> Run {
        try #require(FileManager.default.isExecutableFile(atPath: url.path), "fog must be built beside the tests: \(url.path)")
        let directory = try TemporaryDirectory("fog-run")
        let out = directory.appending("out"), err = directory.appending("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = try stdin.map { try FileHandle(forReadingFrom: $0) } ?? FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, out: String(decoding: try Data(contentsOf: out), as: UTF8.self),
            err: String(decoding: try Data(contentsOf: err), as: UTF8.self))
    }
}
