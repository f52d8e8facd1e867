// Shared by every harness: a small store, opened once per fuzzing process, whose names,
// records, indexes and change logs give the decoders real context (name ids that resolve,
// rows a cursor can continue from).

import Foundation

@testable import FogKit

/// Runs `body` to completion from synchronous code (the fuzzer's callbacks are C functions).
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> T {
    let result = LockedBox<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value: Result<T, any Error>
        do { value = .success(try await body()) } catch { value = .failure(error) }
        result.set(value)
        done.signal()
    }
    done.wait()
    switch result.get()! {
    case .success(let value): return value
    case .failure(let error): fatalError("fuzz fixture: \(error)")
    }
}

final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ value: T) { self.value = value }
    func get() -> T { lock.withLock { value } }
    func set(_ newValue: T) { lock.withLock { value = newValue } }
}

/// The fixture store: records of type "Item" with a field of every type, a sortable and a
/// queryable index, a custom zone with a change log (saves and deletions).
final class Fixture: @unchecked Sendable {
    let directory: URL
    let admin: Container.Administrator
    let container: Container
    var database: Database { container.privateCloudDatabase }
    var engine: StoreEngine { database.engine }
    let zoneID = RecordZone.ID(zoneName: "Fuzz")

    static let shared = Fixture()

    private init() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-fuzz-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        do {
            admin = try Container.Administrator(
                identifier: "iCloud.fuzz", directory: directory, configuration: .init(durability: .none))
            container = try admin.container(user: "alice")
        } catch {
            fatalError("fuzz fixture: \(error)")
        }
        let admin = self.admin
        let database = self.database
        let zoneID = self.zoneID
        blocking {
            try await admin.setIndexes(
                ["n": [.queryable, .sortable], "title": [.queryable, .sortable, .searchable]], ofRecordType: "Item")
            _ = try await database.save(RecordZone(zoneID: zoneID))
            for zone in [RecordZone.ID.default, zoneID] {
                for i in 0..<6 { _ = try await database.save(Self.item(i, in: zone)) }
                _ = try await database.deleteRecord(withID: Record.ID(recordName: "i5", zoneID: zone))
            }
        }
        atexit { try? FileManager.default.removeItem(at: Fixture.shared.directory) }
    }

    /// Record `i<n>` with a field of every type.
    static func item(_ i: Int, in zone: RecordZone.ID) -> Record {
        let record = Record(recordType: "Item", recordID: Record.ID(recordName: "i\(i)", zoneID: zone))
        record["n"] = i
        record["title"] = "item \(i) of the fuzz fixture"
        record["score"] = Double(i) / 3
        record["when"] = Date(timeIntervalSinceReferenceDate: 800_000_000 + Double(i) * 3600)
        record["blob"] = Data([0, 1, 2, UInt8(i)])
        record["place"] = Location(latitude: 48.85 + Double(i) / 100, longitude: 2.35)
        record["owner"] = Record.Reference(recordID: Record.ID(recordName: "i0", zoneID: zone), action: .none)
        record["tags"] = ["red", "green", "t\(i)"]
        record["counts"] = [i, i + 1, -i]
        record["scores"] = [0.5, Double(i)]
        record["dates"] = [Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: Double(i))]
        record["blobs"] = [Data([1]), Data()]
        record["places"] = [Location(latitude: 0, longitude: 0)]
        record["owners"] = [Record.Reference(recordID: Record.ID(recordName: "i1", zoneID: zone), action: .deleteSelf)]
        return record
    }

    /// The encoded records of the fixture, as the store holds them.
    func storedRecords() -> [[UInt8]] {
        let engine = self.engine
        return try! engine.read { txn, _ in
            var rows: [[UInt8]] = []
            try txn.scan(engine.records, range: .all) { _, value in
                rows.append(Array(value))
                return true
            }
            return rows
        }
    }
}

/// Writes `seeds` into the folder `FOGKIT_FUZZ_WRITE_SEEDS` names, if set (how the committed
/// seed corpora were made: `FOGKIT_FUZZ_WRITE_SEEDS=Fuzz/Corpus/<harness> <binary> -runs=0`).
func writeSeedsIfAsked(_ seeds: @autoclosure () -> [[UInt8]]) {
    guard let folder = ProcessInfo.processInfo.environment["FOGKIT_FUZZ_WRITE_SEEDS"] else { return }
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for (i, seed) in seeds().enumerated() {
        _ = FileManager.default.createFile(atPath: "\(folder)/seed-\(i)", contents: Data(seed))
    }
}

/// The fuzzer's input as bytes.
@inline(__always)
func input(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
}
