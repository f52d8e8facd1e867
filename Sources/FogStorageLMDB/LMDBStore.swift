internal import CLMDB
import FogStorage
import Foundation
import Synchronization

/// An LMDB environment: one directory holding `data.mdb` and `lock.mdb`, with
/// its tables, its readers and its one writer thread. FogStorage's ``KeyValueStore``
/// over LMDB.
///
/// Open environments with ``open(directory:configuration:)``. Opening a
/// directory that this process already has open hands back the same
/// environment (LMDB forbids opening one file twice in a process); each `open`
/// is balanced by one ``close()``.
///
/// - Reads run synchronously on the caller's thread through ``read(_:)``;
///   they never block writers and see a consistent snapshot.
/// - Writes run on the environment's writer thread through ``write(_:)``
///   (async) or ``writeAndWait(_:)`` (blocking); concurrent writes are
///   committed together (group commit).
/// - A full map grows by itself and the write is retried.
public final class LMDBStore: @unchecked Sendable {
    /// The directory that holds the environment's files.
    public let directory: URL
    /// The options the environment was opened with.
    public let configuration: Configuration

    let handle: OpaquePointer
    let resizeLock = ReadWriteLock()
    private let writer = WriterThread()
    private let readerPool = Mutex<[PooledReader]>([])
    private let tables: [String: Table]
    private let state = Mutex(State())
    private let registryKey: String
    /// Left once the environment's files are closed; `open` of the same directory
    /// waits on it while a close is finishing.
    private let closing = DispatchGroup()

    private struct State {
        var openCount = 1
        var isClosed = false
        var mapSize = 0
    }

    // MARK: - Opening and closing

    /// A reset read transaction kept for reuse (`mdb_txn_renew`); with `MDB_NOTLS`
    /// any thread may renew it.
    private struct PooledReader: @unchecked Sendable { let txn: OpaquePointer }

    private static let registry = Mutex<[String: LMDBStore]>([:])

    /// Opens the environment in `directory`, creating the directory and the files
    /// when missing, or returns the environment this process already has open there.
    ///
    /// - Throws: ``StorageError`` when the files cannot be opened (for example
    ///   ``StorageError/incompatible`` for a file that is not an LMDB environment), or a
    ///   Foundation error when the directory cannot be created.
    public static func open(directory: URL, configuration: Configuration = Configuration()) throws -> LMDBStore {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = directory.standardizedFileURL.resolvingSymlinksInPath().path
        while true {
            let outcome = try registry.withLock { registry -> LMDBStore? in
                if let existing = registry[key] {
                    let reopened = existing.state.withLock { state -> Bool in
                        guard !state.isClosed else { return false }
                        state.openCount += 1
                        return true
                    }
                    if reopened {
                        try existing.openMissingTables(configuration.tables)
                        return existing
                    }
                    // Its last close is still finishing: wait for it outside the lock.
                    return nil
                }
                let environment = try LMDBStore(directory: directory, key: key, configuration: configuration)
                registry[key] = environment
                return environment
            }
            if let outcome { return outcome }
            let closingEnvironment = registry.withLock { $0[key] }
            closingEnvironment?.closing.wait()
        }
    }

