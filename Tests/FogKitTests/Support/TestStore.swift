import FogKit
import Foundation

/// A container in a fresh temporary directory, removed when the test ends.
struct TestStore: ~Copyable {
    let directory: URL
    let container: Container

    init(user: String? = "alice", configuration: Container.Configuration = .init(durability: .none)) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-test-\(UUID().uuidString)")
        container = try Container(identifier: "iCloud.test", directory: directory, user: user, configuration: configuration)
    }

    /// Another container on the same directory, for another user.
    func container(user: String?) throws -> Container {
        try Container(identifier: "iCloud.test", directory: directory, user: user, configuration: container.configuration)
    }

    deinit {
        container.close()
        try? FileManager.default.removeItem(at: directory)
    }
}
