import Foundation
import Synchronization

/// The automatic work an engine has scheduled.
struct ScheduledWork: Sendable {
    var send: Task<Void, Never>?
    var fetch: Task<Void, Never>?
    /// The newest notification a scheduled fetch covers, acknowledged after it succeeds.
    var notification: CloudNotification.ID?
    /// A scheduled fetch found no usable account and fetched nothing: it is owed (with the
    /// newest notification it covered, if any) until the account is usable again.
    var owedFetch = false
    var owedNotification: CloudNotification.ID?
    /// Scheduled fetches that ended (fetched, skipped or failed), and notifications that
    /// scheduled a fetch, for tests.
    var fetchesEnded = 0
    var notificationsScheduled = 0

    mutating func cancelAll() {
        send?.cancel()
        fetch?.cancel()
        send = nil
        fetch = nil
    }
}

extension SyncEngine {
    /// The default ID of the database subscription an engine creates.
    static func defaultSubscriptionID(for scope: Database.Scope) -> Subscription.ID { "FogKit.SyncEngine.\(scope)" }

    /// Starts watching the account (always), and with automatic sync the database's
    /// notifications, and sends what was left pending by the last run.
    func startMonitoring() {
        let accountChanges = server.accountChanges()
        let account = Task { [weak self] in
            // The net change since the state was saved.
            await self?.checkAccount()
            for await _ in accountChanges {
                guard let self else { return }
                await self.checkAccount()
            }
        }
        monitors.withLock { $0["account"] = account }
        guard automaticallySync else { return }
        startListening()
    }

    /// Checks the account under the work lock (reporting a change), and with automatic sync
    /// restarts listening and syncs when an account is there.
    private func checkAccount() async {
        let before = state.storage.userRecordName
        let usable = try? await withWorkLock { await $0.reconcileAccount() }
        guard automaticallySync, usable == true else { return }
        let waited = listeningWaitsForAccount.exchange(false, ordering: .acquiringAndReleasing)
        if state.storage.userRecordName != before {
            // Another user: what was owed was the previous one's (the new first listening
            // fetches everything).
            scheduled.withLock { w in
                w.owedFetch = false
                w.owedNotification = nil
            }
            startListening()
        } else if waited {
            startListening()
        }
        resumeOwedFetch()
        if !state.storage.pendingDatabaseChanges.isEmpty || !state.storage.pendingRecordZoneChanges.isEmpty
            || state.storage.hasPendingUntrackedChanges
        {
            scheduleSend(after: retry.sendDelay)
        }
    }

    /// Runs `body` holding the work lock (not as a cancellable operation).
    private func withWorkLock<R: Sendable>(_ body: @Sendable (SyncEngine) async -> R) async throws -> R {
        await workLock.lock()
        let result = await body(self)
        await workLock.unlock()
        return result
    }

    /// (Re)starts the task that saves the database subscription and fetches when its
    /// notifications arrive.
    func startListening() {
        let task = Task { [weak self] in
            guard let prepared = await self?.prepareListening() else { return }
            let subscriptionID = prepared.1
            var iterator = prepared.0.makeAsyncIterator()
            while !Task.isCancelled {
                let next: CloudNotification?
                do {
                    next = try await iterator.next()
                } catch {
                    // The stream failed (a read error, an expired position): listen again later
                    // rather than never again.
                    self?.scheduleListeningRetry()
                    return
                }
                guard let notification = next else { return }
                guard let self else { return }
                guard notification.databaseScope == self.database.databaseScope, notification.subscriptionID == subscriptionID else {
                    continue
                }
                self.scheduleFetch(after: self.retry.fetchDelay, notification: notification.notificationID)
            }
        }
        let previous = monitors.withLock { m in
            defer { m["notifications"] = task }
            return m["notifications"]
        }
        previous?.cancel()
    }

    /// Saves the database subscription (once per account) and opens the notification stream.
    private func prepareListening() async -> (Container.Notifications, Subscription.ID)? {
        do {
            let ready: Bool = try await withWorkLock { await $0.reconcileAccount() }
            guard ready else {
                // No usable account: checkAccount starts listening once there is one.
                listeningWaitsForAccount.store(true, ordering: .releasing)
                return nil
            }
            var subscriptionID = state.storage.subscriptionID
            let firstListening = subscriptionID == nil
            if subscriptionID == nil || (configuredSubscriptionID != nil && configuredSubscriptionID != subscriptionID) {
                let saved = try await withRetries {
                    try await server.ensureDatabaseSubscription(
                        id: configuredSubscriptionID, defaultID: Self.defaultSubscriptionID(for: database.databaseScope))
                }
                subscriptionID = saved
                state.update { $0.subscriptionID = saved }
                await events.post(.stateUpdate(Event.StateUpdate(stateSerialization: state.serialization())))
            }
            guard let subscriptionID else { return nil }
            let stream = try server.notifications(listener: state.storage.listener)
            // A change committed before the database subscription existed (by another device,
            // while this one was still saving or finding it) made no notification: the first
            // listening fetches once, after the subscription is there, to cover that gap.
            // Later starts resume after the last acknowledged notification.
            if firstListening { scheduleFetch(after: retry.fetchDelay) }
            return (stream, subscriptionID)
        } catch {
            // Try again later (no account yet, or the server is unreachable).
            scheduleListeningRetry()
            return nil
        }
    }

