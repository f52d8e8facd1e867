internal import CLMDB
internal import CLMDBGuard
import FogStorage
import Foundation
import Synchronization

/// The one thread that runs an environment's write transactions.
///
/// LMDB's write lock belongs to a thread, so every write runs here. Requests
/// that arrive while a commit is in progress are committed together in the next
/// transaction (group commit), and the group pays for one commit and one `fsync`.
/// One request's failure does not touch the others: when a request fails, the
/// group is rolled back and run again with each request in a nested transaction
/// of its own (``commit(_:)``). Completions run on a serial queue after the
/// commit, in order, with no transaction open.
final class WriterThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [WriteJob] = []
    private var stopping = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    /// Runs the completions of committed groups, in commit order, so that waking
    /// the waiting tasks (a system call each) overlaps the next commit instead of
    /// delaying it.
    private let completions = DispatchQueue(label: "FogStorage.writer.completions")
    private let completionKey = DispatchSpecificKey<Bool>()
    private let started = DispatchSemaphore(value: 0)
    unowned(unsafe) var environment: LMDBStore!
    /// The durability the environment's sync flags give; only the writer thread changes them.
    private var appliedDurability: StorageDurability?
    private(set) var threadID: pthread_t?

    /// Commits performed, and requests committed, for statistics.
    let commitCount = Atomic<Int>(0)
    let requestCount = Atomic<Int>(0)

    func start() {
        completions.setSpecific(key: completionKey, value: true)
        let thread = Thread { [self] in
            threadID = pthread_self()
            started.signal()
            run()
            finished.signal()
        }
        thread.name = "FogStorage.writer"
        thread.stackSize = 8 << 20
        self.thread = thread
        thread.start()
        // `threadID` is set before anyone can ask `isCurrent`.
        started.wait()
    }

    /// Whether the caller is running a write's completion.
    var isCompletingWrites: Bool { DispatchQueue.getSpecific(key: completionKey) == true }

    /// Whether the caller is the writer thread.
    var isCurrent: Bool {
        guard let threadID else { return false }
        return pthread_equal(threadID, pthread_self()) != 0
    }

    func enqueue(_ job: WriteJob) throws(StorageError) {
        condition.lock()
        if stopping {
            condition.unlock()
            throw .closed
        }
        queue.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Finishes the queued jobs and their completions, then ends the thread and waits for it.
    func stop() {
        precondition(!isCompletingWrites, "FogStorage misuse: an environment closed from a write's completion")
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
        if thread != nil { finished.wait() }
        completions.sync {}
    }

    private func run() {
        let limit = max(1, environment.configuration.maximumGroupSize)
        appliedDurability = environment.configuration.durability
        // The size and duration of the last group, for gathering the next one.
        var lastGroup = 1
        var lastCommitSeconds = 0.0
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty && stopping {
                condition.unlock()
                return
            }
            if queue.count < min(lastGroup, limit), !queue[0].alone, !stopping {
                // The writers of the last group were just woken by its commit and are likely
                // sending their next requests. Without waiting, the first of them would be
                // committed alone and the others in the group after it, and the groups would
                // alternate between one writer and the rest. Wait for them a little: until
                // as many requests as the last group held are here, at most a quarter of the
                // last commit's time (1 ms at most), so that a writer alone never waits, and
                // a group that shrinks costs one short wait.
                let deadline = Date(timeIntervalSinceNow: min(0.001, lastCommitSeconds / 4))
                while queue.count < min(lastGroup, limit), !stopping, condition.wait(until: deadline) {}
            }
            // A job that runs alone is a batch by itself; the others are grouped up to it.
            var count = 1
            if !queue[0].alone {
                while count < min(limit, queue.count), !queue[count].alone { count += 1 }
            }
            let batch: [WriteJob]
            if count == queue.count {
                batch = queue
                queue.removeAll(keepingCapacity: true)
            } else {
                batch = Array(queue.prefix(count))
                queue.removeFirst(count)
            }
            condition.unlock()
            let started = DispatchTime.now().uptimeNanoseconds
            let results = commit(batch)
            lastCommitSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            lastGroup = batch.count
            commitCount.add(1, ordering: .relaxed)
            requestCount.add(batch.count, ordering: .relaxed)
            completions.async {
                for (job, result) in zip(batch, results) { job.finish(result) }
            }
        }
    }

    /// Runs a group of jobs in one transaction and returns each job's outcome.
    ///
    /// A group first runs its jobs one after another directly in the transaction. Only when
    /// one of them fails is the group rolled back and run again with each job in a nested
    /// transaction of its own, so that the failure touches no other job. Nesting costs LMDB a
    /// copy of every page a job touches that an earlier job of the group had written (the
    /// leaf a new record goes to, the tail of the change log, the zone's counters): for
    /// groups of single-record saves that was a quarter of the writer's work.
    private func commit(_ jobs: [WriteJob]) -> [Result<Void, any Error>] {
        let env = environment!
        // Whether the group runs its jobs in nested transactions: after a job failed when run directly.
        var nesting = false
        while true {
            if let failure = env.failure { return Array(repeating: .failure(failure), count: jobs.count) }
            // A more durable open since the last commit: sync from this commit on.
            let durability = env.durability
            if durability != appliedDurability {
                env.applyDurability(durability)
                appliedDurability = durability
            }
            var parent: OpaquePointer?
            let rc = mdb_txn_begin(env.handle, nil, 0, &parent)
            if rc == MDB_MAP_RESIZED {
                env.adoptMapSize()
                continue
            }
            if rc != 0 { return Array(repeating: .failure(LMDBError(rawValue: rc).storageError), count: jobs.count) }
            var results: [Result<Void, any Error>] = []
            results.reserveCapacity(jobs.count)
            var mapFull = false
            var damaged = false
            // Tables recreated by the transaction: their handles must be opened again if
            // it is rolled back (only a job that runs alone may recreate).
            var recreated: [Table] = []
            if jobs.count == 1 {
                let txn = LMDBWriteTransaction(txn: parent!, environment: env, isReadOnly: false)
                txn.isAlone = jobs[0].alone
                do {
                    try jobs[0].body(txn)
                    try txn.runWritesBeforeCommit()
                    try txn.checkUsable()
                    if txn.sawMapFull { mapFull = true } else { results.append(.success(())) }
                } catch {
                    if txn.sawMapFull {
                        mapFull = true
                    } else {
                        mdb_txn_abort(parent)
                        env.reopenTables(txn.recreatedTables)
                        return [.failure(error)]
                    }
                }
                recreated = txn.recreatedTables
            } else if !nesting {
                switch runDirectly(jobs, in: parent!, env) {
                case .committable: results = Array(repeating: .success(()), count: jobs.count)
                case .mapFull: mapFull = true
                case .damaged: damaged = true
                case .failed:
                    mdb_txn_abort(parent)
                    nesting = true
                    continue
                }
            } else {
                for job in jobs {
                    if damaged { break }
                    var child: OpaquePointer?
                    let rc = mdb_txn_begin(env.handle, parent, 0, &child)
                    if rc != 0 {
                        if rc == MDB_MAP_FULL {
                            mapFull = true
                            break
                        }
                        results.append(.failure(LMDBError(rawValue: rc).storageError))
                        continue
                    }
                    let txn = LMDBWriteTransaction(txn: child!, environment: env, isReadOnly: false)
                    // A damaged page met inside a nested transaction leaves LMDB's state of the
                    // whole group undefined: nothing of the group may be committed.
                    defer { if txn.isDamaged { damaged = true } }
                    do {
                        try job.body(txn)
                        // A nested job is a transaction of its own: its held works run in it.
                        try txn.runWritesBeforeCommit()
                        // The body caught the damage error and went on: roll back all the same.
                        try txn.checkUsable()
                        if txn.sawMapFull {
                            // The body swallowed a map-full error: replay the group.
                            mdb_txn_abort(child)
                            mapFull = true
                            break
                        }
                        let rc = commitTransaction(child)
                        if rc == FOG_MDB_DAMAGED { txn.isDamaged = true }
                        if rc == MDB_MAP_FULL {
                            mapFull = true
                            break
                        }
                        results.append(rc == 0 ? .success(()) : .failure(LMDBError(rawValue: rc).storageError))
                    } catch {
                        mdb_txn_abort(child)
                        if txn.sawMapFull {
                            mapFull = true
                            break
                        }
                        results.append(.failure(error))
                    }
                }
            }
            if damaged {
                mdb_txn_abort(parent)
                env.reopenTables(recreated)
                return Array(repeating: .failure(LMDBError.damaged.storageError), count: jobs.count)
            }
            if mapFull {
                mdb_txn_abort(parent)
                env.reopenTables(recreated)
                do { try env.growMap() } catch { return Array(repeating: .failure(error), count: jobs.count) }
                continue
            }
            let commitCode = commitTransaction(parent)
            // A failed commit has rolled the transaction back.
            if commitCode != 0 { env.reopenTables(recreated) }
            if commitCode == MDB_MAP_FULL {
                do { try env.growMap() } catch { return Array(repeating: .failure(error), count: jobs.count) }
                continue
            }
            if commitCode != 0 {
                return Array(repeating: .failure(LMDBError(rawValue: commitCode).storageError), count: jobs.count)
            }
            return results
        }
    }

    /// How running a group's jobs directly in its transaction ended.
    private enum DirectRun {
        /// Every job succeeded: the transaction may be committed.
        case committable
        /// A job failed, or met an error it went on after: the group must be run nested.
        case failed
        case mapFull
        case damaged
    }

    /// Runs `jobs` one after another in `parent`, stopping at the first that fails, then the
    /// works they held until the commit (`writeBeforeCommit`), once for the group.
    private func runDirectly(_ jobs: [WriteJob], in parent: OpaquePointer, _ env: LMDBStore) -> DirectRun {
        let held = WritesBeforeCommit<LMDBWriteTransaction>()
        /// Runs `body` in `parent`, telling how it ended.
        func step(_ body: (LMDBWriteTransaction) throws -> Void) -> DirectRun {
            let txn = LMDBWriteTransaction(txn: parent, environment: env, isReadOnly: false)
            txn.writesBeforeCommit = held
            var threw = false
            do {
                try body(txn)
                try txn.checkUsable()
            } catch {
                threw = true
            }
            if txn.isDamaged { return .damaged }
            if txn.sawMapFull { return .mapFull }
            // An LMDB error the body caught and went on after may have left the transaction
            // unusable for the jobs after it; run nested, where it stays the body's own.
            if threw || txn.firstFailure != nil { return .failed }
            return .committable
        }
        for job in jobs {
            let outcome = step(job.body)
            if outcome != .committable { return outcome }
        }
        // A held work that fails is retried with its own job, nested.
        return held.isEmpty ? .committable : step { try $0.runWritesBeforeCommit() }
    }
}
