import FogKit
import Testing
import Foundation

/// A container in a fresh temporary directory, removed when the test ends.
struct TestStore: ~Copyable {
    let directory: URL
    /// The store's administrator (indexes, index advice, backups, store info, integrity);
    /// `container` was made by it, so its queries count toward `admin.indexAdvice()`.
    let admin: Container.Administrator
    let container: Container

    init(user: String? = "alice", configuration: Container.Configuration = .init(durability: .none)) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-test-\(UUID().uuidString)")
        let admin = try Container.Administrator(identifier: "iCloud.test", directory: directory, configuration: configuration)
        do {
            container = try admin.container(user: user)
        } catch {
            admin.close()
            throw error
        }
        self.admin = admin
    }

    /// Another container on the same directory, for another user.
    func container(user: String?) throws -> Container {
        try Container(identifier: "iCloud.test", directory: directory, user: user, configuration: container.configuration)
    }

    deinit {
        container.close()
        admin.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A fresh temporary directory, removed when the test ends; for tests that open
/// and close containers themselves (reopening needs every container closed).
struct TemporaryDirectory: ~Copyable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("fogkit-test-\(UUID().uuidString)")
    }

    /// Opens a container on the directory; the caller closes it.
    func open(user: String? = "alice", identifier: String = "iCloud.test") throws -> Container {
        try Container(identifier: identifier, directory: url, user: user, configuration: .init(durability: .none))
    }

    /// Opens the directory's administrator; the caller closes it.
    func openAdministrator(identifier: String = "iCloud.test") throws -> Container.Administrator {
        try Container.Administrator(identifier: identifier, directory: url, configuration: .init(durability: .none))
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs `body`, expecting it to throw a ``FogError`` with `code`; returns the error.
@discardableResult
func expectFogError<R>(
    _ code: FogError.Code, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async -> FogError? {
    do {
        let value = try await body()
        Issue.record("expected \(code), but it succeeded with \(value)\(comment.map { " — \($0)" } ?? "")", sourceLocation: sourceLocation)
        return nil
    } catch let error as FogError {
        #expect(error.code == code, "expected \(code), got \(error)\(comment.map { " — \($0)" } ?? "")", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected FogError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

extension Result {
    /// The ``FogError`` code of a failure, or `nil` on success (or for other errors).
    var fogCode: FogError.Code? {
        if case .failure(let error) = self { return (error as? FogError)?.code }
        return nil
    }

    /// Whether the result is a success.
    var succeeded: Bool {
        if case .success = self { return true }
        return false
    }
}

/// The code of `error` when it is a ``FogError``.
func fogCode(_ error: (any Error)?) -> FogError.Code? { (error as? FogError)?.code }

/// Expects two records to hold the same type, ID, fields, parent and system fields.
func expectSameRecord(_ a: Record, _ b: Record, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(a.recordType == b.recordType, sourceLocation: sourceLocation)
    #expect(a.recordID == b.recordID, sourceLocation: sourceLocation)
    #expect(a.allKeys() == b.allKeys(), sourceLocation: sourceLocation)
    for key in Set(a.allKeys()).union(b.allKeys()) {
        #expect(a.fieldValue(forKey: key) == b.fieldValue(forKey: key), "field \(key)", sourceLocation: sourceLocation)
    }
    #expect(a.parent == b.parent, sourceLocation: sourceLocation)
    #expect(a.recordChangeTag == b.recordChangeTag, sourceLocation: sourceLocation)
    #expect(a.creationDate == b.creationDate, sourceLocation: sourceLocation)
    #expect(a.modificationDate == b.modificationDate, sourceLocation: sourceLocation)
    #expect(a.creatorUserRecordID == b.creatorUserRecordID, sourceLocation: sourceLocation)
    #expect(a.lastModifiedUserRecordID == b.lastModifiedUserRecordID, sourceLocation: sourceLocation)
}

/// Expects that no record with `id` is stored (fetch → unknownItem, or zoneNotFound for a missing zone).
func expectNotStored(
    _ id: Record.ID, in database: Database, code: FogError.Code = .unknownItem,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    await expectFogError(code, "record \(id.recordName) should not be stored", sourceLocation: sourceLocation) {
        try await database.record(for: id)
    }
}