    private init(directory: URL, key: String, configuration: Configuration) throws {
        self.directory = directory
        self.configuration = configuration
        self.registryKey = key
        var env: OpaquePointer?
        try lmdbCheck(mdb_env_create(&env), "create environment")
        let handle = env!
        var opened = false
        defer { if !opened { mdb_env_close(handle) } }
        try lmdbCheck(mdb_env_set_maxdbs(handle, MDB_dbi(max(32, configuration.tables.count + 8))))
        try lmdbCheck(mdb_env_set_maxreaders(handle, UInt32(configuration.maximumReaders)))
        try lmdbCheck(mdb_env_set_mapsize(handle, configuration.initialMapSize))
        var flags = UInt32(MDB_NOTLS)
        switch configuration.durability {
        case .durable: break
        case .relaxed: flags |= UInt32(MDB_NOMETASYNC)
        case .none: flags |= UInt32(MDB_NOSYNC)
        }
        try lmdbCheck(mdb_env_open(handle, key, flags, 0o644), "open \(key)")
        var dead: Int32 = 0
        _ = mdb_reader_check(handle, &dead)
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        let mapSize = info.me_mapsize

        // Open (and create) the tables in one write transaction on this thread;
        // the writer thread is not running yet.
        var txn: OpaquePointer?
        try lmdbCheck(mdb_txn_begin(handle, nil, 0, &txn), "begin")
        var tables: [String: Table] = [:]
        for name in Set(configuration.tables) {
            var dbi: MDB_dbi = 0
            // The layout only applies to a table this creates: LMDB opens an existing table
            // with the flags stored in it, whatever these say.
            let flags = (configuration.createsMissingTables ? UInt32(MDB_CREATE) : 0) | configuration.layout(ofTable: name).lmdbFlags
            let rc = mdb_dbi_open(txn, name, flags, &dbi)
            if rc != 0 {
                mdb_txn_abort(txn)
                throw LMDBError(rawValue: rc).storageError
            }
            tables[name] = Table(name: name, identifier: dbi)
        }
        try lmdbCheck(mdb_txn_commit(txn), "commit table creation")
        self.handle = handle
        self.tables = tables
        closing.enter()
        state.withLock { $0.mapSize = mapSize }
        opened = true
        writer.environment = self
        writer.start()
    }

    private func openMissingTables(_ names: [String]) throws {
        let missing = names.filter { tables[$0] == nil }
        precondition(
            missing.isEmpty,
            "FogStorage misuse: environment \(registryKey) reopened asking for tables \(missing) it was not opened with"
        )
    }

    /// Balances one ``open(directory:configuration:)``. The last close finishes the
    /// queued writes, stops the writer thread and closes the files. Further calls
    /// on a closed environment throw ``StorageError/closed``.
    public func close() {
        let last = state.withLock { state -> Bool in
            guard !state.isClosed else { return false }
            state.openCount -= 1
            if state.openCount == 0 { state.isClosed = true }
            return state.openCount == 0
        }
        guard last else { return }
        precondition(!writer.isCurrent, "FogStorage misuse: close() called from inside a write")
        // The registry keeps this (closing) environment until its files are closed,
        // so an `open` of the same directory waits instead of opening the file twice.
        writer.stop()
        resizeLock.withExclusive {
            for reader in readerPool.withLock({ pool in
                defer { pool.removeAll() }
                return pool
            }) {
                mdb_txn_abort(reader.txn)
            }
            mdb_env_close(handle)
        }
        Self.registry.withLock { registry in
            if registry[registryKey] === self { registry[registryKey] = nil }
        }
        closing.leave()
    }

    /// Whether ``close()`` has closed the environment.
    public var isClosed: Bool { state.withLock { $0.isClosed } }

    // MARK: - Tables

    /// The table named `name`, which must be one of ``Configuration/tables``.
    public func table(named name: String) -> Table {
        guard let table = tables[name] else {
            preconditionFailure("FogStorage misuse: table \(name) was not in the environment's configuration")
        }
        return table
    }

    // MARK: - Reading

    /// Runs `body` in a read-only snapshot on the calling thread.
    ///
    /// Keep the closure short and synchronous: it holds a reader slot and pins
    /// the snapshot's pages. Do not wait for a write inside it.
    @inline(__always)
    public func read<R>(_ body: (LMDBReadTransaction) throws -> R) throws -> R {
        resizeLock.lockShared()
        defer { resizeLock.unlock() }
        let txn = try acquireReader()
        defer {
            mdb_txn_reset(txn)
            readerPool.withLock { $0.append(PooledReader(txn: txn)) }
        }
        return try body(LMDBReadTransaction(txn: txn, environment: self))
    }

