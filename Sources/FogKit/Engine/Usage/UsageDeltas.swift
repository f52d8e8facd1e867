/// The bytes a modify request adds to (or removes from) each owner's storage, in the order
/// the owners were first met.
///
/// A request nearly always touches one owner (a private database's user, or the public
/// database), so the owners are kept in a short array searched in order: a dictionary cost a
/// save an allocation and two hashes of the owner's name.
struct UsageDeltas {
    private(set) var entries: [(owner: UsageOwner, delta: Int64)] = []

    /// Adds `delta` bytes to `owner`'s change.
    mutating func add(_ delta: Int64, to owner: UsageOwner) {
        if let i = entries.firstIndex(where: { $0.owner == owner }) {
            entries[i].delta += delta
        } else {
            entries.append((owner, delta))
        }
    }

    /// The changes, by owner name (the order counters are written in).
    var byOwner: [(owner: UsageOwner, delta: Int64)] {
        entries.count < 2 ? entries : entries.sorted { $0.owner.owner < $1.owner.owner }
    }

    /// Forgets every change.
    mutating func removeAll() {
        entries.removeAll()
    }
}
