extension Database {
    /// Saves a subscription of the current user in this database, replacing one with the
    /// same ID.
    /// - Throws: `invalidArguments` for a kind the database does not allow (a query
    ///   subscription in the shared database; a zone or database subscription in the public
    ///   one), options without a firing flag, or a predicate that does not fit the schema;
    ///   `zoneNotFound` for a missing zone; `notAuthenticated` for nobody.
    @discardableResult
    public func save(_ subscription: Subscription) async throws -> Subscription {
        try checkOpen()
        return try await engine.subscriptions.modify(saving: [subscription], deleting: [], context: context).saves[0].1.get()
    }

    /// Fetches one subscription of the current user.
    /// - Throws: ``FogError/Code/unknownItem`` when there is none with this ID.
    public func subscription(for subscriptionID: Subscription.ID) async throws -> Subscription {
        try checkOpen()
        return try engine.subscriptions.fetch([subscriptionID], context: context)[0].1.get()
    }

    /// Fetches subscriptions of the current user by ID, each with its own result.
    public func subscriptions(for ids: [Subscription.ID]) async throws -> [Subscription.ID: Result<Subscription, any Error>] {
        try checkOpen()
        var result: [Subscription.ID: Result<Subscription, any Error>] = [:]
        for (id, r) in try engine.subscriptions.fetch(ids, context: context) { result[id] = r.mapError { $0 } }
        return result
    }

    /// Every subscription of the current user in this database, ordered by ID.
    public func allSubscriptions() async throws -> [Subscription] {
        try checkOpen()
        return try engine.subscriptions.all(context: context)
    }

    /// Deletes a subscription of the current user.
    /// - Throws: ``FogError/Code/unknownItem`` when there is none with this ID.
    @discardableResult
    public func deleteSubscription(withID subscriptionID: Subscription.ID) async throws -> Subscription.ID {
        try checkOpen()
        try await engine.subscriptions.modify(saving: [], deleting: [subscriptionID], context: context).deletes[0].1.get()
        return subscriptionID
    }

    /// Saves and deletes subscriptions of the current user, each with its own result.
    public func modifySubscriptions(
        saving subscriptionsToSave: [Subscription], deleting subscriptionIDsToDelete: [Subscription.ID]
    ) async throws -> (
        saveResults: [Subscription.ID: Result<Subscription, any Error>], deleteResults: [Subscription.ID: Result<Void, any Error>]
    ) {
        try checkOpen()
        let result = try await engine.subscriptions.modify(
            saving: subscriptionsToSave, deleting: subscriptionIDsToDelete, context: context)
        var saves: [Subscription.ID: Result<Subscription, any Error>] = [:]
        for (id, r) in result.saves { saves[id] = r.mapError { $0 } }
        var deletes: [Subscription.ID: Result<Void, any Error>] = [:]
        for (id, r) in result.deletes { deletes[id] = r.mapError { $0 } }
        return (saves, deletes)
    }
}
