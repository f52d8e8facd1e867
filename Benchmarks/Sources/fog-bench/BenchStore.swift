import FogKit
import FogStorage
import FogStoragePostgres
import Foundation

/// Where a benchmark keeps its store.
///
/// - `--store DIR` or `FOG_BENCH_STORE=DIR`: an embedded store in DIR, kept afterwards and
///   reused when DIR already holds one.
/// - `--store postgres://…?schema=S`: the PostgreSQL store in schema S, kept and reused the same way.
/// - `--store postgres://…` without `schema`: a fresh schema `fogbench_…`, dropped at the end.
/// - nothing: a fresh temporary folder, removed at the end.
///
/// `FOG_BENCH_KEEP=1` keeps a fresh store for inspection.
struct BenchStore {
    /// The store.
    var location: StoreLocation
    /// Whether the store held data before this run (W1 is skipped then).
    var reused: Bool
    /// Whether the run made the store and removes it at the end.
    var isScratch: Bool

    static func resolve(_ option: String?) throws -> BenchStore {
        let environment = ProcessInfo.processInfo.environment
        let keep = environment["FOG_BENCH_KEEP"] != nil
        guard let given = option ?? environment["FOG_BENCH_STORE"] else {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fog-bench-\(UUID().uuidString)")
            return BenchStore(location: .directory(folder), reused: false, isScratch: !keep)
        }
        guard given.hasPrefix("postgres://") || given.hasPrefix("postgresql://") else {
            let location = StoreLocation.directory(URL(fileURLWithPath: given))
            return BenchStore(location: location, reused: location.storeExists(), isScratch: false)
        }
        guard var components = URLComponents(string: given) else { throw BenchError("not a URL: \(given)") }
        if components.queryItems?.contains(where: { $0.name == "schema" }) == true {
            let location = try StoreLocation.postgres(given)
            return BenchStore(location: location, reused: location.storeExists(), isScratch: false)
        }
        let schema = "fogbench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "schema", value: String(schema))]
        let location = try StoreLocation.postgres(components.string ?? given)
        return BenchStore(location: location, reused: false, isScratch: !keep)
    }

    /// The argument that names this store to a child process.
    var argument: String { location.isDirectory ? location.url.path : location.url.absoluteString }

    /// What the reference tables call the database size: `data.mdb` of an embedded store,
    /// the tables and indexes of a PostgreSQL store.
    func size(_ admin: Container.Administrator) throws -> (bytes: Int, what: String) {
        if location.isDirectory {
            let file = location.url.appendingPathComponent("data.mdb").path
            return ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int ?? 0, "data.mdb")
        }
        return (try admin.storeInfo().fileSize, "PostgreSQL relations")
    }

    /// Removes a store this run made.
    func removeIfScratch() {
        guard isScratch else { return }
        if location.isDirectory {
            try? FileManager.default.removeItem(at: location.url)
        } else {
            do { try PostgresStore.removeStore(at: location.url) } catch {
                FileHandle.standardError.write(Data("fog-bench: could not drop \(location): \(error)\n".utf8))
            }
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
