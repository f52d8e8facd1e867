import FogStorage
import Foundation

/// Storage quotas in a modify request: each save and delete adds its bytes to
/// ``ModifyRun/usageDeltas``; ``commitUsage()`` writes the counters and refuses the request
/// when it would take an owner over their quota.
extension ModifyRun {
    /// Whose storage the zone being applied counts against: the zone owner's private storage
    /// (the user's own, or in the shared database the sharer's), or the public database's.
    var usageOwner: UsageOwner {
        switch context.scope {
        case .public: UsageOwner(scope: Database.Scope.public.rawValue, owner: "")
        case .private: UsageOwner(scope: Database.Scope.private.rawValue, owner: user)
        case .shared: UsageOwner(scope: Database.Scope.private.rawValue, owner: sharedZone?.owner ?? user)
        }
    }

    /// Writes the request's usage changes. A request that adds bytes to an owner whose new
    /// total would pass their quota fails as a whole with `quotaExceeded` (reference §7.3:
    /// quota is a whole-request error), and its transaction is abandoned: nothing is written.
    /// A request that frees bytes always goes through, even over the quota.
    mutating func commitUsage() throws {
        for (owner, delta) in usageDeltas.byOwner where delta != 0 {
            let meta = writer.core.meta
            if delta > 0, let quota = context.quota(for: owner) {
                let current = try StorageUsage.current(owner, meta: meta, in: txn)
                if current + delta > quota {
                    let whose = owner.scope == Database.Scope.public.rawValue ? "the public database" : "user \(owner.owner)"
                    throw FogError(
                        .quotaExceeded,
                        message:
                            "the request would store \(delta) more bytes for \(whose), which uses \(current) of its \(quota)-byte quota"
                    )
                }
            }
            try StorageUsage.add(delta, to: owner, meta: meta, txn: txn)
        }
        usageDeltas.removeAll()
    }
}

extension DatabaseContext {
    /// The quota of `owner`'s storage, in bytes; `nil` for none.
    func quota(for owner: UsageOwner) -> Int64? {
        owner.scope == Database.Scope.public.rawValue ? quotas.publicDatabase : quotas.perUser
    }
}

/// The storage quotas a container sets (``Container/Configuration/storageQuota``), in bytes.
struct StorageQuotas: Sendable, Hashable {
    /// Each user's private storage (records and assets of their zones, shared ones included).
    var perUser: Int64?
    /// The public database's storage.
    var publicDatabase: Int64?
}
