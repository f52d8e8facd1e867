import FogKit
import FogKitTesting
import Foundation
import Testing

/// A power loss, modelled: the workload runs with `Tests/PowerLoss/powerloss.c` preloaded,
/// which copies a write of the store's data file into a "disk image" only when the write
/// is synced (`fdatasync`, `fsync`, an `O_DSYNC` descriptor). The workload is killed
/// mid-stream; the image, opened as the store, is what the disk would hold had the power
/// gone at that moment. Unlike `CrashTests` (SIGKILL keeps the page cache, so every
/// commit survives whatever the durability), this loses every write that was not synced.
///
/// Four writers save atomic batches at once (their requests share commits), delete
/// earlier batches, create and delete zones, with payloads that make the map grow past
/// its first 64 MiB. With `durable`, every acknowledged commit must be in the image, no
/// batch partial, every acknowledged deletion done, the change feeds must match the
/// records, and the integrity check must pass. With `none`, acknowledged commits must be
/// lost: that is what shows the test can fail.
@Suite(.serialized) struct PowerLossTests {
    static let writers = 4
    static let batches = 40
    static let recordsPerBatch = 8
    static let payload = 100_000
    /// The workload is killed soon after this many batches are acknowledged and its map
    /// has grown past the first 64 MiB. The count alone does not make sure of the
    /// growth: 100 batches of 8 × 100 kB are 80 MB, but the deletes free a fifth of them
    /// for later batches, and a CI run once stopped at 67,059,712 bytes, map not grown.
    static let killAfterSaves = 100
    static let firstMapSize = 64 << 20

    /// Three power losses at random moments after the map grew.
    @Test(arguments: 1...3) func durableCommitsSurviveAPowerLoss(round: Int) async throws {
        try await expectNoLoss(durability: "durable")
    }

    /// Writes through a container opened with `none` while another container of the
    /// process has the directory open with `durable`: the commits are durable (and the
    /// `none` container's configuration says so).
    @Test func aMoreDurableContainerMakesTheSharedStoreDurable() async throws {
        let outcome = try await expectNoLoss(durability: "none+durable")
        #expect(outcome.workloadDurability == "durable", "\(outcome)")
    }

    /// `relaxed` may lose the last commits (their meta page was not synced), never
    /// tear a batch or damage the store.
    @Test func relaxedCommitsMayBeLostButNeverTorn() async throws {
        let outcome = try await Self.run(durability: "relaxed")
        print("power loss, relaxed: \(outcome)")
        #expect(outcome.openError == nil, "\(outcome)")
        #expect(outcome.partialBatches == 0, "\(outcome)")
        #expect(outcome.feedProblems.isEmpty, "\(outcome.feedProblems.prefix(5))")
        #expect(outcome.integrity?.isSound == true, "\(outcome)")
    }

    @discardableResult
    func expectNoLoss(durability: String) async throws -> Outcome {
        let outcome = try await Self.run(durability: durability)
        print("power loss, \(durability): \(outcome)")
        #expect(outcome.openError == nil, "\(outcome)")
        #expect(outcome.acknowledgedSaves >= Self.killAfterSaves)
        #expect(outcome.lostSaves == 0, "\(outcome)")
        #expect(outcome.lostDeletes == 0, "\(outcome)")
        #expect(outcome.lostZoneDeletes == 0, "\(outcome)")
        #expect(outcome.partialBatches == 0, "\(outcome)")
        #expect(outcome.feedProblems.isEmpty, "\(outcome.feedProblems.prefix(5))")
        #expect(outcome.integrity?.isSound == true, "\(outcome)")
        // The map grew past the first map of 64 MiB before the power went (the run waits
        // for a `stats` line that says so).
        #expect(outcome.mapSize > Self.firstMapSize, "\(outcome)")
        // Concurrent writers shared commits.
        #expect(outcome.writeRequests > outcome.commits, "\(outcome)")
        #expect(outcome.layerStatistics["syncs", default: 0] > 0)
        return outcome
    }

    @Test func withoutDurabilityAPowerLossLosesAcknowledgedCommits() async throws {
        let outcome = try await Self.run(durability: "none")
        print("power loss, none: \(outcome)")
        #expect(outcome.acknowledgedSaves >= Self.killAfterSaves)
        // The same checks as the durable test, which must not all pass.
        let lost = outcome.openError != nil || outcome.lostSaves > 0 || outcome.lostDeletes > 0 || outcome.lostZoneDeletes > 0
        #expect(lost, "with durability none, a power loss kept every acknowledged commit: \(outcome)")
    }

    // MARK: - Running the workload

