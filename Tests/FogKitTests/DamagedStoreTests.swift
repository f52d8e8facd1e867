import FogKit
import FogKitTesting
import Foundation
import Testing

/// Copies of a small populated store with 1–8 bytes of its data file flipped are opened and
/// read by the `fog` tool in child processes — `fog check`, both change feeds and an indexed
/// and a whole-type query — so that a crash shows as a failure instead of killing the test
/// runner. Each process must end by exiting (success, or an error naming the damage), never
/// by a signal, and within a timeout (a hang is killed and reported).
@Suite(.serialized) struct DamagedStoreTests {
    /// 200, or `FOG_DAMAGED_COPIES` (for a longer run outside CI).
    static let copies = ProcessInfo.processInfo.environment["FOG_DAMAGED_COPIES"].flatMap { Int($0) } ?? 200
    static let timeout: TimeInterval = 30
    /// Where copies that crashed a reader are kept.
    static let keptCopies = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-damaged-copies")

    /// What one child process did.
    struct Outcome: CustomStringConvertible, Sendable {
        let copy: Int
        let flips: [(offset: Int, xor: UInt8)]
        let command: [String]
        let reason: ChildProcess.TerminationReason?
        let status: Int32
        let stderr: String
        /// Killed by a signal, hung, or (in a build with the address sanitizer) reported by it.
        var crashed: Bool { reason != .exit || stderr.contains("ERROR: AddressSanitizer") }
        var description: String {
            let how =
                reason == nil
                ? "hung (killed after \(DamagedStoreTests.timeout) s)" : reason == .exit ? "exit \(status)" : "signal \(status)"
            let where_ = flips.map { String(format: "%d^%02x", $0.offset, $0.xor) }.joined(separator: " ")
            return
                "copy \(copy) (kept in \(DamagedStoreTests.keptCopies.path)) [\(where_)] fog \(command.joined(separator: " ")): \(how)\n\(stderr.suffix(600))"
        }
    }

    /// Builds the store: indexes, records of every field type in the default zone and in a
    /// custom zone, updates and deletions (tombstones), a deleted zone, client change tokens.
    static func makeStore(at directory: URL) async throws {
        let admin = try Container.Administrator(identifier: "iCloud.damage", directory: directory, configuration: .init(durability: .none))
        defer { admin.close() }
        try await admin.setIndexes(["n": [.queryable, .sortable], "title": [.queryable, .sortable, .searchable]], ofRecordType: "Item")
        let container = try admin.container(user: "alice")
        defer { container.close() }
        let db = container.privateCloudDatabase
        let notes = RecordZone.ID(zoneName: "Notes")
        let gone = RecordZone.ID(zoneName: "Gone")
        _ = try await db.save(RecordZone(zoneID: notes))
        _ = try await db.save(RecordZone(zoneID: gone))
        for zone in [RecordZone.ID.default, notes, gone] {
            var records: [Record] = []
            for i in 0..<40 {
                let record = Record(recordType: "Item", recordID: Record.ID(recordName: "item-\(i)", zoneID: zone))
                record["n"] = i
                record["title"] = "item \(i) of the damaged store test"
                record["score"] = Double(i) / 7
                record["when"] = Date(timeIntervalSinceReferenceDate: 800_000_000 + Double(i) * 60)
                record["blob"] = Data((0..<16).map { UInt8(($0 + i) % 256) })
                record["place"] = Location(latitude: 48 + Double(i) / 100, longitude: 2)
                record["owner"] = Record.Reference(recordID: Record.ID(recordName: "item-0", zoneID: zone), action: .none)
                record["tags"] = ["t\(i % 3)", "all"]
                record["counts"] = [i, -i]
                records.append(record)
            }
            _ = try await db.modifyRecords(saving: records, deleting: [])
            // Updates move log entries; deletions leave tombstones.
            let updated = try await db.record(for: Record.ID(recordName: "item-3", zoneID: zone))
            updated["n"] = 300
            _ = try await db.save(updated)
            _ = try await db.modifyRecords(
                saving: [], deleting: (30..<35).map { Record.ID(recordName: "item-\($0)", zoneID: zone) })
        }
        _ = try await db.deleteRecordZone(withID: gone)
    }

