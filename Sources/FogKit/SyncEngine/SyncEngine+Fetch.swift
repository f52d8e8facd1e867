import Foundation

extension SyncEngine {
    /// One fetch: the database feed, then the feed of each zone with unfetched changes, in
    /// CloudKit's order of events. Called with the work lock held. Returns `false` when it
    /// did nothing for want of a usable account.
    @discardableResult
    func fetch(_ startOptions: FetchChangesOptions, reason: SyncReason) async throws -> Bool {
        guard await reconcileAccount() else { return false }
        var options = startOptions
        await events.post(.willFetchChanges(Event.WillFetchChanges(context: FetchChangesContext(reason: reason, options: options))))
        var failure: (any Error)?
        do {
            try await fetchDatabaseChanges(&options, reason: reason)
            try await fetchZoneChanges(&options, reason: reason)
        } catch {
            failure = error
        }
        await events.post(.didFetchChanges(Event.DidFetchChanges(context: FetchChangesContext(reason: reason, options: options))))
        if let failure { throw failure }
        return true
    }

    /// Asks the delegate for the options of the next request.
    private func nextOptions(_ options: FetchChangesOptions, reason: SyncReason) async -> FetchChangesOptions {
        guard let delegate else { return options }
        return await delegate.nextFetchChangesOptions(FetchChangesContext(reason: reason, options: options), syncEngine: self)
    }

    /// Runs `request`, retrying transient errors after their delay.
    func withRetries<T>(_ request: () async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            let failure: FogError
            do {
                return try await request()
            } catch {
                failure = FogError.syncError(error)
            }
            guard SyncRetryPolicy.isRetryable(failure.code), attempt < retry.maximumRetries else { throw failure }
            attempt += 1
            try await Task.sleep(for: retry.delay(after: failure, attempt: attempt))
        }
    }

    /// The database feed: which zones changed (marked unfetched) or went away (their tokens
    /// dropped). An expired token starts the feed again from the beginning.
    private func fetchDatabaseChanges(_ options: inout FetchChangesOptions, reason: SyncReason) async throws {
        var restarted = false
        while true {
            options = await nextOptions(options, reason: reason)
            try Task.checkCancellation()
            let token = state.storage.databaseToken
            let group = options.operationGroup
            let page:
                (
                    modifications: [Database.DatabaseChange.Modification], deletions: [Database.DatabaseChange.Deletion],
                    changeToken: ServerChangeToken, moreComing: Bool
                )
            do {
                page = try await withRetries { try await server.databaseChanges(since: token, group: group) }
            } catch let error as FogError where error.code == .changeTokenExpired && token != nil && !restarted {
                restarted = true
                state.update { $0.databaseToken = nil }
                await postStateUpdate()
                continue
            }
            if !page.modifications.isEmpty || !page.deletions.isEmpty {
                await events.post(
                    .fetchedDatabaseChanges(Event.FetchedDatabaseChanges(modifications: page.modifications, deletions: page.deletions)))
            }
            state.update { s in
                for modification in page.modifications { s.markUnfetched(modification.zoneID) }
                for deletion in page.deletions {
                    s.zoneTokens[deletion.zoneID] = nil
                    s.zoneIDsWithUnfetchedServerChanges.removeAll { $0 == deletion.zoneID }
                }
                s.databaseToken = page.changeToken
            }
            await postStateUpdate()
            if !page.moreComing { return }
        }
    }

    /// The feed of each zone with unfetched changes in the options' scope, prioritized zones
    /// first. An expired token fetches the zone again from the beginning; a zone that is gone
    /// is dropped; each zone's outcome is reported in its ``Event/didFetchRecordZoneChanges(_:)``.
    private func fetchZoneChanges(_ options: inout FetchChangesOptions, reason: SyncReason) async throws {
        var visited: Set<RecordZone.ID> = []
        while true {
            options = await nextOptions(options, reason: reason)
            let scope = options.scope
            let candidates = state.storage.zoneIDsWithUnfetchedServerChanges.filter { scope.contains($0) && !visited.contains($0) }
            guard let zoneID = options.prioritizedZoneIDs.first(where: candidates.contains) ?? candidates.first else { return }
            visited.insert(zoneID)
            await events.post(.willFetchRecordZoneChanges(Event.WillFetchRecordZoneChanges(zoneID: zoneID)))
            var zoneError: FogError?
            do {
                zoneError = try await fetchZone(zoneID, &options, reason: reason)
            } catch {
                let failure = FogError.syncError(error)
                await events.post(.didFetchRecordZoneChanges(Event.DidFetchRecordZoneChanges(zoneID: zoneID, error: failure)))
                throw failure
            }
            await events.post(.didFetchRecordZoneChanges(Event.DidFetchRecordZoneChanges(zoneID: zoneID, error: zoneError)))
        }
    }

    /// Fetches one zone's pages; returns the zone's error, or `nil`.
    private func fetchZone(_ zoneID: RecordZone.ID, _ options: inout FetchChangesOptions, reason: SyncReason) async throws -> FogError? {
        var restarted = false
        var first = true
        while true {
            if !first {
                options = await nextOptions(options, reason: reason)
                // The app narrowed the fetch: the zone stays unfetched.
                if !options.scope.contains(zoneID) { return nil }
            }
            first = false
            try Task.checkCancellation()
            let token = state.storage.zoneTokens[zoneID]
            let group = options.operationGroup
            let page:
                (
                    modifications: [Database.RecordZoneChange.Modification], deletions: [Database.RecordZoneChange.Deletion],
                    changeToken: ServerChangeToken, moreComing: Bool
                )
            do {
                page = try await withRetries { try await server.recordZoneChanges(in: zoneID, since: token, group: group) }
            } catch let error as FogError {
                if error.code == .operationCancelled { throw error }
                if error.code == .changeTokenExpired, token != nil, !restarted {
                    // Fetch the zone again from the beginning: the app gets every record as
                    // it is now, and applies what it already has once more.
                    restarted = true
                    state.update { $0.zoneTokens[zoneID] = nil }
                    await postStateUpdate()
                    continue
                }
                if error.code == .zoneNotFound || error.code == .userDeletedZone {
                    state.update { s in
                        s.zoneTokens[zoneID] = nil
                        s.zoneIDsWithUnfetchedServerChanges.removeAll { $0 == zoneID }
                    }
                    await postStateUpdate()
                }
                return error
            }
            if !page.modifications.isEmpty || !page.deletions.isEmpty {
                await events.post(
                    .fetchedRecordZoneChanges(Event.FetchedRecordZoneChanges(modifications: page.modifications, deletions: page.deletions)))
            }
            state.update { s in
                s.zoneTokens[zoneID] = page.changeToken
                if !page.moreComing { s.zoneIDsWithUnfetchedServerChanges.removeAll { $0 == zoneID } }
            }
            await postStateUpdate()
            if !page.moreComing { return nil }
        }
    }
}
