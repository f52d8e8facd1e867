import Foundation

extension Container {
    /// The notifications of the container's user as one named listener receives them: an
    /// `AsyncSequence` of ``CloudNotification``s in commit order, which waits for new ones
    /// when it has delivered every stored one. Make it with ``Container/notifications(listener:)``.
    ///
    /// Delivery is at least once: the sequence starts after the notification the listener
    /// acknowledged last (``Container/acknowledgeNotifications(through:listener:)``), so a
    /// listener that stops (or crashes) before acknowledging receives the rest again when it
    /// starts next. A listener that never acknowledged starts with the oldest notification
    /// still retained. The sequence ends when its task is cancelled.
    public struct Notifications: AsyncSequence, Sendable {
        /// A ``CloudNotification`` (one of its subclasses).
        public typealias Element = CloudNotification
        let container: Container
        let listener: String
        let user: String

        /// Makes the iterator.
        public func makeAsyncIterator() -> Iterator { Iterator(sequence: self) }

        /// Reads stored notifications in batches and waits for commits that write new ones.
        public struct Iterator: AsyncIteratorProtocol {
            let sequence: Notifications
            private var position: Int64?
            private var buffer: [CloudNotification] = []
            private var fresh = false

            init(sequence: Notifications) { self.sequence = sequence }

            /// The next notification, waiting for one if none is stored yet; `nil` once the
            /// task is cancelled.
            /// - Throws: ``FogError/Code/changeTokenExpired`` when notifications after the
            ///   listener's position are older than the container's
            ///   ``Container/Configuration/notificationRetention`` (reset the listener with
            ///   ``Container/resetNotificationListener(_:)``).
            public mutating func next() async throws -> CloudNotification? {
                let container = sequence.container
                let engine = container.engine
                while true {
                    if Task.isCancelled { return nil }
                    if !buffer.isEmpty { return buffer.removeFirst() }
                    try container.checkNotificationsOpen()
                    if position == nil {
                        let acknowledged = try engine.subscriptions.acknowledgedPosition(
                            listener: sequence.listener, subscriber: sequence.user)
                        position = acknowledged
                        fresh = acknowledged == 0
                    }
                    let generation = engine.subscriptions.signal.generation
                    let batch = try engine.subscriptions.notifications(
                        of: sequence.user, after: position!, fresh: fresh, limit: 256,
                        retention: container.configuration.notificationRetention, now: Date(), listener: sequence.listener)
                    if let last = batch.last {
                        position = last.0
                        fresh = false
                        buffer = batch.map {
                            $0.1.makeNotification(position: $0.0, subscriber: sequence.user, container: container.containerIdentifier)
                        }
                        continue
                    }
                    // Woken by a commit of this process; other processes' commits are seen
                    // within a second.
                    await engine.subscriptions.signal.wait(after: generation, timeout: .seconds(1))
                }
            }
        }
    }

    /// The notifications of the container's user for the listener `listener` (a name of 1 to
    /// 255 bytes that the listener keeps across runs). See ``Notifications``.
    /// - Throws: `notAuthenticated` for a container opened for nobody; `invalidArguments`
    ///   for a bad listener name.
    public func notifications(listener: String) throws -> Notifications {
        let user = try notificationUser(listener: listener)
        return Notifications(container: self, listener: listener, user: user)
    }

    /// Records that `listener` has handled every notification up to and including `id`:
    /// its next ``notifications(listener:)`` sequence starts after it. Acknowledging an
    /// earlier one than already acknowledged changes nothing.
    public func acknowledgeNotifications(through id: CloudNotification.ID, listener: String) async throws {
        let user = try notificationUser(listener: listener)
        try await engine.subscriptions.acknowledge(position: id.position, listener: listener, subscriber: user)
    }

    /// Moves `listener` past every stored notification, skipping those it missed: how a
    /// listener goes on after ``FogError/Code/changeTokenExpired``.
    public func resetNotificationListener(_ listener: String) async throws {
        let user = try notificationUser(listener: listener)
        try await engine.subscriptions.resetListener(listener, subscriber: user)
    }

    func checkNotificationsOpen() throws(FogError) {
        if closed.isSet { throw FogError(.internalError, message: "the container is closed") }
    }

    private func notificationUser(listener: String) throws -> String {
        try checkNotificationsOpen()
        guard let user = userRecordName else {
            throw FogError(.notAuthenticated, message: "notifications are a user's; the container was opened on behalf of nobody")
        }
        guard !listener.isEmpty, listener.utf8.count <= 255 else {
            throw FogError(.invalidArguments, message: "a listener name must be 1 to 255 bytes long")
        }
        return user
    }
}