    /// Runs `fog` with `arguments`, killing it after the timeout.
    static func run(_ arguments: [String]) throws -> (ChildProcess.TerminationReason?, Int32, String) {
        // Standard error goes to a file, read once the child has ended: a pipe's
        // `readabilityHandler` (a dispatch source) crashed the test process once in
        // libdispatch when it was cleared after a child ended.
        let errorsFile = FileManager.default.temporaryDirectory.appendingPathComponent("fog-damaged-\(UUID().uuidString).stderr")
        defer { try? FileManager.default.removeItem(at: errorsFile) }
        var environment = ProcessInfo.processInfo.environment
        // A crash ends the child at once instead of waiting for a backtrace.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        // Under `scripts/sanitize address`, the child is built with ASan: let faults end it by
        // their signal, as in a normal build, and its reports (which exit 1) show on stderr.
        environment["ASAN_OPTIONS"] = "handle_segv=0:handle_sigbus=0:handle_abort=0:detect_leaks=0"
        let process = try ChildProcess(
            CrashTests.fogTool.path, arguments, environment: environment, standardOutput: .discard, standardError: .file(errorsFile.path))
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        var reason: ChildProcess.TerminationReason?
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        } else {
            process.waitUntilExit()
            reason = process.terminationReason
        }
        let stderr = (try? Data(contentsOf: errorsFile)) ?? Data()
        return (reason, process.terminationStatus, String(decoding: stderr, as: UTF8.self))
    }

    @Test func damagedCopiesNeverCrashOrHangTheProcessesThatReadThem() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: CrashTests.fogTool.path),
            "fog must be built beside the tests: \(CrashTests.fogTool.path)")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-damage-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let pristine = root.appendingPathComponent("pristine")
        try await Self.makeStore(at: pristine)
        let original = try Data(contentsOf: pristine.appendingPathComponent("data.mdb"))

        // The undamaged store reads cleanly: every command succeeds.
        let commands: [[String]] = [
            ["check"],
            ["changes", "--user", "alice", "--zone", "Notes"],
            ["changes", "--user", "alice"],
            ["query", "Item", "--user", "alice", "--zone", "Notes", "--where", "n >= 5", "--sort", "n", "--all"],
            ["query", "Item", "--user", "alice", "--where", "title BEGINSWITH 'item'", "--sort", "-title", "--all"],
        ]
        for command in commands {
            let (reason, status, stderr) = try Self.run(command + ["--store", pristine.path])
            #expect(reason == .exit && status == 0, "the undamaged store: fog \(command.joined(separator: " ")): \(stderr)")
        }

        try? FileManager.default.removeItem(at: Self.keptCopies)
        try FileManager.default.createDirectory(at: Self.keptCopies, withIntermediateDirectories: true)
        // `FOG_DAMAGED_SEED` damages other bytes (for a longer run outside CI).
        var generator = SplitMix64(seed: ProcessInfo.processInfo.environment["FOG_DAMAGED_SEED"].flatMap { UInt64($0) } ?? 0xDA3A_6E)
        var crashes: [Outcome] = []
        var failedReads: [String] = []
        // Two copies at a time: each runs its commands one after another.
        try await withThrowingTaskGroup(of: (crashes: [Outcome], failed: [String]).self) { group in
            func collect(_ result: (crashes: [Outcome], failed: [String])?) {
                guard let result else { return }
                crashes += result.crashes
                failedReads += result.failed
            }
            var pending = 0
            for copy in 0..<Self.copies {
                var bytes = original
                var flips: [(Int, UInt8)] = []
                for _ in 0..<generator.int(1...8) {
                    let offset = generator.int(0...(bytes.count - 1))
                    let xor = UInt8(generator.int(1...255))
                    bytes[offset] ^= xor
                    flips.append((offset, xor))
                }
                let directory = root.appendingPathComponent("copy-\(copy)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try bytes.write(to: directory.appendingPathComponent("data.mdb"))
                if pending == 2 {
                    collect(try await group.next())
                    pending -= 1
                }
                pending += 1
                let flipped = flips
                group.addTask {
                    var result: (crashes: [Outcome], failed: [String]) = ([], [])
                    for command in commands {
                        let (reason, status, stderr) = try Self.run(command + ["--store", directory.path])
                        let outcome = Outcome(copy: copy, flips: flipped, command: command, reason: reason, status: status, stderr: stderr)
                        if outcome.crashed { result.crashes.append(outcome) }
                        if reason == .exit, status != 0 {
                            // The error, its numbers masked so that like errors count together
                            // (`fog check` prints its report on standard output instead).
                            let line = stderr.split(separator: "\n").last.map(String.init) ?? "(fog check: unsound report)"
                            result.failed.append(String(String(line.map { $0.isNumber ? "#" : $0 }).prefix(110)))
                        }
                    }
                    if result.crashes.isEmpty {
                        try? FileManager.default.removeItem(at: directory)
                    } else {
                        // Kept for a post-mortem: `fog check --store <folder>` reproduces it.
                        try? FileManager.default.moveItem(at: directory, to: Self.keptCopies.appendingPathComponent("copy-\(copy)"))
                    }
                    return result
                }
            }
            while let result = try await group.next() { collect(result) }
        }
        // A Swift trap (a failed check, an index out of range) ends the process with SIGILL or
        // SIGTRAP: FogKit's decoding is at fault, and so is a hang. A memory fault (SIGBUS,
        // SIGSEGV) or one of LMDB's own assertions (SIGABRT after "mdb.c:…: Assertion …") would
        // come from LMDB following a damaged page number (past the end of the file, to a wild
        // address, to a page of the wrong kind): FogStorageLMDB's guarded calls turn those
        // into a "damaged" error, so none may reach the process either.
        for outcome in crashes { Issue.record("\(outcome)") }
        #expect(crashes.isEmpty, "\(crashes.count) of \(Self.copies * commands.count) runs on damaged copies crashed or hung")
        let kinds = Dictionary(grouping: failedReads, by: { $0 }).map { ($0.value.count, $0.key) }.sorted { $0.0 > $1.0 }
        print(
            "DamagedStoreTests: \(Self.copies) copies, \(Self.copies * commands.count) runs: \(failedReads.count) ended with an error, "
                + "\(crashes.count) crashed or hung\n"
                + kinds.map { "  \($0.0)× \($0.1)" }.joined(separator: "\n"))
    }
}
