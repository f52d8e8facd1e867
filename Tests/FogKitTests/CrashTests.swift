import FogKit
import FogKitTesting
import Foundation
import Synchronization
import Testing

/// A child process streaming atomic batches is killed with SIGKILL at random
/// moments; after reopening, every batch is whole or absent, every batch the
/// child reported as committed is present (durable commits), and the store
/// passes the integrity check.
@Suite(.serialized) struct CrashTests {
    /// The `fog` tool built beside the test bundle.
    static var fogTool: URL { FogTool.url }

    @Test func killedWriterLeavesEveryAtomicBatchWholeOrAbsent() async throws {
        let tool = Self.fogTool
        try #require(FileManager.default.isExecutableFile(atPath: tool.path), "fog must be built beside the tests: \(tool.path)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let batchSize = 20
        var generator = SystemRandomNumberGenerator()
        for round in 0..<4 {
            let zoneName = "Crash\(round)"
            let process = try ChildProcess(
                tool.path,
                [
                    "load", "--store", directory.path, "--zone", zoneName, "--batches", "1000000", "--batch-size", "\(batchSize)",
                    "--durability", "durable",
                ], standardOutput: .pipe)
            let output = try #require(process.standardOutput)
            let received = Mutex(Data())
            output.readabilityHandler = { handle in
                let data = handle.availableData
                received.withLock { $0.append(data) }
            }
            // Wait until the child commits (a loaded machine may take a while to start
            // it), let it stream for a random while, then kill it mid-stream.
            let started = Date()
            while !received.withLock({ String(decoding: $0, as: UTF8.self).contains("committed ") }),
                process.isRunning, Date().timeIntervalSince(started) < 60
            {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...500, using: &generator)))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
            output.readabilityHandler = nil
            let rest = output.readDataToEndOfFile()
            let printed = String(decoding: received.withLock { $0 } + rest, as: UTF8.self)
            let committed =
                printed.split(separator: "\n").compactMap { line -> Int? in
                    line.hasPrefix("committed ") ? Int(line.dropFirst("committed ".count)) : nil
                }.max() ?? -1

            let admin = try Container.Administrator(identifier: "iCloud.fog.load", directory: directory)
            defer { admin.close() }
            let container = try admin.container(user: Container.defaultUser)
            defer { container.close() }
            let database = container.privateCloudDatabase
            let zoneID = RecordZone.ID(zoneName: zoneName)
            var firstAbsent: Int?
            var batch = 0
            // Check every reported batch, and past them until several absent batches in a row.
            while batch <= committed || (firstAbsent.map { batch < $0 + 5 } ?? true) {
                let ids = (0..<batchSize).map { Record.ID(recordName: "b\(batch)-r\($0)", zoneID: zoneID) }
                let results = try await database.records(for: ids)
                let present = results.values.filter { (try? $0.get()) != nil }.count
                #expect(present == 0 || present == batchSize, "round \(round): batch \(batch) has \(present) of \(batchSize) records")
                if batch <= committed {
                    #expect(present == batchSize, "round \(round): batch \(batch) was reported committed but is missing")
                }
                if present == 0 {
                    if firstAbsent == nil { firstAbsent = batch }
                } else {
                    #expect(firstAbsent == nil, "round \(round): batch \(batch) is present after absent batch \(firstAbsent ?? -1)")
                }
                batch += 1
                if batch > committed + 10_000 { break }
            }
            let report = try admin.checkIntegrity()
            #expect(report.isSound, "round \(round): \(report)")
            #expect(committed >= 0, "round \(round): the writer committed nothing before it was killed")
        }
    }
}
