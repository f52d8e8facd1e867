import Foundation
import Synchronization

/// A saved subscription ready to match changes: its stored form and its parsed predicate.
final class ActiveSubscription: Sendable {
    let stored: StoredSubscription
    /// A query subscription's predicate.
    let predicate: PredicateNode?
    /// The equality condition ``SubscriptionIndex`` files it under: (field, value key).
    let equality: (field: String, key: String)?

    init(_ stored: StoredSubscription) {
        self.stored = stored
        if stored.type == .query, let text = stored.predicate, let parsed = try? QueryPredicate(format: text) {
            predicate = parsed.node
            equality = Self.equality(in: parsed.node)
        } else {
            predicate = stored.type == .query ? .value(false) : nil
            equality = nil
        }
    }

    /// The first `field == constant` conjunct whose constant has a ``SubscriptionIndex/valueKey(_:)``.
    private static func equality(in node: PredicateNode) -> (String, String)? {
        switch node {
        case .comparison(let key, .equal, .constant(let value)):
            return SubscriptionIndex.valueKey(value).map { (key.name, $0) }
        case .and(let nodes):
            for node in nodes { if let found = equality(in: node) { return found } }
            return nil
        default:
            return nil
        }
    }
}

/// Every saved subscription of a store, filed so that a change finds the ones that may match
/// without looking at the others: query subscriptions by (database, zone owner, record type)
/// and then by the value of one equality condition of their predicate; zone subscriptions by
/// zone; database subscriptions by owner (private) or in one list (shared, checked against the
/// subscriber's shares).
struct SubscriptionIndex: Sendable {
    struct QueryKey: Hashable {
        let scope: Int
        /// The zone owner: the subscriber in the private database, empty in the public one.
        let owner: String
        let recordType: String
    }

    struct QueryBucket {
        /// Subscriptions with no indexable equality condition: each is evaluated.
        var unconditional: [ActiveSubscription] = []
        /// field → value key → subscriptions whose predicate requires that value.
        var byEquality: [String: [String: [ActiveSubscription]]] = [:]
    }

    struct ZoneKey: Hashable {
        let owner: String
        let zoneName: String
    }

    var queries: [QueryKey: QueryBucket] = [:]
    /// Zone subscriptions of the zone's owner (private) and of its participants (shared).
    var zones: [ZoneKey: [ActiveSubscription]] = [:]
    /// Private-database subscriptions by their owner.
    var databases: [String: [ActiveSubscription]] = [:]
    /// Shared-database subscriptions of every user.
    var sharedDatabases: [ActiveSubscription] = []
    private(set) var count = 0

    init(_ subscriptions: [StoredSubscription]) {
        for stored in subscriptions {
            let active = ActiveSubscription(stored)
            count += 1
            switch stored.type {
            case .query:
                let key = QueryKey(
                    scope: stored.scope, owner: stored.scope == Database.Scope.public.rawValue ? "" : stored.subscriber,
                    recordType: stored.recordType ?? "")
                if let (field, value) = active.equality {
                    queries[key, default: QueryBucket()].byEquality[field, default: [:]][value, default: []].append(active)
                } else {
                    queries[key, default: QueryBucket()].unconditional.append(active)
                }
            case .recordZone:
                zones[ZoneKey(owner: stored.zoneOwner ?? stored.subscriber, zoneName: stored.zoneName ?? ""), default: []].append(active)
            case .database:
                if stored.scope == Database.Scope.shared.rawValue {
                    sharedDatabases.append(active)
                } else {
                    databases[stored.subscriber, default: []].append(active)
                }
            }
        }
    }

    var isEmpty: Bool { count == 0 }

    /// The query subscriptions that may match a record of `recordType` in the zone owned by
    /// `owner` (empty: the public database) with the values `value(forKey:)` gives.
    func queryCandidates(scope: Int, owner: String, recordType: String, value: (String) -> FieldValue?) -> [ActiveSubscription] {
        guard let bucket = queries[QueryKey(scope: scope, owner: owner, recordType: recordType)] else { return [] }
        var found = bucket.unconditional
        for (field, byValue) in bucket.byEquality {
            if let v = value(field), let key = Self.valueKey(v), let matches = byValue[key] { found += matches }
        }
        return found
    }

    /// Whether any subscription may concern a change to a record of `recordType` in `owner`'s
    /// zone `zoneName` (cheap: no record is read).
    func mayConcern(scope: Int, owner: String, zoneName: String, recordType: String) -> Bool {
        if queries[QueryKey(scope: scope, owner: owner, recordType: recordType)] != nil { return true }
        if scope == Database.Scope.public.rawValue { return false }
        if zones[ZoneKey(owner: owner, zoneName: zoneName)] != nil { return true }
        if zoneName == RecordZone.ID.defaultZoneName { return false }
        return databases[owner] != nil || !sharedDatabases.isEmpty
    }

    /// The key an equality condition is filed under: strings, integers and references (by
    /// record name) only; other constants are evaluated on every change.
    static func valueKey(_ value: FieldValue) -> String? {
        switch value {
        case .string(let s): "s" + s
        case .int64(let n): "i" + String(n)
        case .reference(let r): "r" + r.recordID.recordName
        default: nil
        }
    }
}

/// The store's ``SubscriptionIndex``, shared by every engine on the store and keyed by the
/// `subscriptionStamp` in `meta` (random bytes rewritten by every change to the
/// subscriptions), so a change made by any container, or another process, is seen by the next
/// write. A stamp never repeats, so an index built inside a transaction that was rolled back
/// is never mistaken for a committed one.
final class SubscriptionCache: Sendable {
    private let state = Mutex<(stamp: [UInt8], index: SubscriptionIndex)?>(nil)

    func index(stamp: [UInt8], build: () throws -> SubscriptionIndex) rethrows -> SubscriptionIndex {
        if let cached = state.withLock({ $0 }), cached.stamp == stamp { return cached.index }
        let index = try build()
        state.withLock { $0 = (stamp, index) }
        return index
    }
}

/// Wakes the listeners of a store when a commit wrote notifications.
final class NotificationSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    /// The number of signals so far.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Wakes every waiter.
    func signal() {
        let waiters = state.withLock { state in
            state.generation &+= 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the generation is past `generation`, after `timeout`, or when the task is
    /// cancelled.
    func wait(after generation: UInt64, timeout: Duration) async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter &+= 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.generation != generation || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow {
                    continuation.resume()
                    return
                }
                Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    self?.resume(id)
                }
            }
        } onCancel: {
            resume(id)
        }
    }

    private func resume(_ id: UInt64) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.resume()
    }
}
