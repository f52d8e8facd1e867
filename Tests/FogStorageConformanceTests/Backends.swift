import FogKitTesting
import FogStorage
import FogStorageLMDB
import Foundation
import Testing

/// One implementation of ``KeyValueStore`` under test: where its stores live.
///
/// The conformance suite runs every test against every backend in ``allBackends``; a new
/// backend adds one conformance here and nothing else.
protocol StoreBackend: Sendable {
    /// The store type.
    associatedtype Store: KeyValueStore
    /// The backend's name, for test names.
    var name: String { get }
    /// A new place for a store, with nothing there yet.
    func makeLocation() throws -> URL
    /// Removes what stores left at `location`.
    func removeLocation(_ location: URL)
}

/// LMDB: a store is a directory.
struct LMDBBackend: StoreBackend {
    typealias Store = LMDBStore
    var name: String { "LMDB" }

    func makeLocation() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("FogStorageConformance-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func removeLocation(_ location: URL) { try? FileManager.default.removeItem(at: location) }
}

/// A backend as a test argument.
struct Backend: Sendable, CustomTestStringConvertible {
    let backend: any StoreBackend
    var testDescription: String { backend.name }
}

/// Every implementation of the interface.
let allBackends: [Backend] = [Backend(backend: LMDBBackend())]

// MARK: - Helpers

/// The tables every conformance store has: two single-value tables, a multi-value table of
/// 8-byte values and a multi-value table of values of any size.
enum Tables {
    static let a = "a"
    static let b = "b"
    static let fixed = "fixed"
    static let multi = "multi"
    static let configuration = StoreConfiguration(
        tables: [a, b, fixed, multi],
        layouts: [fixed: .multiValue(fixedSizeValues: true), multi: .multiValue(fixedSizeValues: false)],
        durability: .none)
}

/// Runs `body` with a new store of `backend` opened with `configuration`, then closes and
/// removes it.
func withStore<B: StoreBackend, R>(
    _ backend: B, configuration: StoreConfiguration = Tables.configuration, _ body: (B.Store) throws -> R
) throws -> R {
    let location = try backend.makeLocation()
    defer { backend.removeLocation(location) }
    let store = try B.Store.open(at: location, configuration: configuration)
    defer { store.close() }
    return try body(store)
}

/// The async form of ``withStore(_:configuration:_:)``.
func withStore<B: StoreBackend, R>(
    _ backend: B, configuration: StoreConfiguration = Tables.configuration, _ body: (B.Store) async throws -> R
) async throws -> R {
    let location = try backend.makeLocation()
    defer { backend.removeLocation(location) }
    let store = try B.Store.open(at: location, configuration: configuration)
    defer { store.close() }
    return try await body(store)
}

/// One entry, copied out of a scan.
struct Entry: Hashable, CustomStringConvertible {
    var key: [UInt8]
    var value: [UInt8]
    init(_ key: [UInt8], _ value: [UInt8]) {
        self.key = key
        self.value = value
    }
    var description: String { "\(key)=\(value.count > 8 ? "\(value.count) bytes" : "\(value)")" }
}

extension StorageReadTransaction {
    /// The entries of `table` within `range`, copied out.
    func entries(_ table: Table, _ range: ScanRange = .all, reverse: Bool = false, limit: Int = .max) throws -> [Entry] {
        var entries: [Entry] = []
        try scan(table, range: range, reverse: reverse) { key, value in
            entries.append(Entry(Array(key), Array(value)))
            return entries.count < limit
        }
        return entries
    }

    /// The keys of `table` within `range`.
    func keys(_ table: Table, _ range: ScanRange = .all, reverse: Bool = false) throws -> [[UInt8]] {
        try entries(table, range, reverse: reverse).map(\.key)
    }
}

/// Byte order: the order the interface promises for keys (and for the values of a key).
func byteOrder(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

/// The 8 big-endian bytes of `n`.
func be(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n.bigEndian) { Array($0) } }

struct Planned: Error, Equatable {}
