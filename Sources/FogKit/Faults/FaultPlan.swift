import Foundation

/// Faults a container injects into its own requests, to test how an app handles what
/// CloudKit can do to it: a dropped network, throttling with a retry delay, a busy zone, a
/// conflict, a full quota, a commit whose reply is lost. CloudKit itself cannot be made to
/// fail on demand; FogKit can.
///
/// A plan is a list of ``Rule``s. Each request a container's databases receive (by the
/// convenience methods or the operations alike) is matched against the rules in order;
/// the first rule that matches and whose ``Trigger`` fires decides the request's fate:
///
/// ```swift
/// container.faultPlan = FaultPlan([
///     // The first two saves are throttled; the third goes through.
///     .init(.error(.requestRateLimited, retryAfterSeconds: 0.01), requests: [.modifyRecords], trigger: .firstCalls(2)),
/// ])
/// ```
///
/// An injected error never changes stored data: the request is refused before it reads or
/// writes. The exception is ``Fault/responseLost(_:)``, which lets the write commit and then
/// reports an error, as a reply lost on the way back does; that is how an app's retries are
/// tested for idempotence. Plans are `Codable`, so `fog` can read one from a JSON file
/// (`--faults plan.json`).
public struct FaultPlan: Sendable, Hashable, Codable {
    /// The rules, tried in order.
    public var rules: [Rule]
    /// The seed of the random draws of ``Trigger/probability(_:)``, so that a test
    /// reproduces.
    public var seed: UInt64

    /// A plan with `rules`.
    public init(_ rules: [Rule] = [], seed: UInt64 = 0x5EED) {
        self.rules = rules
        self.seed = seed
    }

    /// The plan that injects nothing.
    public static let none = FaultPlan()

    /// The kinds of request a rule can match.
    public enum Request: String, Sendable, Hashable, Codable, CaseIterable {
        /// Fetching records by ID (`record(for:)`, `records(for:)`, `FetchRecordsOperation`).
        case fetchRecords
        /// Saving and deleting records (`save(_:)`, `modifyRecords`, `ModifyRecordsOperation`).
        case modifyRecords
        /// Queries and their continuations.
        case query
        /// Fetching zones.
        case fetchZones
        /// Saving and deleting zones.
        case modifyZones
        /// A database's change feed.
        case fetchDatabaseChanges
        /// A zone's change feed.
        case fetchZoneChanges
        /// The container's `accountStatus()`: an injected error makes
        /// `accountStatus(completionHandler:)` report ``AccountStatus/couldNotDetermine`` with
        /// the error. Only rules that name this kind match it (a rule for every kind does not).
        case accountStatus
    }

    /// What a rule does to a request it fires on.
    public enum Fault: Sendable, Hashable, Codable {
        /// The request fails with `code` and changes nothing; `retryAfterSeconds` is
        /// reported as ``FogError/retryAfterSeconds`` (and under ``ErrorRetryAfterKey``).
        ///
        /// In a save or delete request, codes that CloudKit reports per record
        /// (`serverRecordChanged`, `unknownItem`, `permissionFailure`, `zoneBusy`,
        /// `zoneNotFound`, `userDeletedZone`, `invalidArguments`, `constraintViolation`,
        /// `referenceViolation`) fail the matching records only, each inside
        /// `partialFailure` as a real failure would be: the other records of an atomic
        /// zone fail with `batchRequestFailed`, the rest are saved. An injected
        /// `serverRecordChanged` carries the stored record, when there is one, as
        /// ``FogError/serverRecord``. Every other code fails the whole request.
        case error(FogError.Code, retryAfterSeconds: Double? = nil)
        /// The request runs and commits; then the caller gets `code` (by default
        /// `serverResponseLost`) instead of the reply.
        case responseLost(FogError.Code = .serverResponseLost)
        /// The request runs normally, after the rule's ``Rule/latency``.
        case delayOnly
    }

    /// When a matching rule fires, counted over the requests that match it.
    public enum Trigger: Sendable, Hashable, Codable {
        /// On every matching request.
        case always
        /// On the n-th matching request only (1 is the first).
        case nthCall(Int)
        /// On the first n matching requests, then never: "fail twice, then succeed".
        case firstCalls(Int)
        /// On each matching request with probability `p` (0…1), drawn from the plan's seed.
        case probability(Double)
    }

    /// Which requests a fault applies to, and when.
    public struct Rule: Sendable, Hashable, Codable {
        /// What happens to a request the rule fires on.
        public var fault: Fault
        /// The kinds of request it matches; empty for every kind (but
        /// ``Request/accountStatus``, which a rule must name).
        public var requests: Set<Request>
        /// The databases it matches; `nil` for every database.
        public var databaseScopes: Set<Database.Scope>?
        /// The zones it matches (a request matches when it touches one of them); `nil`
        /// for every zone.
        public var zoneIDs: Set<RecordZone.ID>?
        /// The record types it matches: the types a save request saves, or a query's
        /// type. Fetches by ID, deletes, zone requests and feeds do not know record
        /// types and match only a rule without them. `nil` for every type.
        public var recordTypes: Set<Record.RecordType>?
        /// When it fires among the requests it matches.
        public var trigger: Trigger
        /// Seconds added before a request the rule fires on runs (or fails).
        public var latency: TimeInterval

        /// A rule; every filter defaults to "any".
        public init(
            _ fault: Fault, requests: Set<Request> = [], databaseScopes: Set<Database.Scope>? = nil,
            zoneIDs: Set<RecordZone.ID>? = nil, recordTypes: Set<Record.RecordType>? = nil, trigger: Trigger = .always,
            latency: TimeInterval = 0
        ) {
            self.fault = fault
            self.requests = requests
            self.databaseScopes = databaseScopes
            self.zoneIDs = zoneIDs
            self.recordTypes = recordTypes
            self.trigger = trigger
            self.latency = latency
        }
    }
}

extension Database.Scope: Codable {}
extension FogError.Code: Codable {}
