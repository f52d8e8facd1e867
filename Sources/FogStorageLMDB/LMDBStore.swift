internal import CLMDB
internal import CLMDBGuard
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
/// is balanced by one ``close()``. Commits get the strongest ``durability`` that any
/// open of the environment asked for, so every opener gets at least its own.
///
/// - Reads run synchronously on the caller's thread through ``read(_:)``;
///   they never block writers and see a consistent snapshot.
/// - Writes run on the environment's writer thread through ``write(_:)``
///   (async) or ``writeAndWait(_:)`` (blocking); concurrent writes are
///   committed together (group commit).
/// - A full map grows by itself and the write is retried.
/// - At most ``Configuration/maximumConcurrentReads`` reads run at once in the process;
///   more wait for one to end. Every reader slot taken (by other processes) is
///   ``StorageError/temporarilyUnavailable(_:)``, and opening clears the slots of
///   dead processes.
public final class LMDBStore: @unchecked Sendable {
    /// The directory that holds the environment's files.
    public let directory: URL
    /// The options the environment was opened with.
    public let configuration: Configuration

    let handle: OpaquePointer
    let resizeLock = ReadWriteLock()
    private let writer = WriterThread()
    private let readerPool = Mutex<[PooledReader]>([])
    /// One permit per read this process may run at once (reads nested in a read of the
    /// same thread take none).
    private let readPermits: DispatchSemaphore
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
        /// The strongest durability any open asked for: what commits get.
        var durability = Durability.durable
        /// Set when the environment can no longer be used safely (a table handle could
        /// not be opened again); every later call throws it.
        var failure: StorageError?
    }

    // MARK: - Opening and closing

    /// A reset read transaction kept for reuse (`mdb_txn_renew`); with `MDB_NOTLS`
    /// any thread may renew it. The object that wrapped it is kept too, and handed to the
    /// next read unless something still holds it (a transaction that escaped its closure,
    /// which a read must not let happen): a read then costs no allocation.
    private struct PooledReader: @unchecked Sendable {
        var transaction: LMDBReadTransaction
        var txn: OpaquePointer { transaction.txn }
    }

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
                    let reopened = try existing.state.withLock { state throws(StorageError) -> Bool in
                        guard !state.isClosed else { return false }
                        // Before taking a share: a failed open takes none.
                        try existing.checkTables(configuration.tables)
                        state.openCount += 1
                        if configuration.durability.strength > state.durability.strength {
                            state.durability = configuration.durability
                        }
                        return true
                    }
                    if reopened { return existing }
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
        self.readPermits = DispatchSemaphore(value: max(1, configuration.maximumConcurrentReads))
        var env: OpaquePointer?
        try lmdbCheck(mdb_env_create(&env), "create environment")
        let handle = env!
        // A damaged page makes the guarded calls fail with `damaged`, not end the process.
        fog_mdb_guard_environment(handle)
        var opened = false
        defer { if !opened { mdb_env_close(handle) } }
        try lmdbCheck(mdb_env_set_maxdbs(handle, MDB_dbi(max(32, configuration.tables.count + 8))))
        try lmdbCheck(mdb_env_set_maxreaders(handle, UInt32(configuration.maximumReaders)))
        try lmdbCheck(mdb_env_set_mapsize(handle, configuration.initialMapSize))
        // A more durable open of the same directory later changes the sync flags, on the
        // writer thread between commits (`applyDurability`). (LMDB 0.9 ignores sync flags
        // given to mdb_txn_begin.)
        try lmdbCheck(
            mdb_env_open(handle, key, UInt32(MDB_NOTLS) | Self.syncFlags(configuration.durability), 0o644), "open \(key)")
        // Slots of processes that died while reading would stay taken until every
        // process closes the store.
        var dead: Int32 = 0
        _ = mdb_reader_check(handle, &dead)
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        let mapSize = info.me_mapsize
        // Before anything reads a page through the map: a page past the end of the file
        // would stop the process with SIGBUS.
        try Self.checkFileLength(handle, info: info, directory: key)

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
            let rc = fog_mdb_dbi_open(txn, name, flags, &dbi)
            if rc != 0 {
                mdb_txn_abort(txn)
                throw LMDBError(rawValue: rc).storageError
            }
            tables[name] = Table(name: name, identifier: dbi)
        }
        try lmdbCheck(commitTransaction(txn), "commit table creation")
        self.handle = handle
        self.tables = tables
        closing.enter()
        state.withLock {
            $0.mapSize = mapSize
            $0.durability = configuration.durability
        }
        opened = true
        writer.environment = self
        writer.start()
    }

    /// Throws when an open of the environment asks for tables it was not first opened with.
    private func checkTables(_ names: [String]) throws(StorageError) {
        let missing = names.filter { tables[$0] == nil }
        guard missing.isEmpty else {
            throw .other(
                "FogStorage misuse: environment \(registryKey) opened again asking for tables \(missing) it was not first opened with; close it first"
            )
        }
    }

    /// Throws ``StorageError/corrupted(_:)`` when `data.mdb` is shorter than the pages its
    /// last committed transaction uses: the file was cut short (a truncated copy, a full
    /// disk while copying), and reading those pages through the map would crash.
    private static func checkFileLength(_ handle: OpaquePointer, info: MDB_envinfo, directory: String) throws(StorageError) {
        var stat = MDB_stat()
        try lmdbCheck(mdb_env_stat(handle, &stat), "stat \(directory)")
        let path = directory + "/data.mdb"
        let length: Int
        do {
            length = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        } catch {
            throw .other("cannot read the size of \(path): \(error)")
        }
        let pageSize = Int(stat.ms_psize)
        let needed = (info.me_last_pgno + 1) * pageSize
        if length < needed {
            throw .corrupted(
                "\(directory)/data.mdb is \(length) bytes long, but its last committed transaction (\(info.me_last_txnid)) uses \(info.me_last_pgno + 1) pages of \(pageSize) bytes (\(needed) bytes): the file was cut short"
            )
        }
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

    /// How commits reach the disk: the strongest durability that any open of the
    /// environment asked for (``configuration`` holds the first open's). Every opener
    /// gets at least the durability it asked for.
    public var durability: Durability { state.withLock { $0.durability } }

    /// The environment flags that give commits `durability`.
    static func syncFlags(_ durability: Durability) -> UInt32 {
        switch durability {
        case .durable: 0
        case .relaxed: UInt32(MDB_NOMETASYNC)
        case .none: UInt32(MDB_NOSYNC)
        }
    }

    /// Sets the environment's sync flags for `durability`. Only on the writer thread,
    /// between commits: a commit reads the flags twice (to sync the data pages, to write
    /// the meta page), and changing them in between could make the meta page durable
    /// before the pages it points at.
    func applyDurability(_ durability: Durability) {
        _ = mdb_env_set_flags(handle, UInt32(MDB_NOSYNC | MDB_NOMETASYNC), 0)
        let flags = Self.syncFlags(durability)
        if flags != 0 { _ = mdb_env_set_flags(handle, flags, 1) }
    }

    /// The error every call throws once the environment cannot be used safely, if any.
    var failure: StorageError? { state.withLock { $0.failure } }

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
    ///
    /// When ``Configuration/maximumConcurrentReads`` reads are running, waits for one to
    /// end (a read nested in a read of the same thread does not wait).
    ///
    /// - Throws: ``StorageError/temporarilyUnavailable(_:)`` when other processes hold
    ///   every reader slot of the store.
    @inline(__always)
    public func read<R>(_ body: (LMDBReadTransaction) throws -> R) throws -> R {
        let outermost = ReadDepth.enter()
        if outermost { readPermits.wait() }
        defer {
            if outermost { readPermits.signal() }
            ReadDepth.leave()
        }
        resizeLock.lockShared()
        defer { resizeLock.unlock() }
        let transaction = try acquireReader()
        defer {
            let txn = transaction.txn
            mdb_txn_reset(txn)
            let kept = readerPool.withLock { pool -> Bool in
                guard pool.count < configuration.maximumConcurrentReads else { return false }
                pool.append(PooledReader(transaction: transaction))
                return true
            }
            // Nested reads can leave more than the pool keeps: give their slots back.
            if !kept { mdb_txn_abort(txn) }
        }
        return try body(transaction)
    }

    /// Takes a reset read transaction from the pool and renews it, or begins a
    /// new one. The caller holds `resizeLock` shared.
    private func acquireReader() throws(StorageError) -> LMDBReadTransaction {
        var fullAttempts = 0
        while true {
            let (closed, failure) = state.withLock { ($0.isClosed, $0.failure) }
            if closed { throw .closed }
            if let failure { throw failure }
            if var pooled = readerPool.withLock({ $0.popLast() }) {
                let txn = pooled.txn
                let rc = mdb_txn_renew(txn)
                if rc == 0 {
                    guard isKnownUniquelyReferenced(&pooled.transaction) else {
                        return LMDBReadTransaction(txn: txn, environment: self)
                    }
                    pooled.transaction.prepareForReuse()
                    return pooled.transaction
                }
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
            if rc == MDB_READERS_FULL {
                // Other processes hold the slots this one does not: clear those of dead
                // processes, and wait a little for live ones to end their reads.
                var dead: Int32 = 0
                _ = mdb_reader_check(handle, &dead)
                fullAttempts += 1
                if dead > 0 { continue }
                if fullAttempts > 20 {
                    var slots: UInt32 = 0
                    mdb_env_get_maxreaders(handle, &slots)
                    throw .temporarilyUnavailable(
                        "every one of the \(slots) reader slots of \(registryKey)/lock.mdb is taken, by this process and others")
                }
                resizeLock.unlock()
                usleep(UInt32(min(fullAttempts, 10)) * 1000)
                resizeLock.lockShared()
                continue
            }
            try lmdbCheck(rc, "begin read transaction")
            return LMDBReadTransaction(txn: txn!, environment: self)
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
    /// `body` may run more than once (the transaction is replayed when the map grows, or
    /// when another request of its group fails), so it must keep its effects inside the
    /// transaction.
    public func write<T: Sendable>(_ body: @escaping @Sendable (LMDBWriteTransaction) throws -> T) async throws -> T {
        let box = ResultBox<T>()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = WriteJob(
                body: { txn in box.value = try body(txn) },
                complete: { result in
                    switch result {
                    case .success: continuation.resume(returning: box.take()!)
                    case .failure(let error):
                        // A body that ran before its group failed left its value: not kept
                        // past the caller's resumption either.
                        _ = box.take()
                        continuation.resume(throwing: error)
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
        return box.take()!
    }

    /// Enqueues a write whose outcome is delivered to `completion` after the commit,
    /// with no transaction open, on the environment's serial completion queue (in
    /// commit order). A completion must not wait for another write or close the
    /// environment. Nobody waits for such a write, so its body and completion are let go on
    /// that queue: neither may hold the last reference to the environment (its `close()`
    /// would then run from a write's completion, which is refused).
    public func enqueueWrite(
        _ body: @escaping (LMDBWriteTransaction) throws -> Void,
        completion: @escaping (Result<Void, any Error>) -> Void
    ) throws {
        try writer.enqueue(WriteJob(body: body, complete: completion))
    }

    // MARK: - Map size

    /// Grows the map after `MDB_MAP_FULL`. Called on the writer thread with no
    /// write transaction open.
    ///
    /// - Throws: the ``StorageError`` of LMDB's failure (the address space is
    ///   exhausted, for example). LMDB has then unmapped the old map without mapping a new
    ///   one, so the environment records the failure (``failure``) and every later call
    ///   throws it until the store is closed and opened again.
    func growMap() throws(StorageError) {
        resizeLock.lockExclusive()
        defer { resizeLock.unlock() }
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        let current = info.me_mapsize
        let step = min(current, configuration.maximumGrowthStep)
        let newSize = current + max(step, 1 << 20)
        let rc = mdb_env_set_mapsize(handle, newSize)
        if rc != 0 {
            let error = StorageError.other(
                "the map of \(registryKey) cannot grow to \(newSize) bytes (\(LMDBError(rawValue: rc))); close the store and open it again")
            state.withLock { $0.failure = error }
            throw error
        }
        state.withLock { $0.mapSize = newSize }
    }

    /// Opens again the tables whose handles a rolled-back ``LMDBWriteTransaction/replaceWithEmpty(_:)``
    /// closed. Dropping a table closes its handle at once, and rolling back the
    /// transaction that created it again closes the new one, while the table itself is
    /// still there: open it in a transaction of its own, under the same handle (the one
    /// free slot). Called on the writer thread with no write transaction open.
    ///
    /// When that fails, the environment cannot serve those tables any more: every later
    /// call throws the error (``failure``), until the environment is closed and opened again.
    func reopenTables(_ tables: [Table]) {
        guard !tables.isEmpty else { return }
        do {
            while true {
                if let failure { throw failure }
                var txn: OpaquePointer?
                let rc = mdb_txn_begin(handle, nil, 0, &txn)
                if rc == MDB_MAP_RESIZED {
                    adoptMapSize()
                    continue
                }
                try lmdbCheck(rc, "begin a transaction to reopen \(tables)")
                for table in tables {
                    var dbi: MDB_dbi = 0
                    let rc = fog_mdb_dbi_open(txn, table.name, 0, &dbi)
                    if rc != 0 || dbi != table.identifier {
                        mdb_txn_abort(txn)
                        throw StorageError.other(
                            "cannot reopen table \(table) as handle \(table.identifier) (got \(dbi)): \(LMDBError(rawValue: rc))")
                    }
                }
                try lmdbCheck(commitTransaction(txn), "reopen \(tables)")
                return
            }
        } catch {
            state.withLock {
                $0.failure = .other("the store in \(registryKey) must be closed and opened again: \(error)")
            }
        }
    }

    /// Adopts a map size that another process set (`MDB_MAP_RESIZED`).
    /// A failure leaves the environment without a map: it is recorded (``failure``).
    func adoptMapSize() {
        resizeLock.withExclusive {
            if failure != nil { return }
            let rc = mdb_env_set_mapsize(handle, 0)
            if rc != 0 {
                state.withLock {
                    $0.failure = .other(
                        "the map of \(registryKey) cannot grow to the size another process set (\(LMDBError(rawValue: rc))); close the store and open it again"
                    )
                }
                return
            }
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
            if let failure { throw failure }
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
            if let failure { throw failure }
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
            if let failure { throw failure }
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
