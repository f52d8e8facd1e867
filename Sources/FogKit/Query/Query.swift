import Foundation
import Synchronization

/// A query for records of one type (CloudKit's `CKQuery`).
///
/// A query names a record type and a ``QueryPredicate``, and may sort its results:
///
/// ```swift
/// let query = Query(recordType: "Post",
///                   predicate: try QueryPredicate(format: "author == %@", authorReference))
/// query.sortDescriptors = [Query.SortDescriptor(key: "createdAt", ascending: false)]
/// let (matches, cursor) = try await database.records(matching: query, resultsLimit: 50)
/// ```
///
/// Run it with ``Database/records(matching:inZoneWith:desiredKeys:resultsLimit:)`` or a
/// ``QueryOperation``. A query is a reference type, like `CKQuery`, so that
/// ``sortDescriptors`` can be set on a `let`; it is safe to share between tasks, and reusable
/// across operations, databases and zones.
public final class Query: Sendable, CustomStringConvertible {
    /// The type of the records to match.
    public let recordType: Record.RecordType
    /// The condition records must meet.
    public let predicate: QueryPredicate

    private let sorts: Mutex<[SortDescriptor]?>

    /// The order of the results: by the first descriptor, then the second, and so on.
    /// `nil` (the default) leaves the order to FogKit (see <doc:Queries>).
    public var sortDescriptors: [SortDescriptor]? {
        get { sorts.withLock { $0 } }
        set { sorts.withLock { $0 = newValue } }
    }

    /// Creates a query for records of `recordType` that match `predicate`.
    ///
    /// Use `QueryPredicate(value: true)` (or `"TRUEPREDICATE"`) to match every record of
    /// the type.
    public init(recordType: Record.RecordType, predicate: QueryPredicate) {
        self.recordType = recordType
        self.predicate = predicate
        self.sorts = Mutex(nil)
    }

    /// `<Query Post: score > 3, sorted by -createdAt>`.
    public var description: String {
        var text = "<Query \(recordType): \(predicate)"
        if let sorts = sortDescriptors, !sorts.isEmpty {
            text += ", sorted by " + sorts.map(\.description).joined(separator: ", ")
        }
        return text + ">"
    }
}

extension Query {
    /// How to order query results: by a field, ascending or descending, or by distance
    /// from a location (CloudKit's `NSSortDescriptor` and `CKLocationSortDescriptor`).
    ///
    /// Linux Foundation has no key-based `NSSortDescriptor`, so FogKit has its own;
    /// ``LocationSortDescriptor`` is another name for this type, so that
    /// `LocationSortDescriptor(key:relativeLocation:)` reads as it does with CloudKit.
    ///
    /// The field must be sortable (or, for a distance, a location with an index) in the
    /// production environment. Records without a value for the field come first in
    /// ascending order and last in descending order; by distance they come last.
    public struct SortDescriptor: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The field to sort by: a user field, `creationDate` or `modificationDate`.
        public let key: Record.FieldKey
        /// Whether smaller values come first. Always `true` for a distance.
        public let ascending: Bool
        /// For a distance sort, the location distances are measured from.
        public let relativeLocation: Location?

        /// Sorts by the field `key`, ascending (the default) or descending.
        public init(key: Record.FieldKey, ascending: Bool = true) {
            self.key = key
            self.ascending = ascending
            self.relativeLocation = nil
        }

        /// Sorts by the great-circle distance of the location field `key` from
        /// `relativeLocation`, nearest first (the order cannot be reversed, as in CloudKit).
        public init(key: Record.FieldKey, relativeLocation: Location) {
            self.key = key
            self.ascending = true
            self.relativeLocation = relativeLocation
        }

        /// `createdAt`, `-createdAt` (descending) or `location~<lat,lon>` (by distance).
        public var description: String {
            if let l = relativeLocation { return "\(key)~<\(l.latitude),\(l.longitude)>" }
            return ascending ? key : "-" + key
        }
    }
}

/// Sorts by distance from a location: `LocationSortDescriptor(key:relativeLocation:)`, as
/// CloudKit's `CKLocationSortDescriptor`. The same type as ``Query/SortDescriptor``.
public typealias LocationSortDescriptor = Query.SortDescriptor
