import ArgumentParser
import FogKit
import Foundation

/// `fog watch`: prints a user's notifications as they arrive.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print a user's notifications as they arrive.",
        discussion: """
            The notifications of the user's subscriptions, for a named listener: the ones it has
            not acknowledged yet first, in commit order, then new ones as changes commit. Each
            printed notification is acknowledged, so the next run of the same listener goes on
            after it (--no-acknowledge leaves them for the next run).
            Examples:
              fog watch --user alice                      # until interrupted
              fog watch --user alice --count 3            # stop after three notifications
              fog watch --user alice --listener phone --for 10
            """)

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: "The user whose notifications to print.")
    var user: String

    @Option(name: .long, help: "The listener's name: it resumes after the last notification it acknowledged.")
    var listener: String = "fog-watch"

    @OptionGroup var environment: EnvironmentOptions

    @Option(name: .long, help: "Stop after this many notifications.")
    var count: Int?

    @Option(name: .customLong("for"), help: "Stop after this many seconds.")
    var seconds: Double?

    @Flag(inversion: .prefixedNo, help: "Acknowledge each printed notification.")
    var acknowledge = true

    func run() async throws {
        let admin = try store.openAdministrator(configuration: environment.applied())
        let container = try admin.container(user: user)
        defer {
            container.close()
            admin.close()
        }
        let sequence = try container.notifications(listener: listener)
        let acknowledge = acknowledge
        let count = count
        let listener = listener
        let task = Task {
            var printed = 0
            for try await notification in sequence {
                // Unbuffered, so a pipe sees each line as it arrives.
                FileHandle.standardOutput.write(Data((Self.render(notification) + "\n").utf8))
                if acknowledge, let id = notification.notificationID {
                    try await container.acknowledgeNotifications(through: id, listener: listener)
                }
                printed += 1
                if let count, printed >= count { break }
            }
        }
        if let seconds {
            let timer = Task {
                try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                task.cancel()
            }
            defer { timer.cancel() }
            try await task.value
        } else {
            try await task.value
        }
    }

    /// One line: position, kind, database, subscription, and what changed.
    static func render(_ notification: CloudNotification) -> String {
        let position = notification.notificationID.map { "#\($0)" } ?? "#?"
        let head = "\(position)  \(notification.databaseScope)  \(notification.subscriptionID ?? "?")"
        switch notification {
        case let query as QueryNotification:
            var line = "\(head)  \(query.queryNotificationReason)  \(query.recordID?.recordName ?? "?")"
            if let zone = query.recordID?.zoneID, !zone.isDefaultZone { line += "  zone=\(zone.zoneName)" }
            for (key, value) in (query.recordFields ?? [:]).sorted(by: { $0.key < $1.key }) { line += "  \(key)=\(render(value))" }
            return line
        case let zone as RecordZoneNotification:
            return "\(head)  zone changed  \(zone.recordZoneID?.zoneName ?? "?")"
        default:
            return "\(head)  database changed"
        }
    }

    private static func render(_ value: FieldValue) -> String {
        switch value {
        case .string(let s): PredicateLiteral.quoted(s)
        case .int64(let n): String(n)
        case .double(let d): String(d)
        case .date(let d): ISO8601DateFormatter().string(from: d)
        case .reference(let r): "->" + r.recordID.recordName
        case .location(let l): "<\(l.latitude),\(l.longitude)>"
        default: "\(value)"
        }
    }
}
