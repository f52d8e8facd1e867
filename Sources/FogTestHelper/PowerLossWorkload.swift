import FogKit
import Foundation

/// `FogTestHelper powerloss-workload <directory> <durability>[+<durability>…] <writers> <batches> <records> <payload bytes>`:
/// the workload of the power-loss test. `writers` tasks write at once into the private
/// database (their requests share commits), each into its zone `W<w>`:
///
/// - batch `b` saves records `w<w>-b<b>-r<i>` atomically, then prints `ack save <w> <b>`;
/// - after every fifth batch, deletes the records of batch `b-2` atomically, then prints
///   `ack delete <w> <b-2>`;
/// - after every tenth batch, creates zone `Z<w>-<b>`, saves a record in it, deletes the
///   zone, then prints `ack zonedelete <w> <b>`.
///
/// With several durabilities, the workload writes through a container opened with the
/// first while containers opened with the others stay open on the same directory.
/// The payloads are large enough for the store's map to grow. A line is printed only
/// after the call returned, so each `ack` line is a commit the store acknowledged. Prints
/// `done` at the end and then waits to be killed. After every batch saved, each writer
/// prints `stats commits <n> requests <n> map <bytes>` (the store's commits and requests
/// so far, and its map size), so the test can tell when the map has grown.
func powerLossWorkload(_ arguments: [String]) async throws -> Never {
    // "none+durable": write through a container opened with `none` while a second
    // container on the same directory, opened with `durable`, stays open.
    let durabilities =
        arguments.count == 6 ? arguments[1].split(separator: "+").compactMap { Container.Durability(rawValue: String($0)) } : []
    guard arguments.count == 6, let durability = durabilities.first, durabilities.count == arguments[1].split(separator: "+").count,
        let writers = Int(arguments[2]), let batches = Int(arguments[3]), let recordCount = Int(arguments[4]),
        let payloadSize = Int(arguments[5])
    else {
        throw HelperError(
            description: "usage: powerloss-workload <directory> <durable|relaxed|none> <writers> <batches> <records> <payload>")
    }
    let directory = URL(fileURLWithPath: arguments[0], isDirectory: true)
    let admin = try Container.Administrator(
        identifier: "iCloud.fog.powerloss", directory: directory, configuration: .init(durability: durability))
    let container = try admin.container(user: Container.defaultUser)
    let others = try durabilities.dropFirst().map {
        try Container(identifier: "iCloud.fog.powerloss", directory: directory, configuration: .init(durability: $0))
    }
    let database = container.privateCloudDatabase
    FileHandle.standardOutput.write(
        Data(
            "durability \(container.configuration.durability) (asked \(durability), others \(others.map(\.configuration.durability)))\n"
                .utf8))
    try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<writers {
            group.addTask {
                let zone = try await database.save(RecordZone(zoneName: "W\(writer)"))
                for batch in 0..<batches {
                    let records = (0..<recordCount).map { i -> Record in
                        let record = Record(
                            recordType: "Item", recordID: Record.ID(recordName: "w\(writer)-b\(batch)-r\(i)", zoneID: zone.zoneID))
                        record["batch"] = batch
                        record["payload"] = String(repeating: Character(UnicodeScalar(UInt8(97 + (batch + i) % 26))), count: payloadSize)
                        return record
                    }
                    _ = try await database.modifyRecords(saving: records, deleting: [], savePolicy: .allKeys, atomically: true)
                    acknowledge("save \(writer) \(batch)")
                    if let info = try? admin.storeInfo() {
                        // More requests than commits: concurrent writers shared commits.
                        FileHandle.standardOutput.write(
                            Data("stats commits \(info.commits) requests \(info.writeRequests) map \(info.reservedSize)\n".utf8))
                    }
                    if batch % 5 == 4 {
                        let ids = (0..<recordCount).map {
                            Record.ID(recordName: "w\(writer)-b\(batch - 2)-r\($0)", zoneID: zone.zoneID)
                        }
                        _ = try await database.modifyRecords(saving: [], deleting: ids, atomically: true)
                        acknowledge("delete \(writer) \(batch - 2)")
                    }
                    if batch % 10 == 9 {
                        let doomed = try await database.save(RecordZone(zoneName: "Z\(writer)-\(batch)"))
                        let record = Record(recordType: "Item", recordID: Record.ID(recordName: "doomed", zoneID: doomed.zoneID))
                        record["batch"] = batch
                        _ = try await database.save(record)
                        _ = try await database.deleteRecordZone(withID: doomed.zoneID)
                        acknowledge("zonedelete \(writer) \(batch)")
                    }
                }
            }
        }
        try await group.waitForAll()
    }
    FileHandle.standardOutput.write(Data("done\n".utf8))
    while true { sleep(60) }
}

/// Prints `ack <what>` in one write, so that lines of concurrent writers do not mix.
private func acknowledge(_ what: String) {
    FileHandle.standardOutput.write(Data("ack \(what)\n".utf8))
}
