import Foundation

/// Fetches subscriptions (CloudKit's `CKFetchSubscriptionsOperation`).
///
/// Callbacks, in order: ``perSubscriptionResultBlock`` for each subscription, then
/// ``fetchSubscriptionsResultBlock`` and the older ``fetchSubscriptionCompletionBlock``.
/// A missing subscription fails with ``FogError/Code/unknownItem``, and the operation with
/// ``FogError/Code/partialFailure``.
public final class FetchSubscriptionsOperation: DatabaseOperation, @unchecked Sendable {
    /// The IDs of the subscriptions to fetch; `nil` for every subscription of the user in the
    /// database.
    public var subscriptionIDs: [Subscription.ID]?

    /// Called for each subscription with the subscription or the item's error.
    public var perSubscriptionResultBlock: ((Subscription.ID, Result<Subscription, any Error>) -> Void)?
    /// Called once at the end.
    public var fetchSubscriptionsResultBlock: ((Result<Void, any Error>) -> Void)?
    /// The older final callback: the subscriptions by ID and the operation's error.
    @available(*, deprecated, renamed: "fetchSubscriptionsResultBlock")
    public var fetchSubscriptionCompletionBlock: (([Subscription.ID: Subscription]?, (any Error)?) -> Void)? {
        get { legacyCompletion }
        set { legacyCompletion = newValue }
    }

    private var legacyCompletion: (([Subscription.ID: Subscription]?, (any Error)?) -> Void)?

    /// Creates an operation that fetches the subscriptions with `subscriptionIDs`.
    public convenience init(subscriptionIDs: [Subscription.ID]) {
        self.init()
        self.subscriptionIDs = subscriptionIDs
    }

    /// An operation that fetches every subscription of the user in the database.
    public static func fetchAllSubscriptionsOperation() -> FetchSubscriptionsOperation {
        FetchSubscriptionsOperation()
    }

    override func execute(in database: Database) {
        let results: [(Subscription.ID, Result<Subscription, FogError>)]
        do {
            if let subscriptionIDs {
                results = try database.engine.subscriptions.fetch(subscriptionIDs, context: database.context)
            } else {
                results = try database.engine.subscriptions.all(context: database.context).map { ($0.subscriptionID, .success($0)) }
            }
        } catch {
            return finish(with: FogError.wrapping(error))
        }
        var partial: [AnyHashable: any Error] = [:]
        var found: [Subscription.ID: Subscription] = [:]
        for (id, result) in results {
            switch result {
            case .success(let s): found[id] = s
            case .failure(let error): partial[id] = error
            }
            perSubscriptionResultBlock?(id, result.mapError { $0 })
        }
        let error: FogError? =
            partial.isEmpty
            ? nil
            : FogError(.partialFailure, message: "\(partial.count) subscriptions could not be fetched", partialErrorsByItemID: partial)
        fetchSubscriptionsResultBlock?(error.map { .failure($0) } ?? .success(()))
        legacyCompletion?(found, error)
    }

    override func finish(with error: FogError) {
        for id in subscriptionIDs ?? [] { perSubscriptionResultBlock?(id, .failure(error)) }
        fetchSubscriptionsResultBlock?(.failure(error))
        legacyCompletion?(nil, error)
    }
}
