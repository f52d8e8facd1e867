import FogKit
import Foundation
import Testing

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
