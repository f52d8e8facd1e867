import FogKit
import FogKitTesting
import Foundation
import Testing

/// Faults of the store as a container meets them: every reader slot taken by other
/// processes, a damaged data file, containers of one directory asking for different
/// durabilities.
@Suite(.serialized) struct StoreFaultTests {
    static var helper: URL { HelperProcess.executable("FogTestHelper") }

    @Test func readerSlotsTakenByOtherProcessesAreRetryableAndClearedWhenTheyDie() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let id: Record.ID
        do {
            let container = try directory.open()
            defer { container.close() }
            id = try await container.privateCloudDatabase.save(Record(recordType: "Note")).recordID
        }
        let keeper = try HelperProcess(Self.helper, ["hold-readers", directory.url.path, "0"])
        defer { keeper.kill() }
        _ = try await keeper.waitForLine(startingWith: "holding")
        let filler = try HelperProcess(Self.helper, ["hold-readers", directory.url.path, "all"])
        #expect(try await filler.waitForLine(startingWith: "holding") == "holding 1024")

        do {
            let container = try directory.open()
            container.close()
            Issue.record("opening with every reader slot taken succeeded")
        } catch let error as FogError {
            #expect(error.code == .serviceUnavailable, "\(error)")
            #expect((error.retryAfterSeconds ?? 0) > 0)
            #expect(error.message.contains("reader slots"))
        }

        filler.kill()
        let container = try directory.open()
        defer { container.close() }
        #expect(try await container.privateCloudDatabase.record(for: id).recordID == id)
    }

    @Test func aTruncatedStoreFailsToOpenWithAMessageNamingTheDamage() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let container = try directory.open()
            defer { container.close() }
            let records = (0..<400).map { i -> Record in
                let record = Record(recordType: "Note")
                record["text"] = String(repeating: "\(i)", count: 100)
                return record
            }
            _ = try await container.privateCloudDatabase.modifyRecords(saving: records, deleting: [])
        }
        let data = try Data(contentsOf: directory.url.appendingPathComponent("data.mdb"))
        let pageSize = 4096
        let pages = data.count / pageSize
        #expect(pages > 16)
        for cut in Set([2, 5, pages / 3, pages / 2, pages - 1]).sorted() {
            let copy = try TemporaryDirectory("cut\(cut)")
            defer { copy.remove() }
            try data.prefix(cut * pageSize).write(to: copy.url.appendingPathComponent("data.mdb"))
            do {
                let container = try copy.open()
                container.close()
                Issue.record("a copy cut at page \(cut) of \(pages) opened")
            } catch let error as FogError {
                #expect(error.code == .internalError)
                #expect(error.message.contains("cut short"), "\(error)")
                #expect(error.message.contains("data.mdb"), "\(error)")
            }
        }
    }

    @Test func containersOfOneDirectoryReportTheDurabilityTheirCommitsGet() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let weak = try Container(identifier: "iCloud.test", directory: directory.url, configuration: .init(durability: .none))
        #expect(weak.configuration.durability == .none)
        let relaxed = try Container(identifier: "iCloud.test", directory: directory.url, configuration: .init(durability: .relaxed))
        #expect(relaxed.configuration.durability == .relaxed)
        #expect(weak.configuration.durability == .relaxed)
        let admin = try Container.Administrator(identifier: "iCloud.test", directory: directory.url)
        #expect(admin.configuration.durability == .durable)
        #expect(relaxed.configuration.durability == .durable)
        #expect(weak.configuration.durability == .durable)
        // A weaker container opened later does not weaken the others, and is told so.
        let later = try admin.container(configuration: .init(durability: .none))
        #expect(later.configuration.durability == .durable)
        for container in [weak, relaxed, later] { container.close() }
        admin.close()

        // With every container closed, the next one gets what it asks.
        let alone = try Container(identifier: "iCloud.test", directory: directory.url, configuration: .init(durability: .none))
        defer { alone.close() }
        #expect(alone.configuration.durability == .none)
    }
}
