import Foundation

/// Where a store lives and which backend keeps it: a folder for LMDB, an address for a
/// database server.
///
/// A location is a value: it opens nothing until a store is opened at it. Each backend
/// offers its own way to make one (`FogStorageLMDB` a folder, `FogStoragePostgres` a
/// `postgres://` URL), so that code which chooses a store does not depend on the other
/// backends.
public struct StoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// The store's address: a file URL for a local store, or the server's URL.
    public let url: URL
    /// The backend that keeps the store.
    public let backend: any KeyValueStore.Type

    /// A location of `backend` at `url`.
    public init<Store: KeyValueStore>(_ backend: Store.Type, url: URL) {
        self.url = url
        self.backend = backend
    }

    /// Whether the backend is `Store`.
    public func isBackend<Store: KeyValueStore>(_ store: Store.Type) -> Bool {
        ObjectIdentifier(backend) == ObjectIdentifier(store)
    }

    /// The location of a second store that belongs with this one (its production copy, say),
    /// named `name`: a subfolder of a folder, another schema of a database.
    public func appending(_ name: String) -> StoreLocation {
        StoreLocation(backend: backend, url: backend.location(url, appending: name))
    }

    /// Whether a store of the backend is at this location (without opening it).
    public func storeExists() -> Bool { backend.storeExists(at: url) }

    /// Opens the store at this location; see ``KeyValueStore/open(at:configuration:)``.
    public func open(configuration: StoreConfiguration) throws -> any KeyValueStore {
        try backend.open(at: url, configuration: configuration)
    }

    /// The location for messages, without a password.
    public var description: String { backend.displayName(of: url) }

    /// Whether two locations name the same store of the same backend.
    public static func == (lhs: StoreLocation, rhs: StoreLocation) -> Bool {
        ObjectIdentifier(lhs.backend) == ObjectIdentifier(rhs.backend) && lhs.url == rhs.url
    }

    /// Hashes the backend and the address.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(backend))
        hasher.combine(url)
    }

    private init(backend: any KeyValueStore.Type, url: URL) {
        self.backend = backend
        self.url = url
    }
}

extension KeyValueStore {
    /// The address of a store that belongs with the one at `location`, named `name`. A local
    /// store's default: the subfolder `name`.
    public static func location(_ location: URL, appending name: String) -> URL {
        location.appendingPathComponent(name, isDirectory: true)
    }

    /// `location` for messages. The default: a file URL's path, any other URL without its
    /// password.
    public static func displayName(of location: URL) -> String {
        if location.isFileURL { return location.path }
        guard var components = URLComponents(url: location, resolvingAgainstBaseURL: false) else { return "a store" }
        if components.password != nil { components.password = "…" }
        return components.string ?? "a store"
    }
}
