import Foundation

/// Fetches the zones that changed in a database since a change token (CloudKit's
/// `CKFetchDatabaseChangesOperation`).
///
/// For each page: ``recordZoneWithIDChangedBlock`` for zones created or whose records
/// changed, ``recordZoneWithIDWasDeletedBlock`` for deleted zones and
/// ``recordZoneWithIDWasPurgedBlock`` for purged ones (instead of the deleted block); then,
/// when more pages follow and ``fetchAllChanges`` is set, ``changeTokenUpdatedBlock``. Last:
/// ``fetchDatabaseChangesResultBlock`` (and the older ``fetchDatabaseChangesCompletionBlock``)
/// with the final token and `moreComing`.
///
/// The private database's default zone is not reported, as in CloudKit, unless the
/// container was opened with ``Container/ChangeFeeds/everyZone``.
public final class FetchDatabaseChangesOperation: DatabaseOperation, @unchecked Sendable {
    /// The token of the last fetch, or `nil` for every zone.
    public var previousServerChangeToken: ServerChangeToken?
    /// The most zone events per page; 0 (the default) lets FogKit choose (400).
    public var resultsLimit: Int = 0
    /// Whether to read every page (the default) or one.
    public var fetchAllChanges = true

    /// Called for each zone created or changed.
    public var recordZoneWithIDChangedBlock: ((RecordZone.ID) -> Void)?
    /// Called for each zone deleted.
    public var recordZoneWithIDWasDeletedBlock: ((RecordZone.ID) -> Void)?
    /// Called for each zone purged (see ``Database/purgeRecordZone(withID:)``).
    public var recordZoneWithIDWasPurgedBlock: ((RecordZone.ID) -> Void)?
    /// Called for zones deleted by an encrypted-data reset; FogKit never calls it.
    public var recordZoneWithIDWasDeletedDueToUserEncryptedDataResetBlock: ((RecordZone.ID) -> Void)?
    /// Called between pages with the token after the page.
    public var changeTokenUpdatedBlock: ((ServerChangeToken) -> Void)?
    /// Called once at the end.
    public var fetchDatabaseChangesResultBlock: ((Result<(serverChangeToken: ServerChangeToken, moreComing: Bool), any Error>) -> Void)?
    /// The older final callback.
    @available(*, deprecated, renamed: "fetchDatabaseChangesResultBlock")
    public var fetchDatabaseChangesCompletionBlock: ((ServerChangeToken?, Bool, (any Error)?) -> Void)? {
        get { legacyCompletion }
        set { legacyCompletion = newValue }
    }

    private var legacyCompletion: ((ServerChangeToken?, Bool, (any Error)?) -> Void)?

    /// Creates an operation that fetches the changes since `previousServerChangeToken`.
    public convenience init(previousServerChangeToken: ServerChangeToken? = nil) {
        self.init()
        self.previousServerChangeToken = previousServerChangeToken
    }

    override func execute(in database: Database) {
        let context = database.context
        var token = previousServerChangeToken
        while true {
            if isCancelled { return finish(with: cancellationError()) }
            let page: DatabaseChangePage
            do {
                page = try database.engine.feeds.databaseChanges(since: token, limit: resultsLimit, context: context)
            } catch {
                return finish(with: FogError.wrapping(error))
            }
            for zoneID in page.changed { recordZoneWithIDChangedBlock?(zoneID) }
            for (zoneID, kind) in page.deleted {
                if kind == .purged { recordZoneWithIDWasPurgedBlock?(zoneID) } else { recordZoneWithIDWasDeletedBlock?(zoneID) }
            }
            token = page.token
            if page.moreComing, fetchAllChanges {
                changeTokenUpdatedBlock?(page.token)
                continue
            }
            fetchDatabaseChangesResultBlock?(.success((page.token, page.moreComing)))
            legacyCompletion?(page.token, page.moreComing, nil)
            return
        }
    }

    override func finish(with error: FogError) {
        fetchDatabaseChangesResultBlock?(.failure(error))
        legacyCompletion?(nil, false, error)
    }
}
