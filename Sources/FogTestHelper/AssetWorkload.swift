import FogKit
import Foundation

/// The asset files of the crash test: variant `k` holds `1024 × (k mod 8 + 1) + k` bytes of a
/// pattern of `k`, so a check can tell every variant's bytes apart.
func assetVariantBytes(_ k: Int) -> Data {
    Data((0..<(1024 * (k % 8 + 1) + k)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ k &* 7) })
}

/// `FogTestHelper asset-workload <directory> <sources>`: writes the asset variants into
/// `sources`, then saves, replaces and deletes records holding them (in the private
/// database's default zone of container `iCloud.fog.assets`, records `r0` to `r23`, durable
/// commits) until killed, printing `committed <n>` after each request. Each record holds
/// variant `v` in `file` and variants `v + 1`, `v + 2` (modulo 48) in the list `files`, with
/// `v` in `variant`; the variants repeat across records, so files are shared, and at any
/// moment many are referenced by no record, so their files must be gone.
func assetWorkload(directory: String, sources: String) async throws {
    let variants = 48
    let folder = URL(fileURLWithPath: sources, isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let files = try (0..<variants).map { k -> URL in
        let url = folder.appendingPathComponent("variant\(k)")
        try assetVariantBytes(k).write(to: url)
        return url
    }
    let admin = try Container.Administrator(identifier: "iCloud.fog.assets", directory: URL(fileURLWithPath: directory, isDirectory: true))
    let container = try admin.container(user: Container.defaultUser)
    let database = container.privateCloudDatabase
    var generator = SystemRandomNumberGenerator()
    var n = 0
    while true {
        n += 1
        var saves: [Record] = []
        var deletes: [Record.ID] = []
        var used: Set<String> = []
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            let name = "r\(Int.random(in: 0..<24, using: &generator))"
            guard used.insert(name).inserted else { continue }
            if Int.random(in: 0..<4, using: &generator) == 0 {
                deletes.append(Record.ID(recordName: name))
            } else {
                let v = Int.random(in: 0..<variants, using: &generator)
                let record = Record(recordType: "Doc", recordID: Record.ID(recordName: name))
                record["variant"] = Int64(v)
                record["file"] = Asset(fileURL: files[v])
                record["files"] = [Asset(fileURL: files[(v + 1) % variants]), Asset(fileURL: files[(v + 2) % variants])]
                saves.append(record)
            }
        }
        // Non-atomic: deleting a record that does not exist fails alone.
        _ = try await database.modifyRecords(saving: saves, deleting: deletes, savePolicy: .allKeys, atomically: false)
        FileHandle.standardOutput.write(Data("committed \(n)\n".utf8))
    }
}
