import Foundation

// CloudKit's completion-handler forms of the subscription convenience methods, each its
// `async` twin run by `completeLater` (see `Database+CompletionHandlers.swift`).

extension Database {
    /// Saves one subscription (CloudKit's `save(_:completionHandler:)` for a
    /// `CKSubscription`); the handler receives the subscription as stored, or `nil` and the
    /// error ``save(_:)-(Subscription)`` throws.
    public func save(
        _ subscription: Subscription, completionHandler: @escaping @Sendable (Subscription?, (any Error)?) -> Void
    ) {
        completeLater({ try await self.save(subscription) }, pair: completionHandler)
    }

    /// Fetches one subscription of the current user (CloudKit's
    /// `fetch(withSubscriptionID:completionHandler:)`); `unknownItem` when there is none.
    public func fetch(
        withSubscriptionID subscriptionID: Subscription.ID,
        completionHandler: @escaping @Sendable (Subscription?, (any Error)?) -> Void
    ) {
        completeLater({ try await self.subscription(for: subscriptionID) }, pair: completionHandler)
    }

    /// Fetches several subscriptions, each with its own result (CloudKit's
    /// `fetch(withSubscriptionIDs:completionHandler:)`).
    public func fetch(
        withSubscriptionIDs subscriptionIDs: [Subscription.ID],
        completionHandler: @escaping @Sendable (Result<[Subscription.ID: Result<Subscription, any Error>], any Error>) -> Void
    ) {
        completeLater({ try await self.subscriptions(for: subscriptionIDs) }, completionHandler)
    }

    /// Fetches every subscription of the current user in this database (CloudKit's
    /// `fetchAllSubscriptions(completionHandler:)`).
    public func fetchAllSubscriptions(completionHandler: @escaping @Sendable ([Subscription]?, (any Error)?) -> Void) {
        completeLater({ try await self.allSubscriptions() }, pair: completionHandler)
    }

    /// Deletes one subscription (CloudKit's `delete(withSubscriptionID:completionHandler:)`);
    /// the handler receives the deleted subscription's ID.
    public func delete(
        withSubscriptionID subscriptionID: Subscription.ID,
        completionHandler: @escaping @Sendable (Subscription.ID?, (any Error)?) -> Void
    ) {
        completeLater({ try await self.deleteSubscription(withID: subscriptionID) }, pair: completionHandler)
    }

    /// Saves and deletes subscriptions in one request, each with its own result (CloudKit's
    /// `modifySubscriptions(saving:deleting:completionHandler:)`).
    public func modifySubscriptions(
        saving subscriptionsToSave: [Subscription], deleting subscriptionIDsToDelete: [Subscription.ID],
        completionHandler:
            @escaping @Sendable (
                Result<
                    (
                        saveResults: [Subscription.ID: Result<Subscription, any Error>],
                        deleteResults: [Subscription.ID: Result<Void, any Error>]
                    ),
                    any Error
                >
            ) -> Void
    ) {
        completeLater(
            { try await self.modifySubscriptions(saving: subscriptionsToSave, deleting: subscriptionIDsToDelete) }, completionHandler)
    }
}