    func scheduleListeningRetry() {
        let delay = retry.scheduledRetryDelay
        let task = Task { [weak self] in
            try? await Task.sleep(for: .seconds(delay))
            if Task.isCancelled { return }
            self?.startListening()
        }
        monitors.withLock { $0["listeningRetry"] = task }
    }

    /// Schedules a send after `delay` seconds, unless one is scheduled (automatic sync only).
    func scheduleSend(after delay: Double) {
        guard automaticallySync else { return }
        scheduled.withLock { work in
            guard work.send == nil else { return }
            work.send = Task { [weak self] in
                try? await Task.sleep(for: .seconds(delay))
                guard !Task.isCancelled, let self else { return }
                self.scheduled.withLock { $0.send = nil }
                do {
                    let sent = try await self.runWork { try await $0.send(SendChangesOptions(), reason: .scheduled) }
                    // No usable account: the changes stay pending. An account change schedules
                    // the send again (checkAccount); a status that could not be read is asked
                    // again later.
                    if !sent, await self.accountStatusUndetermined() { self.scheduleSend(after: self.retry.scheduledRetryDelay) }
                } catch let error as FogError where error.code != .operationCancelled {
                    // Transient failures stay pending: try again later.
                    if !self.state.storage.pendingRecordZoneChanges.isEmpty || !self.state.storage.pendingDatabaseChanges.isEmpty {
                        let retryAfter =
                            (error.partialErrorsByItemID?.values.compactMap { ($0 as? FogError)?.retryAfterSeconds }.max())
                            ?? error.retryAfterSeconds
                        if SyncRetryPolicy.keepsPending(error.code) || error.code == .partialFailure {
                            self.scheduleSend(after: max(retryAfter ?? 0, self.retry.scheduledRetryDelay))
                        }
                    }
                } catch {}
            }
        }
    }

    /// Schedules a fetch after `delay` seconds, unless one is scheduled (automatic sync
    /// only); `notification` is acknowledged once a fetch after it succeeded.
    func scheduleFetch(after delay: Double, notification: CloudNotification.ID? = nil) {
        guard automaticallySync else { return }
        scheduled.withLock { work in
            if let notification {
                work.notification = max(work.notification ?? notification, notification)
                work.notificationsScheduled += 1
            }
            guard work.fetch == nil else { return }
            work.fetch = Task { [weak self] in
                try? await Task.sleep(for: .seconds(delay))
                guard !Task.isCancelled, let self else { return }
                let covered = self.scheduled.withLock { w in
                    defer {
                        w.fetch = nil
                        w.notification = nil
                    }
                    return w.notification
                }
                defer { self.scheduled.withLock { $0.fetchesEnded += 1 } }
                do {
                    let fetched = try await self.runWork { try await $0.fetch(FetchChangesOptions(), reason: .scheduled) }
                    if fetched {
                        if let covered {
                            try? await self.server.acknowledgeNotifications(through: covered, listener: self.state.storage.listener)
                        }
                    } else if await self.accountStatusUndetermined() {
                        // The status could not be read: ask again later.
                        self.scheduleFetch(after: self.retry.scheduledRetryDelay, notification: covered)
                    } else {
                        // No usable account: nothing was fetched, so the notifications stay
                        // unacknowledged and the fetch is owed until the account is usable
                        // again (checkAccount), or until the next notification's fetch.
                        self.scheduled.withLock { w in
                            w.owedFetch = true
                            if let covered { w.owedNotification = max(w.owedNotification ?? covered, covered) }
                        }
                    }
                } catch let error as FogError where error.code != .operationCancelled {
                    self.scheduleFetch(after: max(error.retryAfterSeconds ?? 0, self.retry.scheduledRetryDelay), notification: covered)
                } catch {}
            }
        }
    }

    /// Schedules the fetch a scheduled fetch skipped for want of a usable account, if any.
    func resumeOwedFetch() {
        let owed = scheduled.withLock { w -> (Bool, CloudNotification.ID?) in
            defer {
                w.owedFetch = false
                w.owedNotification = nil
            }
            return (w.owedFetch, w.owedNotification)
        }
        if owed.0 { scheduleFetch(after: retry.fetchDelay, notification: owed.1) }
    }

    /// Whether the account's status cannot be read now (an account change will not tell).
    func accountStatusUndetermined() async -> Bool {
        (try? await server.accountStatus()) == nil
    }
}
