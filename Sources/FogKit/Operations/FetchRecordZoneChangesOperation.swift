import Foundation
import Synchronization

/// Fetches the record changes of zones since change tokens (CloudKit's
/// `CKFetchRecordZoneChangesOperation`).
///
/// Zones are read one after another. For each page of a zone's changes:
/// ``recordWasChangedBlock`` (and the older ``recordChangedBlock``) for each record created
/// or changed, as it is now; ``recordWithIDWasDeletedBlock`` for each deletion; then, when
/// more pages follow and ``fetchAllChanges`` is set, ``recordZoneChangeTokensUpdatedBlock``
/// with the token after the page. At the end of each zone: ``recordZoneFetchResultBlock``
/// (and the older ``recordZoneFetchCompletionBlock``) with the final token, the zone's last
/// `clientChangeTokenData` and `moreComing`. Last: ``fetchRecordZoneChangesResultBlock``
/// (and the older ``fetchRecordZoneChangesCompletionBlock``), with
/// ``FogError/Code/partialFailure`` when a zone failed.
///
/// Each page is read in one snapshot. A token handed to a callback stays valid whatever
/// happens later in the operation.
public final class FetchRecordZoneChangesOperation: DatabaseOperation, @unchecked Sendable {
    /// What to fetch from one zone (CloudKit's `ZoneConfiguration`).
    ///
    /// A reference type, as CloudKit's is, so that a configuration made with `let` can be set
    /// afterwards (`configuration.previousServerChangeToken = token`); safe to share between
    /// threads. Two configurations are equal when their values are.
    public final class ZoneConfiguration: Sendable, Hashable {
        private struct Values: Hashable {
            var previousServerChangeToken: ServerChangeToken?
            var resultsLimit: Int
            var desiredKeys: [Record.FieldKey]?
        }
        private let values: Mutex<Values>

        /// The token of the last fetch, or `nil` for every change.
        public var previousServerChangeToken: ServerChangeToken? {
            get { values.withLock { $0.previousServerChangeToken } }
            set { values.withLock { $0.previousServerChangeToken = newValue } }
        }
        /// The most changes per page; 0 (the default) lets FogKit choose (400).
        public var resultsLimit: Int {
            get { values.withLock { $0.resultsLimit } }
            set { values.withLock { $0.resultsLimit = newValue } }
        }
        /// The fields of changed records to fetch: `nil` for all, `[]` for none.
        public var desiredKeys: [Record.FieldKey]? {
            get { values.withLock { $0.desiredKeys } }
            set { values.withLock { $0.desiredKeys = newValue } }
        }

        /// Creates a configuration.
        public init(previousServerChangeToken: ServerChangeToken? = nil, resultsLimit: Int? = nil, desiredKeys: [Record.FieldKey]? = nil) {
            values = Mutex(
                Values(previousServerChangeToken: previousServerChangeToken, resultsLimit: resultsLimit ?? 0, desiredKeys: desiredKeys))
        }

        /// Whether the two configurations hold the same values.
        public static func == (a: ZoneConfiguration, b: ZoneConfiguration) -> Bool {
            a === b || a.values.withLock { $0 } == b.values.withLock { $0 }
        }

        /// Hashes the configuration's values.
        public func hash(into hasher: inout Hasher) { hasher.combine(values.withLock { $0 }) }
    }

    /// The zones to fetch, in order.
    public var recordZoneIDs: [RecordZone.ID]?
    /// Each zone's token, page size and desired keys; zones without one start from the beginning.
    public var configurationsByRecordZoneID: [RecordZone.ID: ZoneConfiguration]?
    /// Whether to read every page of each zone (the default) or one page per zone.
    public var fetchAllChanges = true

