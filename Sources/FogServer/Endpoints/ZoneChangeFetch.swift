import FogKit
import Foundation
import Synchronization

/// One page of a zone's record changes through ``FetchRecordZoneChangesOperation``, which
/// delivers changed records in commit order (the `async` form hands them over by ID).
struct ZoneChangeFetch: Sendable {
    var changed: [(Record.ID, Result<Record, any Error>)] = []
    var deleted: [(Record.ID, String)] = []
    var token: ServerChangeToken?
    var moreComing = false

    static func page(
        _ database: Database, zoneID: RecordZone.ID, since token: ServerChangeToken?, desiredKeys: [String]?, resultsLimit: Int
    ) async throws -> ZoneChangeFetch {
        let collected = Mutex(ZoneChangeFetch())
        let operation = FetchRecordZoneChangesOperation(
            recordZoneIDs: [zoneID],
            configurationsByRecordZoneID: [
                zoneID: .init(previousServerChangeToken: token, resultsLimit: resultsLimit, desiredKeys: desiredKeys)
            ])
        operation.fetchAllChanges = false
        operation.recordWasChangedBlock = { id, result in collected.withLock { $0.changed.append((id, result)) } }
        operation.recordWithIDWasDeletedBlock = { id, type in collected.withLock { $0.deleted.append((id, type)) } }
        let zoneResult = Mutex<(any Error)?>(nil)
        operation.recordZoneFetchResultBlock = { _, result in
            switch result {
            case .success(let page):
                collected.withLock {
                    $0.token = page.serverChangeToken
                    $0.moreComing = page.moreComing
                }
            case .failure(let error): zoneResult.withLock { $0 = error }
            }
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            operation.fetchRecordZoneChangesResultBlock = { result in
                if let error = zoneResult.withLock({ $0 }) { return continuation.resume(throwing: error) }
                continuation.resume(with: result)
            }
            database.add(operation)
        }
        return collected.withLock { $0 }
    }
}
