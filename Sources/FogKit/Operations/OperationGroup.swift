import Foundation
import Synchronization

/// A group of related operations (CloudKit's `CKOperationGroup`): a name and sizes that
/// describe the work, and a default configuration for its operations.
///
/// Set an operation's ``CloudOperation/group``, or pass the group to
/// `configuredWith(configuration:group:body:)`. Each property an operation's own
/// ``CloudOperation/configuration`` does not set comes from ``defaultConfiguration``, when
/// that one sets it. As in CloudKit, grouping does not make operations atomic: each
/// operation commits on its own. FogKit keeps ``name``, ``quantity`` and the expected sizes
/// for the application; they change nothing about how the operations run.
public final class OperationGroup: Sendable, CustomStringConvertible {
    /// The size of the data a group expects to send or receive (CloudKit's
    /// `CKOperationGroup.TransferSize`), with CloudKit's raw values.
    public enum TransferSize: Int, Sendable, Hashable, CaseIterable {
        /// The size is not known.
        case unknown = 0
        /// Kilobytes.
        case kilobytes = 1
        /// Megabytes.
        case megabytes = 2
        /// Tens of megabytes.
        case tensOfMegabytes = 3
        /// Hundreds of megabytes.
        case hundredsOfMegabytes = 4
        /// Gigabytes.
        case gigabytes = 5
        /// Tens of gigabytes.
        case tensOfGigabytes = 6
        /// Hundreds of gigabytes.
        case hundredsOfGigabytes = 7
    }

    private struct State {
        var name: String?
        var defaultConfiguration = CloudOperation.Configuration()
        var expectedSendSize = TransferSize.unknown
        var expectedReceiveSize = TransferSize.unknown
        var quantity = 0
    }

    private let state = Mutex(State())

    /// A unique identifier of the group, chosen when it is created.
    public let operationGroupID: String = UUID().uuidString

    /// Creates a group with no name, an empty default configuration, unknown sizes and a
    /// quantity of 0.
    public init() {}

    /// A name for the group, for the application's logs.
    public var name: String? {
        get { state.withLock { $0.name } }
        set { state.withLock { $0.name = newValue } }
    }

    /// The configuration the group's operations take each property from when their own
    /// configuration does not set it. It sets nothing until you set its properties.
    public var defaultConfiguration: CloudOperation.Configuration {
        get { state.withLock { $0.defaultConfiguration } }
        set { state.withLock { $0.defaultConfiguration = newValue } }
    }

    /// How much data the group's operations expect to send; ``TransferSize/unknown`` by default.
    public var expectedSendSize: TransferSize {
        get { state.withLock { $0.expectedSendSize } }
        set { state.withLock { $0.expectedSendSize = newValue } }
    }

    /// How much data the group's operations expect to receive; ``TransferSize/unknown`` by default.
    public var expectedReceiveSize: TransferSize {
        get { state.withLock { $0.expectedReceiveSize } }
        set { state.withLock { $0.expectedReceiveSize = newValue } }
    }

    /// How many items the group's operations work on, as the application counts them; 0 by default.
    public var quantity: Int {
        get { state.withLock { $0.quantity } }
        set { state.withLock { $0.quantity = newValue } }
    }

    /// `<OperationGroup id name>`.
    public var description: String { "<OperationGroup \(operationGroupID) \(name ?? "(no name)")>" }
}

/// The configuration and group of the `configuredWith(configuration:group:body:)` call in
/// progress on the current task (or thread, for the synchronous form).
struct OperationScope: Sendable {
    var configuration: CloudOperation.Configuration?
    var group: OperationGroup?

    @TaskLocal static var current: OperationScope?

    /// The scope inside a `configuredWith` call with `configuration` and `group` made in this
    /// one: the inner configuration's set values win over the outer one's, and the inner group,
    /// when given, replaces the outer one.
    static func nested(configuration: CloudOperation.Configuration?, group: OperationGroup?) -> OperationScope {
        let outer = current
        let merged: CloudOperation.Configuration? =
            switch (configuration, outer?.configuration) {
            case (let inner?, let outer): inner.merged(over: outer)
            case (nil, let outer): outer
            }
        return OperationScope(configuration: merged, group: group ?? outer?.group)
    }
}

extension Database {
    /// Runs `body` with this database, applying `configuration` and `group` to the operations
    /// added inside it (CloudKit's `configuredWith(configuration:group:body:)`).
    ///
    /// An operation added to any database or container inside `body`, on the same task, takes
    /// `group` when it has none, and each property its own configuration does not set from
    /// `configuration` (before the group's default configuration). Calls nest: an inner
    /// call's set values win. The convenience methods inside `body` run inline on the calling
    /// task as everywhere, so there is nothing for the configuration to change about them.
    ///
    /// - Parameters:
    ///   - configuration: The configuration for the operations added in `body`.
    ///   - group: The group for the operations added in `body`.
    ///   - body: The work, given this database.
    /// - Returns: What `body` returns.
    public func configuredWith<R>(
        configuration: CloudOperation.Configuration? = nil, group: OperationGroup? = nil, body: (Database) async throws -> R
    ) async rethrows -> R {
        try await OperationScope.$current.withValue(OperationScope.nested(configuration: configuration, group: group)) {
            try await body(self)
        }
    }

    /// The synchronous form of `configuredWith(configuration:group:body:)` above.
    ///
    /// - Parameters:
    ///   - configuration: The configuration for the operations added in `body`.
    ///   - group: The group for the operations added in `body`.
    ///   - body: The work, given this database.
    /// - Returns: What `body` returns.
    public func configuredWith<R>(
        configuration: CloudOperation.Configuration? = nil, group: OperationGroup? = nil, body: (Database) throws -> R
    ) rethrows -> R {
        try OperationScope.$current.withValue(OperationScope.nested(configuration: configuration, group: group)) {
            try body(self)
        }
    }
}

extension Container {
    /// Runs `body` with this container, applying `configuration` and `group` to the
    /// operations added inside it (CloudKit's `configuredWith(configuration:group:body:)`);
    /// as ``Database``'s `configuredWith(configuration:group:body:)` does.
    ///
    /// - Parameters:
    ///   - configuration: The configuration for the operations added in `body`.
    ///   - group: The group for the operations added in `body`.
    ///   - body: The work, given this container.
    /// - Returns: What `body` returns.
    public func configuredWith<R>(
        configuration: CloudOperation.Configuration? = nil, group: OperationGroup? = nil, body: (Container) async throws -> R
    ) async rethrows -> R {
        try await OperationScope.$current.withValue(OperationScope.nested(configuration: configuration, group: group)) {
            try await body(self)
        }
    }

    /// The synchronous form of `configuredWith(configuration:group:body:)` above.
    ///
    /// - Parameters:
    ///   - configuration: The configuration for the operations added in `body`.
    ///   - group: The group for the operations added in `body`.
    ///   - body: The work, given this container.
    /// - Returns: What `body` returns.
    public func configuredWith<R>(
        configuration: CloudOperation.Configuration? = nil, group: OperationGroup? = nil, body: (Container) throws -> R
    ) rethrows -> R {
        try OperationScope.$current.withValue(OperationScope.nested(configuration: configuration, group: group)) {
            try body(self)
        }
    }
}
