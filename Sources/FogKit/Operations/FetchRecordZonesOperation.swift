import Foundation

/// Fetches record zones (CloudKit's `CKFetchRecordZonesOperation`).
///
/// Callbacks, in order: ``perRecordZoneResultBlock`` for each zone, then
/// ``fetchRecordZonesResultBlock`` and the older ``fetchRecordZonesCompletionBlock``.
/// Missing zones fail with ``FogError/Code/zoneNotFound`` each, and the operation
/// with ``FogError/Code/partialFailure``.
public final class FetchRecordZonesOperation: DatabaseOperation, @unchecked Sendable {
    /// The IDs of the zones to fetch; `nil` for every zone of the database.
    public var recordZoneIDs: [RecordZone.ID]?

    /// Called for each zone with the zone or the item's error.
    public var perRecordZoneResultBlock: ((RecordZone.ID, Result<RecordZone, any Error>) -> Void)?
    /// Called once at the end.
    public var fetchRecordZonesResultBlock: ((Result<Void, any Error>) -> Void)?
    /// The older final callback: the zones by ID and the operation's error.
    @available(*, deprecated, renamed: "fetchRecordZonesResultBlock")
    public var fetchRecordZonesCompletionBlock: (([RecordZone.ID: RecordZone]?, (any Error)?) -> Void)? {
        get { legacyCompletion }
        set { legacyCompletion = newValue }
    }

    private var legacyCompletion: (([RecordZone.ID: RecordZone]?, (any Error)?) -> Void)?

    /// Creates an operation that fetches the zones with `recordZoneIDs`.
    public convenience init(recordZoneIDs: [RecordZone.ID]) {
        self.init()
        self.recordZoneIDs = recordZoneIDs
    }

    /// An operation that fetches every zone of the database.
    public static func fetchAllRecordZonesOperation() -> FetchRecordZonesOperation {
        FetchRecordZonesOperation()
    }

    override func execute(in database: Database) {
        let results: [(RecordZone.ID, Result<RecordZone, FogError>)]
        do {
            if let recordZoneIDs {
                results = try database.engine.zones.fetchZones(recordZoneIDs, context: database.context)
            } else {
                results = try database.engine.zones.allZones(context: database.context).map { ($0.zoneID, .success($0)) }
            }
        } catch {
            return finish(with: FogError.wrapping(error))
        }
        var partial: [AnyHashable: any Error] = [:]
        var zones: [RecordZone.ID: RecordZone] = [:]
        for (id, result) in results {
            switch result {
            case .success(let zone): zones[id] = zone
            case .failure(let error): partial[id] = error
            }
            perRecordZoneResultBlock?(id, result.mapError { $0 })
        }
        let error: FogError? =
            partial.isEmpty
            ? nil : FogError(.partialFailure, message: "\(partial.count) zones could not be fetched", partialErrorsByItemID: partial)
        fetchRecordZonesResultBlock?(error.map { .failure($0) } ?? .success(()))
        legacyCompletion?(zones, error)
    }

    override func finish(with error: FogError) {
        for id in recordZoneIDs ?? [] { perRecordZoneResultBlock?(id, .failure(error)) }
        fetchRecordZonesResultBlock?(.failure(error))
        legacyCompletion?(nil, error)
    }
}
