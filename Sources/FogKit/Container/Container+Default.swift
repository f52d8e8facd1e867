import Foundation

extension Container {
    /// The environment variable that names the folder holding the default stores
    /// (`FOGKIT_STORE_DIRECTORY`).
    public static let storeDirectoryVariable = "FOGKIT_STORE_DIRECTORY"
    /// The environment variable that names the signed-in user of containers opened
    /// without one (`FOGKIT_USER`); without it, ``defaultUser``.
    public static let userVariable = "FOGKIT_USER"
    /// The environment variable that names the identifier of ``default()``
    /// (`FOGKIT_CONTAINER`).
    public static let containerVariable = "FOGKIT_CONTAINER"

    /// The folder that holds the store of the container `identifier` when no directory is
    /// given: `$FOGKIT_STORE_DIRECTORY/<identifier>`, or else
    /// `$XDG_DATA_HOME/fogkit/<identifier>` (`~/.local/share/fogkit/<identifier>` without
    /// `XDG_DATA_HOME`).
    public static func defaultDirectory(forIdentifier identifier: String) -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let root = environment[storeDirectoryVariable], !root.isEmpty {
            base = URL(fileURLWithPath: root, isDirectory: true)
        } else if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            base = URL(fileURLWithPath: data, isDirectory: true).appendingPathComponent("fogkit", isDirectory: true)
        } else {
            base = FileManager.default.homeDirectoryForCurrentUser
                .appendingPathComponent(".local/share/fogkit", isDirectory: true)
        }
        // An identifier is one path component: slashes would leave the folder.
        let component = identifier.replacingOccurrences(of: "/", with: "_")
        return base.appendingPathComponent(component, isDirectory: true)
    }

    /// The signed-in user of containers opened without one: `$FOGKIT_USER`, or
    /// ``defaultUser``.
    public static var signedInUser: String {
        let user = ProcessInfo.processInfo.environment[userVariable] ?? ""
        return user.isEmpty ? defaultUser : user
    }

    /// The identifier of ``default()``: `$FOGKIT_CONTAINER`, or `iCloud.` followed by the
    /// main bundle's identifier (the process name when there is no bundle), as CloudKit
    /// derives it from the app's identifier.
    public static var defaultIdentifier: String {
        let environment = ProcessInfo.processInfo.environment
        if let identifier = environment[containerVariable], !identifier.isEmpty { return identifier }
        let app = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        return "iCloud.\(app)"
    }

    /// Opens the container `identifier` in its default folder
    /// (``defaultDirectory(forIdentifier:)``) for the signed-in user (``signedInUser``), as
    /// CloudKit's `CKContainer(identifier:)` does.
    ///
    /// Like CloudKit's, which stops an app that names a container it is not entitled to,
    /// this initializer cannot report an error: it stops the process, with the reason,
    /// when the store cannot be opened (an empty identifier, a folder that cannot be
    /// created, a store of another container). Use
    /// ``init(identifier:directory:user:configuration:)`` to handle such errors.
    public convenience init(identifier: String) {
        let directory = Container.defaultDirectory(forIdentifier: identifier)
        do {
            try self.init(identifier: identifier, directory: directory, user: Container.signedInUser)
        } catch {
            fatalError("FogKit could not open container \(identifier) in \(directory.path): \(error)")
        }
    }

    /// The app's default container (CloudKit's `CKContainer.default()`): the container
    /// ``defaultIdentifier`` in its default folder, for ``signedInUser``. Each call opens
    /// the container again; containers of one folder share one open store.
    public static func `default`() -> Container {
        Container(identifier: defaultIdentifier)
    }
}
