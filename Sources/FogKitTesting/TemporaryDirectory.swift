import FogKit
import Foundation

/// A unique directory under `FileManager.default.temporaryDirectory`, removed by
/// ``remove()`` and, as a safety net, when the value is released.
///
/// For tests that open and close stores themselves (reopening needs every container on
/// the directory closed); ``TestStore`` is simpler otherwise.
public final class TemporaryDirectory: Sendable {
    /// The directory. It exists from `init` until ``remove()``.
    public let url: URL

    /// Creates a fresh directory whose name contains `label` (letters and digits only, at
    /// most 40 of them).
    public init(_ label: String = "test") throws {
        let safe = String(label.map { $0.isLetter || $0.isNumber ? $0 : "-" }.prefix(40))
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("fog-test-\(safe)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory (not created).
    public func appending(_ component: String) -> URL {
        url.appendingPathComponent(component, isDirectory: true)
    }

    /// Opens a container on the directory, without `fsync`; the caller closes it.
    ///
    /// - Parameters:
    ///   - user: The user identity; `nil` for no signed-in user.
    ///   - identifier: The container identifier.
    /// - Returns: The open container.
    /// - Throws: What `Container.init` throws.
    public func open(user: String? = "alice", identifier: String = "iCloud.test") throws -> Container {
        try Container(identifier: identifier, directory: url, user: user, configuration: .init(durability: .none))
    }

    /// Opens the directory's administrator (without `fsync`); the caller closes it.
    public func openAdministrator(identifier: String = "iCloud.test") throws -> Container.Administrator {
        try Container.Administrator(identifier: identifier, directory: url, configuration: .init(durability: .none))
    }

    /// Removes the directory and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    deinit { remove() }
}

/// Runs `body` with a fresh temporary directory that is removed afterwards.
///
/// - Parameters:
///   - label: A label for the directory's name; by default the calling function's name.
///   - body: The work to do in the directory.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws, or the error creating the directory.
public func withTemporaryDirectory<R>(
    _ label: String = #function, _ body: (TemporaryDirectory) throws -> R
) throws -> R {
    let directory = try TemporaryDirectory(label)
    defer { directory.remove() }
    return try body(directory)
}

/// Runs `body` with a fresh temporary directory that is removed afterwards.
///
/// - Parameters:
///   - label: A label for the directory's name; by default the calling function's name.
///   - isolation: The actor `body` runs on; the caller's by default.
///   - body: The work to do in the directory.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws, or the error creating the directory.
public func withTemporaryDirectory<R>(
    _ label: String = #function,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TemporaryDirectory) async throws -> R
) async throws -> R {
    let directory = try TemporaryDirectory(label)
    defer { directory.remove() }
    return try await body(directory)
}
