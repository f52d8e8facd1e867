import FogStorage
import Foundation

/// How many ``LMDBStore/read(_:)`` calls the current thread is inside, so that a read
/// nested in another does not wait for a read permit that its own thread holds.
enum ReadDepth {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "FogStorage: no thread-specific key left")
        return key
    }()

    /// Enters a read; returns whether it is the thread's outermost one.
    @inline(__always)
    static func enter() -> Bool {
        let depth = Int(bitPattern: pthread_getspecific(key))
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: depth + 1))
        return depth == 0
    }

    /// Leaves a read entered with ``enter()``.
    @inline(__always)
    static func leave() {
        let depth = Int(bitPattern: pthread_getspecific(key))
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: depth - 1))
    }
}

extension StorageDurability {
    /// Orders durabilities: `none` < `relaxed` < `durable`.
    var strength: Int {
        switch self {
        case .none: 0
        case .relaxed: 1
        case .durable: 2
        }
    }
}
