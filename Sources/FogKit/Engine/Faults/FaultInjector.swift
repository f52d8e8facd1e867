import Foundation
import Synchronization

/// A container's fault plan at work: matches each request against the plan's rules,
/// counts the matches for the triggers, and says what to do (see ``FaultPlan``).
///
/// Each container owns one; its databases hand it to the engine in their
/// ``DatabaseContext``, and every engine service asks it as a request arrives, next to the
/// access policy, so that the convenience methods and the operations see the same faults.
final class FaultInjector: Sendable {
    private struct State {
        var plan = FaultPlan.none
        /// Matching requests seen per rule, for the triggers.
        var matches: [Int] = []
        var random: UInt64 = 0
    }

    private let state = Mutex(State())
    /// Whether the plan has rules: requests check this first, without a lock.
    private let active = Atomic(false)

    /// Whether the plan has any rules.
    var isActive: Bool { active.load(ordering: .acquiring) }

    /// The plan; setting one starts its counts and random draws afresh.
    var plan: FaultPlan {
        get { state.withLock { $0.plan } }
        set {
            state.withLock {
                $0 = State(plan: newValue, matches: Array(repeating: 0, count: newValue.rules.count), random: newValue.seed)
            }
            active.store(!newValue.rules.isEmpty, ordering: .releasing)
        }
    }

    /// What a request that a rule fired on must do besides running.
    struct Injection {
        /// The error of each matching item of a save or delete request (per-item codes).
        var itemError: FogError?
        /// The rule's zone and type filters, to pick the matching items.
        var zoneIDs: Set<RecordZone.ID>?
        var recordTypes: Set<String>?
        /// The error reported after a write commits (a lost reply).
        var lostReply: FogError?

        /// Whether a save of `recordType` in `zoneID` (or a delete, `recordType` nil) is one
        /// the rule's item error applies to.
        func matches(zoneID: RecordZone.ID, recordType: String?) -> Bool {
            if let zoneIDs, !zoneIDs.contains(zoneID) { return false }
            if let recordTypes { return recordType.map(recordTypes.contains) ?? false }
            return true
        }
    }

    /// Codes CloudKit reports per record inside a partial failure.
    static let itemCodes: Set<FogError.Code> = [
        .serverRecordChanged, .unknownItem, .permissionFailure, .zoneBusy, .zoneNotFound, .userDeletedZone, .invalidArguments,
        .constraintViolation, .referenceViolation,
    ]

    /// Matches a request against the plan. Sleeps the fired rule's latency; throws its
    /// error when it fails the whole request (or is a lost reply of a request that writes
    /// nothing); returns what the caller must do for item errors and lost replies.
    func arrive(
        _ request: FaultPlan.Request, scope: Database.Scope, zones: [RecordZone.ID], recordTypes: Set<String>?,
        writes: Bool
    ) throws(FogError) -> Injection? {
        let zoneSet = Set(zones)
        let fired: FaultPlan.Rule? = state.withLock { s in
            for (i, rule) in s.plan.rules.enumerated() {
                guard rule.requests.isEmpty || rule.requests.contains(request) else { continue }
                if request == .accountStatus, !rule.requests.contains(request) { continue }
                if let scopes = rule.databaseScopes, !scopes.contains(scope) { continue }
                if let ids = rule.zoneIDs, ids.isDisjoint(with: zoneSet) { continue }
                if let types = rule.recordTypes {
                    guard let recordTypes, !types.isDisjoint(with: recordTypes) else { continue }
                }
                s.matches[i] += 1
                let n = s.matches[i]
                let fires: Bool
                switch rule.trigger {
                case .always: fires = true
                case .nthCall(let k): fires = n == k
                case .firstCalls(let k): fires = n <= k
                case .probability(let p): fires = Self.draw(&s.random) < p
                }
                if fires { return rule }
            }
            return nil
        }
        guard let rule = fired else { return nil }
        if rule.latency > 0 { Thread.sleep(forTimeInterval: rule.latency) }
        switch rule.fault {
        case .delayOnly:
            return nil
        case .error(let code, let retryAfterSeconds):
            let error = FogError(
                code, message: "injected by the container's fault plan (\(request.rawValue))", retryAfterSeconds: retryAfterSeconds)
            guard request == .modifyRecords, Self.itemCodes.contains(code) else { throw error }
            return Injection(itemError: error, zoneIDs: rule.zoneIDs, recordTypes: rule.recordTypes)
        case .responseLost(let code):
            let error = FogError(
                code, message: "injected by the container's fault plan: the \(request.rawValue) request ran, its reply was lost")
            guard writes else { throw error }
            return Injection(lostReply: error)
        }
    }

    /// A uniform draw in 0..<1 (SplitMix64).
    private static func draw(_ state: inout UInt64) -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
    }
}

extension DatabaseContext {
    /// Asks the container's fault plan about a request that arrives (see
    /// ``FaultInjector/arrive(_:scope:zones:recordTypes:writes:)``); nothing without a plan.
    /// The zones and types are only worked out when the container has a plan.
    func injectFaults(
        _ request: FaultPlan.Request, zones: @autoclosure () -> [RecordZone.ID],
        recordTypes: @autoclosure () -> Set<String>? = nil, writes: Bool = false
    ) throws(FogError) -> FaultInjector.Injection? {
        guard let faults, faults.isActive else { return nil }
        return try faults.arrive(request, scope: scope, zones: zones(), recordTypes: recordTypes(), writes: writes)
    }
}
