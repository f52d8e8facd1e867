import Foundation

extension SyncEngine {
    /// One request's worth of record changes to send (CloudKit's
    /// `CKSyncEngine.RecordZoneChangeBatch`), which the delegate returns from
    /// ``SyncEngineDelegate/nextRecordZoneChangeBatch(_:syncEngine:)``.
    public struct RecordZoneChangeBatch: Sendable {
        /// The most changes (saves and deletes) in one batch: 400, the limit of one modify
        /// request (``OperationLimits/cloudKit``).
        public static let maximumItems = OperationLimits.cloudKit.maximumItems
        /// The most bytes of record data in one batch: 2 MB, the limit of one modify request.
        public static let maximumBytes = OperationLimits.cloudKit.maximumBytes

        /// The records to save.
        public var recordsToSave: [Record]
        /// The IDs of the records to delete.
        public var recordIDsToDelete: [Record.ID]
        /// Whether the changes of each zone are applied all or nothing: the first failure in
        /// a zone fails the zone's other changes with `batchRequestFailed`.
        public var atomicByZone: Bool

        /// A batch of exactly these changes; the caller keeps it within the limits (a batch
        /// over them is split by the engine, or fails with `limitExceeded` for one record
        /// that is too large).
        public init(recordsToSave: [Record] = [], recordIDsToDelete: [Record.ID] = [], atomicByZone: Bool = false) {
            self.recordsToSave = recordsToSave
            self.recordIDsToDelete = recordIDsToDelete
            self.atomicByZone = atomicByZone
        }

        /// A batch of the first of `pendingChanges`, in order, that fit the limits
        /// (``maximumItems``, ``maximumBytes``); the rest stay for the next batch. Each save
        /// asks `recordProvider` for its record; a `nil` answer skips the change (which stays
        /// pending: remove it from the state if it is stale). `nil` when nothing is left to send.
        public init?(
            pendingChanges: [PendingRecordZoneChange], recordProvider: @Sendable (Record.ID) async -> Record?
        ) async {
            var saves: [Record] = []
            var deletes: [Record.ID] = []
            var bytes = 0
            walk: for change in pendingChanges {
                if saves.count + deletes.count >= Self.maximumItems { break walk }
                switch change {
                case .saveRecord(let id):
                    guard let record = await recordProvider(id) else { continue }
                    let size = Self.size(of: record)
                    if bytes + size > Self.maximumBytes, !(saves.isEmpty && deletes.isEmpty) { break walk }
                    bytes += size
                    saves.append(record)
                case .deleteRecord(let id):
                    deletes.append(id)
                }
            }
            if saves.isEmpty && deletes.isEmpty { return nil }
            self.init(recordsToSave: saves, recordIDsToDelete: deletes)
        }

        /// The bytes a record counts toward a request's size (its fields, assets excluded).
        static func size(of record: Record) -> Int {
            var values: [String: FieldValue] = [:]
            for key in record.allKeys() {
                if let value = record.fieldValue(forKey: key) { values[key] = value }
            }
            return RecordCodec.countedSize(of: values) + record.recordID.recordName.utf8.count
        }

        /// The number of changes.
        var count: Int { recordsToSave.count + recordIDsToDelete.count }
    }
}