    /// Takes a reset read transaction from the pool and renews it, or begins a
    /// new one. The caller holds `resizeLock` shared.
    private func acquireReader() throws(StorageError) -> OpaquePointer {
        if state.withLock({ $0.isClosed }) { throw .closed }
        while true {
            if let txn = readerPool.withLock({ $0.popLast() })?.txn {
                let rc = mdb_txn_renew(txn)
                if rc == 0 { return txn }
                mdb_txn_abort(txn)
                if rc == MDB_MAP_RESIZED {
                    try adoptMapSizeWhileReading()
                    continue
                }
                try lmdbCheck(rc, "renew read transaction")
            }
            var txn: OpaquePointer?
            let rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn)
            if rc == MDB_MAP_RESIZED {
                try adoptMapSizeWhileReading()
                continue
            }
            try lmdbCheck(rc, "begin read transaction")
            return txn!
        }
    }

    private func adoptMapSizeWhileReading() throws(StorageError) {
        resizeLock.unlock()
        adoptMapSize()
        resizeLock.lockShared()
    }

    // MARK: - Writing

    /// Runs `body` in a write transaction on the writer thread and commits it.
    ///
    /// If `body` throws, nothing it wrote is kept and the error is rethrown.
    /// `body` may run more than once (when the map grows the transaction is
    /// replayed), so it must keep its effects inside the transaction.
    public func write<T: Sendable>(_ body: @escaping @Sendable (LMDBWriteTransaction) throws -> T) async throws -> T {
        let box = ResultBox<T>()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = WriteJob(
                body: { txn in box.value = try body(txn) },
                complete: { result in
                    switch result {
                    case .success: continuation.resume(returning: box.value!)
                    case .failure(let error): continuation.resume(throwing: error)
                    }
                })
            do { try writer.enqueue(job) } catch { continuation.resume(throwing: error) }
        }
    }

    /// Runs `body` in a write transaction on the writer thread, blocking the
    /// calling thread until the commit. Do not call it from a read or write closure.
    public func writeAndWait<T>(_ body: @escaping (LMDBWriteTransaction) throws -> T) throws -> T {
        try waitForWrite(alone: false, body)
    }

    /// Runs `body` in a write transaction of its own, blocking the calling thread until
    /// the commit: not grouped with other requests, and not nested in another
    /// transaction. ``LMDBWriteTransaction/replaceWithEmpty(_:)`` needs one. Do not call it from a
    /// read or write closure.
    public func writeAloneAndWait<T>(_ body: @escaping (LMDBWriteTransaction) throws -> T) throws -> T {
        try waitForWrite(alone: true, body)
    }

    private func waitForWrite<T>(alone: Bool, _ body: @escaping (LMDBWriteTransaction) throws -> T) throws -> T {
        precondition(
            !writer.isCurrent && !writer.isCompletingWrites,
            "FogStorage misuse: writeAndWait called from inside a write or a write's completion")
        let box = ResultBox<T>()
        let outcome = ResultBox<Result<Void, any Error>>()
        let done = DispatchSemaphore(value: 0)
        let job = WriteJob(
            alone: alone,
            body: { txn in box.value = try body(txn) },
            complete: { result in
                outcome.value = result
                done.signal()
            })
        try writer.enqueue(job)
        done.wait()
        try outcome.value!.get()
        return box.value!
    }

    /// Enqueues a write whose outcome is delivered to `completion` after the commit,
    /// with no transaction open, on the environment's serial completion queue (in
    /// commit order). A completion must not wait for another write or close the
    /// environment.
    public func enqueueWrite(
        _ body: @escaping (LMDBWriteTransaction) throws -> Void,
        completion: @escaping (Result<Void, any Error>) -> Void
    ) throws {
        try writer.enqueue(WriteJob(body: body, complete: completion))
    }

    // MARK: - Map size

    /// Grows the map after `MDB_MAP_FULL`. Called on the writer thread with no
    /// write transaction open.
    func growMap() {
        resizeLock.withExclusive {
            var info = MDB_envinfo()
            mdb_env_info(handle, &info)
            let current = info.me_mapsize
            let step = min(current, configuration.maximumGrowthStep)
            let newSize = current + max(step, 1 << 20)
            let rc = mdb_env_set_mapsize(handle, newSize)
            precondition(rc == 0, "FogStorage: cannot grow the map to \(newSize) bytes: \(LMDBError(rawValue: rc))")
            state.withLock { $0.mapSize = newSize }
        }
    }

    /// Opens again the tables whose handles a rolled-back ``LMDBWriteTransaction/replaceWithEmpty(_:)``
    /// closed. Dropping a table closes its handle at once, and rolling back the
    /// transaction that created it again closes the new one, while the table itself is
    /// still there: open it in a transaction of its own, under the same handle (the one
    /// free slot). Called on the writer thread with no write transaction open.
    func reopenTables(_ tables: [Table]) {
        guard !tables.isEmpty else { return }
        while true {
            var txn: OpaquePointer?
            let rc = mdb_txn_begin(handle, nil, 0, &txn)
            if rc == MDB_MAP_RESIZED {
                adoptMapSize()
                continue
            }
            precondition(rc == 0, "FogStorage: cannot begin a transaction to reopen \(tables): \(LMDBError(rawValue: rc))")
            for table in tables {
                var dbi: MDB_dbi = 0
                let rc = mdb_dbi_open(txn, table.name, 0, &dbi)
                precondition(
                    rc == 0 && dbi == table.identifier,
                    "FogStorage: cannot reopen table \(table) as handle \(table.identifier) (got \(dbi)): \(LMDBError(rawValue: rc))")
            }
            let commit = mdb_txn_commit(txn)
            precondition(commit == 0, "FogStorage: cannot reopen \(tables): \(LMDBError(rawValue: commit))")
            return
        }
    }

    /// Adopts a map size that another process set (`MDB_MAP_RESIZED`).
    func adoptMapSize() {
        resizeLock.withExclusive {
            _ = mdb_env_set_mapsize(handle, 0)
            var info = MDB_envinfo()
            mdb_env_info(handle, &info)
            state.withLock { $0.mapSize = info.me_mapsize }
        }
    }

    // MARK: - Maintenance

    /// Facts about the environment, for tools and tests.
    public struct Statistics: Sendable, Hashable {
        /// The current size of the memory map, in bytes.
        public var mapSize: Int
        /// The size of `data.mdb`, in bytes.
        public var fileSize: Int
        /// The id of the last committed transaction.
        public var lastTransactionID: Int
        /// The page size, in bytes.
        public var pageSize: Int
        /// Pages in use (the highest page number plus one).
        public var pagesUsed: Int
        /// Write transactions committed by this process, and requests in them.
        public var commits: Int, writeRequests: Int
    }

    /// Current facts about the environment.
    public func statistics() throws -> Statistics {
        try resizeLock.withShared {
            if isClosed { throw StorageError.closed }
            var info = MDB_envinfo()
            mdb_env_info(handle, &info)
            var stat = MDB_stat()
            mdb_env_stat(handle, &stat)
            let size =
                (try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("data.mdb").path)[.size] as? Int) ?? 0
            return Statistics(
                mapSize: info.me_mapsize, fileSize: size, lastTransactionID: info.me_last_txnid,
                pageSize: Int(stat.ms_psize), pagesUsed: info.me_last_pgno + 1,
                commits: writer.commitCount.load(ordering: .relaxed), writeRequests: writer.requestCount.load(ordering: .relaxed))
        }
    }

    /// Flushes the data to disk, whatever the durability setting.
    public func sync() throws {
        try resizeLock.withShared {
            if isClosed { throw StorageError.closed }
            try lmdbCheck(mdb_env_sync(handle, 1), "sync")
        }
    }

    /// Writes a consistent copy of the environment into the empty or missing
    /// directory `destination` while readers and writers go on.
    public func copy(to destination: URL, compact: Bool = true) throws {
        if isClosed { throw StorageError.closed }
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        try resizeLock.withShared {
            if isClosed { throw StorageError.closed }
            try lmdbCheck(mdb_env_copy2(handle, destination.path, compact ? UInt32(MDB_CP_COMPACT) : 0), "copy")
        }
    }

    deinit {
        if !state.withLock({ $0.isClosed }) {
            writer.stop()
            for reader in readerPool.withLock({ $0 }) { mdb_txn_abort(reader.txn) }
            mdb_env_close(handle)
            closing.leave()
        }
    }
}
