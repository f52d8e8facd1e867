import FogKit
import Foundation
import Synchronization

/// A container in a fresh temporary directory, with one container per user on the same
/// store; everything is closed and the directory removed when the store is released.
///
/// A suite can hold one as a stored property: Swift Testing makes a new suite instance for
/// each test, so each test gets a store of its own.
///
/// ```swift
/// @Suite struct NoteTests {
///     let store: TestStore
///     var db: Database { store.privateDatabase }
///     init() throws { store = try TestStore() }
///
///     @Test func saves() async throws {
///         try await db.save(Record(recordType: "Note"))
///     }
/// }
/// ```
public final class TestStore: Sendable {
    /// The folder of the store's files: the store itself for an embedded store, this
    /// process's working folder for one on PostgreSQL (``TestBackend``).
    public let directory: URL
    /// Where the store is.
    public let location: StoreLocation
    /// The store's administrator (indexes, index advice, backups, store information,
    /// integrity). Every container of the store is made by it, so their queries count toward
    /// `admin.indexAdvice()`.
    public let admin: Container.Administrator
    /// The container of the store's first user (`user` in ``init(user:identifier:configuration:)``).
    public let container: Container
    /// The containers of ``container(user:)``, keyed `u:` + user (`""` for nobody), closed
    /// with the store.
    private let others = Mutex<[String: Container]>([:])

    /// Opens a container for `user` (`nil` for nobody) in a fresh temporary directory.
    ///
    /// - Parameters:
    ///   - user: The user identity of ``container``; `nil` for no signed-in user.
    ///   - identifier: The container identifier.
    ///   - configuration: The container's configuration; by default without `fsync`.
    ///   - backend: Where the store is kept (``TestBackend/current`` unless given).
    /// - Throws: What `Container.init` throws.
    public init(
        user: String? = "alice", identifier: String = "iCloud.test",
        configuration: Container.Configuration = .init(durability: .none), backend: TestBackend = .current
    ) throws {
        let location = try backend.freshLocation()
        self.location = location
        self.directory = location.localFolder
        let admin: Container.Administrator
        do {
            admin = try Container.Administrator(identifier: identifier, store: location, configuration: configuration)
        } catch {
            TestBackend.remove(location)
            throw error
        }
        do {
            container = try admin.container(user: user)
        } catch {
            admin.close()
            TestBackend.remove(location)
            throw error
        }
        self.admin = admin
    }

    /// The private database of ``container``.
    public var privateDatabase: Database { container.privateCloudDatabase }

    /// The public database of ``container``.
    public var publicDatabase: Database { container.publicCloudDatabase }

    /// A container on the same store for `user` (`nil` for nobody), with the identifier and
    /// configuration of ``container``. Asking again for the same user returns the same
    /// container; the store closes it, so callers need not.
    public func container(user: String?) throws -> Container {
        try others.withLock { others in
            let key = user.map { "u:" + $0 } ?? ""
            if let existing = others[key] { return existing }
            let opened = try admin.container(user: user, configuration: container.configuration)
            others[key] = opened
            return opened
        }
    }

    deinit {
        for other in others.withLock({ Array($0.values) }) { other.close() }
        container.close()
        admin.close()
        TestBackend.remove(location)
    }
}

extension TestStore {
    /// Removes every index of `recordTypes` (development gives fields default indexes when
    /// they are first saved), so that queries on them scan.
    public func clearIndexes(ofRecordTypes recordTypes: String...) async throws {
        for type in recordTypes {
            let indexes = try admin.indexes(ofRecordType: type)
            guard !indexes.isEmpty else { continue }
            try await admin.setIndexes(indexes.mapValues { _ in [] }, ofRecordType: type)
        }
    }

    /// A container for `user` on the store's production environment, without `fsync`,
    /// made by ``admin``. Close it when done.
    public func productionContainer(user: String? = "alice") throws -> Container {
        var configuration = container.configuration
        configuration.environment = .production
        return try admin.container(user: user, configuration: configuration)
    }
}

extension TestStore {
    /// An administrator of the store's production environment, without `fsync`. Close it
    /// when done.
    public func productionAdministrator() throws -> Container.Administrator {
        var configuration = container.configuration
        configuration.environment = .production
        return try Container.Administrator(
            identifier: admin.containerIdentifier, store: location, configuration: configuration)
    }
}
