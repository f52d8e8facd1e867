import Foundation

// CloudKit's `CKQuery` and `CKQuerySubscription` take an `NSPredicate`. On Linux, Foundation
// makes only constant (`NSPredicate(value:)`) and block predicates (`NSPredicate(format:)`
// is unimplemented there and stops the process), so the sample line
// `CKQuery(recordType: "Note", predicate: NSPredicate(value: true))` is what ports. These
// initializers accept it by reading the predicate's format back in CloudKit's language.

extension QueryPredicate {
    /// Converts an `NSPredicate` by parsing its `predicateFormat` in CloudKit's predicate
    /// language, so `NSPredicate(value: true)` becomes `TRUEPREDICATE`.
    ///
    /// A predicate outside the language (a block predicate, the only other kind Linux
    /// Foundation makes) cannot fail here, because CloudKit's initializers that take one do not
    /// throw. It becomes a predicate that matches nothing and that every query and query
    /// subscription using it refuses with ``FogError/Code/invalidArguments``, naming the
    /// predicate (CloudKit raises an exception for it).
    public init(_ predicate: NSPredicate) {
        let format = predicate.predicateFormat
        if let parsed = try? QueryPredicate(format: format) {
            self = parsed
        } else {
            self.node = .value(false)
            self.rejection =
                "the NSPredicate '\(format)' is not in CloudKit's predicate language; build the condition with QueryPredicate(format:)"
        }
    }
}

extension Query {
    /// Creates a query from an `NSPredicate`, as `CKQuery(recordType:predicate:)` does; see
    /// ``QueryPredicate/init(_:)`` for which predicates work.
    @_disfavoredOverload
    public convenience init(recordType: Record.RecordType, predicate: NSPredicate) {
        self.init(recordType: recordType, predicate: QueryPredicate(predicate))
    }
}

extension QuerySubscription {
    /// Creates a query subscription from an `NSPredicate`, as CloudKit's
    /// `CKQuerySubscription(recordType:predicate:subscriptionID:options:)` does; see
    /// ``QueryPredicate/init(_:)`` for which predicates work.
    @_disfavoredOverload
    public convenience init(
        recordType: Record.RecordType, predicate: NSPredicate, subscriptionID: Subscription.ID,
        options: Options = [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion]
    ) {
        self.init(recordType: recordType, predicate: QueryPredicate(predicate), subscriptionID: subscriptionID, options: options)
    }

    /// Creates a query subscription with a generated identifier from an `NSPredicate`.
    @_disfavoredOverload
    public convenience init(
        recordType: Record.RecordType, predicate: NSPredicate,
        options: Options = [.firesOnRecordCreation, .firesOnRecordUpdate, .firesOnRecordDeletion]
    ) {
        self.init(recordType: recordType, predicate: QueryPredicate(predicate), options: options)
    }
}
