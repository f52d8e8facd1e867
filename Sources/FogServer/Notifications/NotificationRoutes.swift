import FogKit
import Foundation
import Hummingbird

/// The long-poll URL (`webcourierURL`) web clients wait for notifications on: a GET waits
/// up to ``FogServer/Configuration/longPollTimeout`` seconds for the next notification of
/// the token's user and answers it as CloudKit JS reads it (``NotificationPayload``), or
/// `{}` when none came. A notification is acknowledged once answered, so each comes once
/// (again only when its answer was lost before the acknowledgement).
///
/// The wait holds no state beyond the request: the token's position is the FogKit
/// listener's, kept in the store.
enum NotificationRoutes {
    static func respond(to request: inout Request, path: String, state: ServerState) async throws -> Response? {
        guard path.hasPrefix(PushTokens.coursePrefix) else { return nil }
        guard request.method == .get || request.method == .post else { throw ServerError(.notFound, "a webcourier URL takes GET") }
        let text = path.dropFirst(PushTokens.coursePrefix.count).split(separator: "/").first ?? ""
        guard let data = Capability.data(base64URL: text), let id = PushTokens.id(of: Array(data), secret: state.credentials.secret)
        else { throw ServerError(.notFound, "not a webcourier URL of this server") }
        let timeout = state.configuration.longPollTimeout
        guard let registration = PushTokens.registration(id: id, state: state),
            let environment = Container.Environment(rawValue: registration.environment)
        else {
            // Not registered yet: nothing to deliver; wait as a poll would, so clients that
            // poll again at once do not spin.
            try? await Task.sleep(for: .seconds(timeout))
            return ServerResponder.json(.object([]))
        }
        let container = try state.store.container(environment, user: registration.user)
        let listener = PushTokens.listener(id)
        guard let notification = try await next(container: container, listener: listener, timeout: timeout) else {
            return ServerResponder.json(.object([]))
        }
        let payload = await NotificationPayload.json(notification, container: container)
        if let nid = notification.notificationID {
            try await container.acknowledgeNotifications(through: nid, listener: listener)
        }
        return ServerResponder.json(payload)
    }

    /// The listener's next notification, or `nil` after `timeout` seconds.
    static func next(container: Container, listener: String, timeout: TimeInterval) async throws -> CloudNotification? {
        let notifications = try container.notifications(listener: listener)
        return try await withThrowingTaskGroup(of: CloudNotification?.self) { group in
            group.addTask {
                var iterator = notifications.makeAsyncIterator()
                do {
                    return try await iterator.next()
                } catch let error as FogError where error.code == .changeTokenExpired {
                    // Missed notifications are gone: go on from now.
                    try await container.resetNotificationListener(listener)
                    return nil
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
