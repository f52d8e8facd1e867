import FogKit
import Foundation
import Synchronization

/// The store a server serves: an administrator per schema environment (development is the
/// store's folder, production its `production` folder), opened on first use, and a container
/// per environment and user, kept open.
final class ServerStore: Sendable {
    let identifier: String
    let location: StoreLocation
    /// The folder of this process for the store's files (asset files, staged uploads, push
    /// tokens): the store's own folder, or a working folder for a store on a server.
    let directory: URL
    let configuration: Container.Configuration
    private struct Key: Hashable {
        var environment: Container.Environment
        var user: String?
    }
    private let administrators = Mutex<[Container.Environment: Container.Administrator]>([:])
    private let containers = Mutex<[Key: Container]>([:])

    init(identifier: String, location: StoreLocation, configuration: Container.Configuration) throws {
        self.identifier = identifier
        self.location = location
        self.directory = location.localFolder
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.configuration = configuration
        _ = try administrator(.development)
    }

    /// The administrator of `environment`'s store.
    func administrator(_ environment: Container.Environment) throws -> Container.Administrator {
        try administrators.withLock { administrators in
            if let administrator = administrators[environment] { return administrator }
            var configuration = configuration
            configuration.environment = environment
            let administrator = try Container.Administrator(identifier: identifier, store: location, configuration: configuration)
            administrators[environment] = administrator
            return administrator
        }
    }

    /// The container of `environment` acting for `user` (`nil`: nobody).
    func container(_ environment: Container.Environment, user: String?) throws -> Container {
        let key = Key(environment: environment, user: user)
        if let container = containers.withLock({ $0[key] }) { return container }
        let administrator = try administrator(environment)
        return try containers.withLock { containers in
            if let container = containers[key] { return container }
            let container = try administrator.container(user: user)
            containers[key] = container
            return container
        }
    }

    private let knownUsers = Mutex<Set<Key>>([])

    /// Whether `user` is in the user directory of `environment`'s store (users are never
    /// removed from it, so a user found once is remembered).
    func userExists(_ user: String, in environment: Container.Environment) throws -> Bool {
        let key = Key(environment: environment, user: user)
        if knownUsers.withLock({ $0.contains(key) }) { return true }
        guard try administrator(environment).users()[user] != nil else { return false }
        knownUsers.withLock { _ = $0.insert(key) }
        return true
    }

    func close() {
        for container in containers.withLock({ Array($0.values) }) { container.close() }
        for administrator in administrators.withLock({ Array($0.values) }) { administrator.close() }
    }
}
