import FogKitTesting
import FogStorage
import FogStorageLMDB
import FogStoragePostgres
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
    /// Whether ``KeyValueStore/backup(to:)`` writes a copy into a directory (a server's store
    /// is backed up with the server's tools instead, and its `backup` throws).
    var backsUpToDirectory: Bool { get }
}

extension StoreBackend {
    var backsUpToDirectory: Bool { true }
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

/// PostgreSQL: a store is a schema (`conf_<uuid>`) of the server at `FOG_TEST_POSTGRES_URL`
/// (`scripts/postgres start` starts a throwaway one; `scripts/test` does it for you).
struct PostgresBackend: StoreBackend {
    typealias Store = PostgresStore
    var name: String { "PostgreSQL" }
    let server: URL
    var backsUpToDirectory: Bool { false }

    /// The server the tests use, when `FOG_TEST_POSTGRES_URL` names one.
    static let server: URL? = ProcessInfo.processInfo.environment["FOG_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : URL(string: $0) }

    func makeLocation() throws -> URL {
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false)!
        let schema = "conf_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        components.queryItems = (components.queryItems ?? []).filter { $0.name != "schema" } + [URLQueryItem(name: "schema", value: schema)]
        return components.url!
    }

    func removeLocation(_ location: URL) { try? PostgresStore.removeStore(at: location) }
}

/// A backend as a test argument.
struct Backend: Sendable, CustomTestStringConvertible {
    let backend: any StoreBackend
    var testDescription: String { backend.name }
}

/// Every implementation of the interface: PostgreSQL only when `FOG_TEST_POSTGRES_URL` names a
/// server (``postgresIsThereInCI()`` fails in CI when it does not).
let allBackends: [Backend] =
    [Backend(backend: LMDBBackend())] + (PostgresBackend.server.map { [Backend(backend: PostgresBackend(server: $0))] } ?? [])

/// In CI (`CI` set), the PostgreSQL backend must be tested: without a server the suite fails here.
@Test func postgresIsThereInCI() {
    if ProcessInfo.processInfo.environment["CI"] != nil && PostgresBackend.server == nil {
        Issue.record(
            "PostgreSQL is required in CI: set FOG_TEST_POSTGRES_URL (run the tests with scripts/test, which starts a throwaway server)")
    }
}

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