    struct Outcome: CustomStringConvertible {
        var acknowledgedSaves = 0, acknowledgedDeletes = 0, acknowledgedZoneDeletes = 0
        var lostSaves = 0, lostDeletes = 0, lostZoneDeletes = 0, partialBatches = 0
        var survivingBatches = 0
        var feedProblems: [String] = []
        var integrity: IntegrityReport?
        var openError: (any Error)?
        var imageBytes = 0
        var storeBytes = 0
        var seconds = 0.0
        var layerStatistics: [String: Int] = [:]
        /// The durability the workload's container reported.
        var workloadDurability = ""
        /// The workload's last `stats` line: commits, write requests, map size.
        var commits = 0, writeRequests = 0, mapSize = 0

        var description: String {
            var text =
                "acknowledged \(acknowledgedSaves) batch saves, \(acknowledgedDeletes) batch deletes, \(acknowledgedZoneDeletes) zone deletes; "
            text += "lost \(lostSaves) saves, \(lostDeletes) deletes, \(lostZoneDeletes) zone deletes; \(partialBatches) partial batches; "
            text += "\(survivingBatches) batches in the image; image \(imageBytes) of \(storeBytes) bytes; "
            text += "layer \(layerStatistics.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")); "
            text += "\(writeRequests) requests in \(commits) commits, map \(mapSize) bytes; "
            text += String(format: "workload (%@) %.1f s", workloadDurability, seconds)
            if let integrity { text += "; integrity: \(integrity)" }
            if let openError { text += "; reopening failed: \(openError)" }
            return text
        }
    }

    /// Builds the layer from its C source with the system's C compiler.
    static func buildLayer(into directory: URL) throws -> URL {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PowerLoss/powerloss.c")
        let library = directory.appendingPathComponent("libpowerloss.so")
        let compiler = try #require(ChildProcess.which("cc"), "no cc on PATH")
        let cc = try ChildProcess(
            compiler, ["-shared", "-fPIC", "-O2", "-o", library.path, source.path, "-ldl", "-lpthread"], standardOutput: .inherit,
            standardError: .inherit)
        cc.waitUntilExit()
        try #require(cc.terminationStatus == 0, "cc could not build \(source.path)")
        return library
    }

    static func run(durability: String) async throws -> Outcome {
        let scratch = try TemporaryDirectory("powerloss-\(durability)")
        defer { scratch.remove() }
        let library = try buildLayer(into: scratch.url)
        let store = scratch.url.appendingPathComponent("store", isDirectory: true).resolvingSymlinksInPath()
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        let image = scratch.url.appendingPathComponent("image")
        let statistics = scratch.url.appendingPathComponent("statistics")

        let start = Date()
        // The time bound only stops a workload that hangs: a run takes about 50 s alone on
        // two cores, and took over 120 s beside a release build (82 of 100 saves by then).
        let bound: TimeInterval = 360
        let workload = try HelperProcess(
            HelperProcess.executable("FogTestHelper"),
            [
                "powerloss-workload", store.path, durability, "\(writers)", "\(batches)", "\(recordsPerBatch)", "\(payload)",
            ],
            environment: [
                "LD_PRELOAD": library.path, "POWERLOSS_TARGET": store.appendingPathComponent("data.mdb").path,
                "POWERLOSS_IMAGE": image.path, "POWERLOSS_STATS": statistics.path,
            ])
        while workload.isRunning,
            workload.lines.count(where: { $0.hasPrefix("ack save") }) < killAfterSaves
                || Self.statistics(in: workload.lines).mapSize <= firstMapSize,
            !workload.lines.contains("done"), Date().timeIntervalSince(start) < bound
        {
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...200)))
        // The power goes.
        workload.kill()
        var outcome = Outcome()
        outcome.seconds = Date().timeIntervalSince(start)
        // Read the acknowledgements after the kill: a line printed is a commit returned.
        try await Task.sleep(for: .milliseconds(100))
        var saves = Set<[Int]>(), deletes = Set<[Int]>(), zoneDeletes = Set<[Int]>()
        for line in workload.lines {
            if line.hasPrefix("durability ") { outcome.workloadDurability = String(line.split(separator: " ")[1]) }
            let parts = line.split(separator: " ")
            guard parts.count == 4, parts[0] == "ack", let w = Int(parts[2]), let b = Int(parts[3]) else { continue }
            switch parts[1] {
            case "save": saves.insert([w, b])
            case "delete": deletes.insert([w, b])
            case "zonedelete": zoneDeletes.insert([w, b])
            default: break
            }
        }
        (outcome.commits, outcome.writeRequests, outcome.mapSize) = Self.statistics(in: workload.lines)
        outcome.acknowledgedSaves = saves.count
        outcome.acknowledgedDeletes = deletes.count
        outcome.acknowledgedZoneDeletes = zoneDeletes.count
        outcome.storeBytes =
            (try? FileManager.default.attributesOfItem(atPath: store.appendingPathComponent("data.mdb").path)[.size] as? Int) ?? 0
        outcome.imageBytes = (try? FileManager.default.attributesOfItem(atPath: image.path)[.size] as? Int) ?? 0
        if let text = try? String(contentsOf: statistics, encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.count == 2, let value = Int(parts[1]) { outcome.layerStatistics[String(parts[0])] = value }
            }
        }

        // What the disk held: the image, as the data file of a store of its own.
        let recovered = scratch.url.appendingPathComponent("recovered", isDirectory: true)
        try FileManager.default.createDirectory(at: recovered, withIntermediateDirectories: true)
        if FileManager.default.fileExists(atPath: image.path) {
            try FileManager.default.copyItem(at: image, to: recovered.appendingPathComponent("data.mdb"))
        }
        do {
            let admin = try Container.Administrator(identifier: "iCloud.fog.powerloss", directory: recovered)
            defer { admin.close() }
            outcome.integrity = try admin.checkIntegrity()
            let container = try admin.container(user: Container.defaultUser)
            defer { container.close() }
            try await check(container.privateCloudDatabase, saves: saves, deletes: deletes, zoneDeletes: zoneDeletes, into: &outcome)
        } catch {
            outcome.openError = error
            outcome.lostSaves = saves.subtracting(deletes).count
        }
        return outcome
    }

    /// The largest commit count, request count and map size the workload's `stats` lines
    /// give (writers print them concurrently, so the last line need not hold the largest).
    static func statistics(in lines: [Substring]) -> (commits: Int, requests: Int, mapSize: Int) {
        var result = (commits: 0, requests: 0, mapSize: 0)
        for line in lines where line.hasPrefix("stats ") {
            let parts = line.split(separator: " ")
            guard parts.count == 7 else { continue }
            result.commits = max(result.commits, Int(parts[2]) ?? 0)
            result.requests = max(result.requests, Int(parts[4]) ?? 0)
            result.mapSize = max(result.mapSize, Int(parts[6]) ?? 0)
        }
        return result
    }

    /// Compares the recovered store with the acknowledgements.
    static func check(
        _ database: Database, saves: Set<[Int]>, deletes: Set<[Int]>, zoneDeletes: Set<[Int]>, into outcome: inout Outcome
    ) async throws {
        for writer in 0..<writers {
            let zoneID = RecordZone.ID(zoneName: "W\(writer)")
            let zoneExists = (try? await database.recordZone(for: zoneID)) != nil
            var present = Set<Record.ID>()
            var deletedIDs = Set<Record.ID>()
            for batch in 0..<batches {
                let ids = (0..<recordsPerBatch).map { Record.ID(recordName: "w\(writer)-b\(batch)-r\($0)", zoneID: zoneID) }
                var count = 0
                if zoneExists {
                    let results = try await database.records(for: ids)
                    for (id, result) in results where (try? result.get()) != nil {
                        present.insert(id)
                        count += 1
                    }
                }
                if count != 0 && count != recordsPerBatch { outcome.partialBatches += 1 }
                if count == recordsPerBatch { outcome.survivingBatches += 1 }
                let saved = saves.contains([writer, batch])
                let deleted = deletes.contains([writer, batch])
                // The writer deletes this batch right after acknowledging the save of batch
                // + 2 when that is a fifth batch: that deletion may have committed without
                // its acknowledgement being printed before the kill.
                let deletionMayHaveRun = (batch + 2) % 5 == 4 && saves.contains([writer, batch + 2])
                if deleted {
                    deletedIDs.formUnion(ids)
                    if count != 0 { outcome.lostDeletes += 1 }
                } else if saved && count != recordsPerBatch && !(deletionMayHaveRun && count == 0) {
                    outcome.lostSaves += 1
                }
            }
            for batch in 0..<batches where zoneDeletes.contains([writer, batch]) {
                if (try? await database.recordZone(for: RecordZone.ID(zoneName: "Z\(writer)-\(batch)"))) != nil {
                    outcome.lostZoneDeletes += 1
                }
            }
            guard zoneExists else { continue }
            // The zone's change feed, read from the start, reports exactly the records there
            // are, and the acknowledged deletions as deletions.
            var changed = Set<Record.ID>()
            var reportedDeleted = Set<Record.ID>()
            var token: ServerChangeToken?
            var pages = 0
            while true {
                let page = try await database.recordZoneChanges(inZoneWith: zoneID, since: token, resultsLimit: 50)
                changed.formUnion(page.modificationResultsByID.keys)
                reportedDeleted.formUnion(page.deletions.map(\.recordID))
                token = page.changeToken
                pages += 1
                if !page.moreComing || pages > 10_000 { break }
            }
            if changed != present {
                outcome.feedProblems.append(
                    "zone W\(writer): the feed reports \(changed.count) changed records, the zone holds \(present.count)")
            }
            let missingDeletions = deletedIDs.subtracting(reportedDeleted).subtracting(present)
            if !missingDeletions.isEmpty {
                outcome.feedProblems.append("zone W\(writer): \(missingDeletions.count) acknowledged deletions are not in the feed")
            }
        }
    }
}
