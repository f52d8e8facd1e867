import ArgumentParser
import FogKit
import Foundation

/// `fog load`: writes atomic batches into a zone, for load and crash testing.
struct LoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Write numbered atomic batches of records into a custom zone.",
        discussion: """
            Batch i saves records b<i>-r0 … b<i>-r<size-1> (record type LoadItem, field batch = i) \
            in one atomic modifyRecords request and prints `committed <i>` once the store \
            has committed it. Used to measure write throughput and by the crash test, which \
            kills this process at random moments and checks every batch is whole or absent.
            """)

    @OptionGroup var options: StoreOptions

    @Option(help: "The user to write as.")
    var user = Container.defaultUser

    @Option(help: "The custom zone to write into (created when missing).")
    var zone = "Load"

    @Option(help: "How many batches to write.")
    var batches = 1000

    @Option(help: "Records per batch.")
    var batchSize = 20

    @Option(help: "durable, relaxed or none.")
    var durability = "durable"

    func run() async throws {
        guard let durability = Container.Durability(rawValue: durability) else {
            throw ValidationError("durability must be durable, relaxed or none")
        }
        let location = try options.location
        let container = try Container(
            identifier: try Container.storedIdentifier(in: location) ?? "iCloud.fog.load",
            store: location, user: user,
            configuration: .init(durability: durability))
        defer { container.close() }
        let database = container.privateCloudDatabase
        let zone = try await database.save(RecordZone(zoneName: zone))
        let start = Date()
        for batch in 0..<batches {
            let records = (0..<batchSize).map { i -> Record in
                let record = Record(recordType: "LoadItem", recordID: Record.ID(recordName: "b\(batch)-r\(i)", zoneID: zone.zoneID))
                record["batch"] = batch
                record["payload"] = String(repeating: "x", count: 100)
                return record
            }
            _ = try await database.modifyRecords(saving: records, deleting: [], savePolicy: .allKeys, atomically: true)
            FileHandle.standardOutput.write(Data("committed \(batch)\n".utf8))
        }
        let seconds = Date().timeIntervalSince(start)
        print("wrote \(batches) batches of \(batchSize) in \(String(format: "%.3f", seconds)) s")
    }
}
