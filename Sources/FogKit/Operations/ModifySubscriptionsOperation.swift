import Foundation

/// Saves and deletes subscriptions (CloudKit's `CKModifySubscriptionsOperation`).
///
/// Callbacks, in order: ``perSubscriptionSaveBlock`` for each subscription to save,
/// ``perSubscriptionDeleteBlock`` for each ID to delete, then
/// ``modifySubscriptionsResultBlock`` and the older ``modifySubscriptionsCompletionBlock``.
/// Any failed item makes the final result ``FogError/Code/partialFailure``, keyed by
/// subscription ID.
public final class ModifySubscriptionsOperation: DatabaseOperation, @unchecked Sendable {
    /// The subscriptions to save.
    public var subscriptionsToSave: [Subscription]?
    /// The IDs of the subscriptions to delete.
    public var subscriptionIDsToDelete: [Subscription.ID]?

    /// Called for each subscription to save with the stored subscription or the item's error.
    public var perSubscriptionSaveBlock: ((Subscription.ID, Result<Subscription, any Error>) -> Void)?
    /// Called for each ID to delete with the item's outcome.
    public var perSubscriptionDeleteBlock: ((Subscription.ID, Result<Void, any Error>) -> Void)?
    /// Called once at the end.
    public var modifySubscriptionsResultBlock: ((Result<Void, any Error>) -> Void)?
    /// The older final callback: saved subscriptions, deleted IDs and the operation's error.
    @available(*, deprecated, renamed: "modifySubscriptionsResultBlock")
    public var modifySubscriptionsCompletionBlock: (([Subscription]?, [Subscription.ID]?, (any Error)?) -> Void)? {
        get { legacyCompletion }
        set { legacyCompletion = newValue }
    }

    private var legacyCompletion: (([Subscription]?, [Subscription.ID]?, (any Error)?) -> Void)?

    /// Creates an operation that saves and deletes subscriptions.
    public convenience init(subscriptionsToSave: [Subscription]? = nil, subscriptionIDsToDelete: [Subscription.ID]? = nil) {
        self.init()
        self.subscriptionsToSave = subscriptionsToSave
        self.subscriptionIDsToDelete = subscriptionIDsToDelete
    }

    override func execute(in database: Database) {
        let outcome: (saves: [(Subscription.ID, Result<Subscription, FogError>)], deletes: [(Subscription.ID, Result<Void, FogError>)])
        do {
            outcome = try database.engine.subscriptions.modifyAndWait(
                saving: subscriptionsToSave ?? [], deleting: subscriptionIDsToDelete ?? [], context: database.context)
        } catch {
            return finish(with: FogError.wrapping(error))
        }
        var partial: [AnyHashable: any Error] = [:]
        var saved: [Subscription] = []
        var deleted: [Subscription.ID] = []
        for (id, result) in outcome.saves {
            switch result {
            case .success(let subscription): saved.append(subscription)
            case .failure(let error): partial[id] = error
            }
            perSubscriptionSaveBlock?(id, result.mapError { $0 })
        }
        for (id, result) in outcome.deletes {
            switch result {
            case .success: deleted.append(id)
            case .failure(let error): partial[id] = error
            }
            perSubscriptionDeleteBlock?(id, result.mapError { $0 })
        }
        let error: FogError? =
            partial.isEmpty
            ? nil : FogError(.partialFailure, message: "\(partial.count) subscription changes failed", partialErrorsByItemID: partial)
        modifySubscriptionsResultBlock?(error.map { .failure($0) } ?? .success(()))
        legacyCompletion?(saved, deleted, error)
    }

    override func finish(with error: FogError) {
        for s in subscriptionsToSave ?? [] { perSubscriptionSaveBlock?(s.subscriptionID, .failure(error)) }
        for id in subscriptionIDsToDelete ?? [] { perSubscriptionDeleteBlock?(id, .failure(error)) }
        modifySubscriptionsResultBlock?(.failure(error))
        legacyCompletion?(nil, nil, error)
    }
}
