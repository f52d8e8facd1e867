import FogStorage
import FogStoragePostgres
import Foundation
import Testing

/// The server going away under a store: restarts, and connections killed mid-transaction.
@Suite(.enabled(if: TestServer.enabled)) struct FaultTests {
    static let configuration = StoreConfiguration(tables: ["a"], durability: .none)

    /// A connection killed inside a write (`pg_terminate_backend` from another connection):
    /// the write throws temporarilyUnavailable, nothing of it is kept, and the store goes on.
    @Test func aConnectionKilledInsideAWriteLeavesNothing() throws {
        try TestServer.withLocation { location throws in
            let store = try PostgresStore.open(at: location, configuration: Self.configuration)
            defer { store.close() }
            let a = store.table(named: "a")
            try store.writeAndWait { txn throws in try txn.put([0], forKey: [0], in: a) }
            let schema = try PostgresAddress(location).schema
            do {
                try store.writeAndWait { txn throws in
                    for i: UInt8 in 1...10 { try txn.put([i], forKey: [i], in: a) }
                    // A read sends the waiting puts, so the server holds them uncommitted.
                    #expect(try txn.count(of: a) == 11)
                    // This transaction's backend is idle in a transaction whose last statement named the schema.
                    let killed = try TestServer.execute(
                        """
                        SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity
                        WHERE state = 'idle in transaction' AND query LIKE '%\(schema)%' AND pid <> pg_backend_pid()
                        """, at: location)
                    #expect(killed == ["true"])
                    // Wait for the server to close the connection, then write more.
                    Thread.sleep(forTimeInterval: 0.3)
                    for i: UInt8 in 11...20 { try txn.put([i], forKey: [i], in: a) }
                }
                Issue.record("a write on a killed connection committed")
            } catch let error as StorageError {
                guard case .temporarilyUnavailable(let reason) = error else {
                    Issue.record("\(error)")
                    return
                }
                #expect(reason.contains("PostgreSQL at"), "\(reason)")
            }
            let keys = try store.read { txn throws in
                var keys: [[UInt8]] = []
                try txn.scan(a) { k, _ in
                    keys.append(Array(k))
                    return true
                }
                return keys
            }
            #expect(keys == [[0]], "nothing of the killed write")
            try store.writeAndWait { txn throws in try txn.put([1], forKey: [1], in: a) }
            #expect(try store.read { try $0.count(of: a) } == 2)
        }
    }

    /// The server stops (`pg_ctl -m fast stop`) and starts again under an open store: calls
    /// throw temporarilyUnavailable meanwhile, and work again afterwards without reopening.
    ///
    /// On a server of its own (`scripts/postgres start`), so that the restart does not break the
    /// tests running at the same time on the shared one.
    @Test func aServerRestartIsSurvivedWithoutReopening() throws {
        let server = try PrivateServer.start()
        defer { server.remove() }
        try TestServer.withLocation(on: server.url) { location throws in
            let store = try PostgresStore.open(at: location, configuration: Self.configuration)
            defer { store.close() }
            let a = store.table(named: "a")
            try store.writeAndWait { txn throws in try txn.put([1], forKey: [1], in: a) }
            #expect(try store.read { try $0.value(forKey: [1], in: a) } == [1])

            try server.ctl("-m", "fast", "-w", "stop")
            for _ in 0..<3 {
                #expect(throws: StorageError.self) { try store.read { try $0.value(forKey: [1], in: a) } }
                do {
                    try store.writeAndWait { txn throws in try txn.put([2], forKey: [2], in: a) }
                    Issue.record("a write succeeded with the server stopped")
                } catch StorageError.temporarilyUnavailable(let reason) {
                    #expect(reason.contains("PostgreSQL at"), "\(reason)")
                } catch {
                    Issue.record("\(error)")
                }
            }
            #expect(!PostgresStore.storeExists(at: location))

            try server.ctl("-l", server.directory + "/server.log", "-w", "start")
            #expect(try store.read { try $0.value(forKey: [1], in: a) } == [1])
            try store.writeAndWait { txn throws in try txn.put([2], forKey: [2], in: a) }
            #expect(try store.read { try $0.count(of: a) } == 2)
            #expect(PostgresStore.storeExists(at: location))
        }
    }
}

/// A throwaway server of one test, made by `scripts/postgres start`.
struct PrivateServer {
    let url: URL
    let data: String
    let ctl: [String]
    var directory: String { (data as NSString).deletingLastPathComponent }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/postgres").path

    /// Starts one; records an issue and throws when that fails.
    static func start() throws -> PrivateServer {
        let output = try run(["/bin/bash", script, "start"])
        var values: [String: String] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("export ") {
            let assignment = line.dropFirst("export ".count)
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
                .trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        guard let url = values["FOG_TEST_POSTGRES_URL"].flatMap(URL.init(string:)), let data = values["FOG_TEST_POSTGRES_DATA"],
            let ctl = values["FOG_TEST_POSTGRES_CTL"]
        else {
            Issue.record("scripts/postgres start printed no server: \(output)")
            throw StorageError.notFound
        }
        return PrivateServer(url: url, data: data, ctl: ctl.split(separator: " ").map(String.init))
    }

    /// Runs pg_ctl on the server with `arguments`.
    func ctl(_ arguments: String...) throws {
        _ = try Self.run(ctl + ["-D", data] + arguments)
    }

    /// Stops the server and removes its directory.
    func remove() {
        _ = try? Self.run(["/usr/bin/env", "FOG_TEST_POSTGRES_DATA=\(data)", "/bin/bash", Self.script, "stop"])
    }

    /// Runs `command` (its output to a file), waiting with `waitpid`: Foundation's `Process`
    /// on Linux waits for descriptors that a server started by the command keeps open.
    @discardableResult
    static func run(_ command: [String]) throws -> String {
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("fog-postgres-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: outputFile) }
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = ["/usr/bin/env"] + command
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/usr/bin/env", &actions, nil, &argv, environ)
        guard rc == 0 else { throw StorageError.other("cannot run \(command): \(rc)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let output = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw StorageError.other("\(command.joined(separator: " ")) exited with status \(status): \(output)")
        }
        return output
    }
}