    /// Called for each changed record.
    public var recordWasChangedBlock: ((Record.ID, Result<Record, any Error>) -> Void)?
    /// Called for each deleted record, with its type.
    public var recordWithIDWasDeletedBlock: ((Record.ID, Record.RecordType) -> Void)?
    /// Called between pages of a zone with the token after the page and the zone's client
    /// change token data.
    public var recordZoneChangeTokensUpdatedBlock: ((RecordZone.ID, ServerChangeToken?, Data?) -> Void)?
    /// Called at the end of each zone.
    public var recordZoneFetchResultBlock:
        (
            (RecordZone.ID, Result<(serverChangeToken: ServerChangeToken, clientChangeTokenData: Data?, moreComing: Bool), any Error>) ->
                Void
        )?
    /// Called once at the end.
    public var fetchRecordZoneChangesResultBlock: ((Result<Void, any Error>) -> Void)?

    /// The older per-record callback.
    @available(*, deprecated, renamed: "recordWasChangedBlock")
    public var recordChangedBlock: ((Record) -> Void)? {
        get { legacyChanged }
        set { legacyChanged = newValue }
    }
    /// The older per-zone callback.
    @available(*, deprecated, renamed: "recordZoneFetchResultBlock")
    public var recordZoneFetchCompletionBlock: ((RecordZone.ID, ServerChangeToken?, Data?, Bool, (any Error)?) -> Void)? {
        get { legacyZone }
        set { legacyZone = newValue }
    }
    /// The older final callback.
    @available(*, deprecated, renamed: "fetchRecordZoneChangesResultBlock")
    public var fetchRecordZoneChangesCompletionBlock: (((any Error)?) -> Void)? {
        get { legacyCompletion }
        set { legacyCompletion = newValue }
    }

    private var legacyChanged: ((Record) -> Void)?
    private var legacyZone: ((RecordZone.ID, ServerChangeToken?, Data?, Bool, (any Error)?) -> Void)?
    private var legacyCompletion: (((any Error)?) -> Void)?

    /// Creates an operation for `recordZoneIDs`, each with its configuration.
    public convenience init(recordZoneIDs: [RecordZone.ID]? = nil, configurationsByRecordZoneID: [RecordZone.ID: ZoneConfiguration]? = nil)
    {
        self.init()
        self.recordZoneIDs = recordZoneIDs
        self.configurationsByRecordZoneID = configurationsByRecordZoneID
    }

    override func execute(in database: Database) {
        let context = database.context
        var partial: [AnyHashable: any Error] = [:]
        for zoneID in recordZoneIDs ?? [] {
            if isCancelled { return finish(with: cancellationError()) }
            let configuration = configurationsByRecordZoneID?[zoneID] ?? ZoneConfiguration()
            var token = configuration.previousServerChangeToken
            while true {
                if isCancelled { return finish(with: cancellationError()) }
                let page: ZoneChangePage
                do {
                    page = try database.engine.feeds.zoneChanges(
                        zoneID, since: token, desiredKeys: configuration.desiredKeys, limit: configuration.resultsLimit,
                        context: context)
                } catch {
                    let e = FogError.wrapping(error)
                    partial[zoneID] = e
                    recordZoneFetchResultBlock?(zoneID, .failure(e))
                    legacyZone?(zoneID, nil, nil, false, e)
                    break
                }
                for record in page.changed {
                    recordWasChangedBlock?(record.recordID, .success(record))
                    legacyChanged?(record)
                }
                for (id, type) in page.deleted { recordWithIDWasDeletedBlock?(id, type) }
                token = page.token
                if page.moreComing, fetchAllChanges {
                    recordZoneChangeTokensUpdatedBlock?(zoneID, page.token, page.clientChangeTokenData)
                    continue
                }
                recordZoneFetchResultBlock?(zoneID, .success((page.token, page.clientChangeTokenData, page.moreComing)))
                legacyZone?(zoneID, page.token, page.clientChangeTokenData, page.moreComing, nil)
                break
            }
        }
        let error: FogError? =
            partial.isEmpty
            ? nil
            : FogError(
                .partialFailure, message: "\(partial.count) zone\(partial.count == 1 ? "" : "s") could not be fetched",
                partialErrorsByItemID: partial)
        fetchRecordZoneChangesResultBlock?(error.map { .failure($0) } ?? .success(()))
        legacyCompletion?(error)
    }

    override func finish(with error: FogError) {
        fetchRecordZoneChangesResultBlock?(.failure(error))
        legacyCompletion?(error)
    }
}
