import Foundation

/// A reader-writer lock over `pthread_rwlock_t`.
///
/// Read transactions hold it shared; growing the map holds it exclusively,
/// because LMDB allows `mdb_env_set_mapsize` only while no transaction of the
/// process is active.
final class ReadWriteLock: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        precondition(pthread_rwlock_init(lock, nil) == 0)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    @inline(__always) func lockShared() { pthread_rwlock_rdlock(lock) }
    @inline(__always) func lockExclusive() { pthread_rwlock_wrlock(lock) }
    @inline(__always) func unlock() { pthread_rwlock_unlock(lock) }

    @inline(__always)
    func withShared<R>(_ body: () throws -> R) rethrows -> R {
        lockShared()
        defer { unlock() }
        return try body()
    }

    @inline(__always)
    func withExclusive<R>(_ body: () throws -> R) rethrows -> R {
        lockExclusive()
        defer { unlock() }
        return try body()
    }
}
