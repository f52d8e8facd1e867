import Foundation
import Synchronization

extension SyncEngine {
    /// One send: pending zone changes first, then record batches from the delegate, back
    /// to zones when the app adds zone changes meanwhile. Called with the work lock held.
    ///
    /// Within one send each change goes out once: a change the app adds again after it
    /// failed (a conflict it resolved, a zone it re-created) goes with the next send, so a
    /// send always ends. Returns `false` when it did nothing for want of a usable account.
    @discardableResult
    func send(_ options: SendChangesOptions, reason: SyncReason) async throws -> Bool {
        guard await reconcileAccount() else { return false }
        let context = SendChangesContext(reason: reason, options: options)
        await events.post(.willSendChanges(Event.WillSendChanges(context: context)))
        var failures: [AnyHashable: any Error] = [:]
        var sentZones: Set<RecordZone.ID> = []
        var sentRecords: Set<Record.ID> = []
        var ranOut = false
        do {
            while true {
                // Zones before the records that live in them.
                while true {
                    try Task.checkCancellation()
                    let changes = state.storage.pendingDatabaseChanges.filter {
                        options.scope.contains($0) && !sentZones.contains($0.zoneID)
                    }
                    .prefix(RecordZoneChangeBatch.maximumItems)
                    if changes.isEmpty { break }
                    sentZones.formUnion(changes.map(\.zoneID))
                    failures.merge(try await sendZones(Array(changes), group: options.operationGroup)) { a, _ in a }
                }
                try Task.checkCancellation()
                guard let delegate, let batch = await delegate.nextRecordZoneChangeBatch(context, syncEngine: self) else {
                    ranOut = true
                    break
                }
                let saves = batch.recordsToSave.filter { !sentRecords.contains($0.recordID) }
                let deletes = batch.recordIDsToDelete.filter { !sentRecords.contains($0) }
                if saves.isEmpty && deletes.isEmpty {
                    ranOut = true
                    break
                }
                sentRecords.formUnion(saves.map(\.recordID))
                sentRecords.formUnion(deletes)
                failures.merge(try await sendRecords(saves, deleting: deletes, atomicByZone: batch.atomicByZone, options: options)) {
                    a, _ in
                    a
                }
            }
            if ranOut, failures.isEmpty, state.storage.hasPendingUntrackedChanges {
                state.update { $0.hasPendingUntrackedChanges = false }
                await postStateUpdate()
            }
        } catch {
            await events.post(.didSendChanges(Event.DidSendChanges(context: context)))
            throw error
        }
        await events.post(.didSendChanges(Event.DidSendChanges(context: context)))
        if !failures.isEmpty {
            throw FogError(.partialFailure, message: "\(failures.count) changes failed to send", partialErrorsByItemID: failures)
        }
        return true
    }

    /// Sends one batch of zone changes and reports it; returns the failures by zone ID.
    private func sendZones(_ changes: [PendingDatabaseChange], group: OperationGroup) async throws -> [AnyHashable: any Error] {
        var zonesToSave: [RecordZone] = []
        var zoneIDsToDelete: [RecordZone.ID] = []
        for change in changes {
            switch change {
            case .saveZone(let zone): zonesToSave.append(zone)
            case .deleteZone(let id): zoneIDsToDelete.append(id)
            }
        }
        var saveResults: [RecordZone.ID: Result<RecordZone, FogError>] = [:]
        var deleteResults: [RecordZone.ID: Result<Void, FogError>] = [:]
        do {
            (saveResults, deleteResults) = try await withRetries {
                try await server.modifyRecordZones(saving: zonesToSave, deleting: zoneIDsToDelete, group: group)
            }
        } catch {
            let failure = FogError.syncError(error)
            if failure.code == .operationCancelled { throw failure }
            for zone in zonesToSave { saveResults[zone.zoneID] = .failure(failure) }
            for id in zoneIDsToDelete { deleteResults[id] = .failure(failure) }
        }
        var saved: [RecordZone] = []
        var failedSaves: [Event.SentDatabaseChanges.FailedZoneSave] = []
        var deleted: [RecordZone.ID] = []
        var failedDeletes: [RecordZone.ID: FogError] = [:]
        var done: [PendingDatabaseChange] = []
        var failures: [AnyHashable: any Error] = [:]
        for zone in zonesToSave {
            switch saveResults[zone.zoneID] ?? .failure(FogError(.internalError, message: "no result for zone \(zone.zoneID)")) {
            case .success(let stored):
                saved.append(stored)
                done.append(.saveZone(zone))
            case .failure(let error):
                failedSaves.append(Event.SentDatabaseChanges.FailedZoneSave(zone: zone, error: error))
                failures[zone.zoneID] = error
                if !SyncRetryPolicy.keepsPending(error.code) { done.append(.saveZone(zone)) }
            }
        }
        for id in zoneIDsToDelete {
            switch deleteResults[id] ?? .failure(FogError(.internalError, message: "no result for zone \(id)")) {
            case .success:
                deleted.append(id)
                done.append(.deleteZone(id))
            case .failure(let error) where error.code == .zoneNotFound:
                // Already gone: what the delete wanted.
                deleted.append(id)
                done.append(.deleteZone(id))
            case .failure(let error):
                failedDeletes[id] = error
                failures[id] = error
                if !SyncRetryPolicy.keepsPending(error.code) { done.append(.deleteZone(id)) }
            }
        }
        let finished = Set(done)
        state.update { s in
            s.pendingDatabaseChanges.removeAll { finished.contains($0) }
            for id in deleted {
                s.zoneTokens[id] = nil
                s.zoneIDsWithUnfetchedServerChanges.removeAll { $0 == id }
            }
        }
        await events.post(
            .sentDatabaseChanges(
                Event.SentDatabaseChanges(
                    savedZones: saved, failedZoneSaves: failedSaves, deletedZoneIDs: deleted, failedZoneDeletes: failedDeletes)
            ))
        await postStateUpdate()
        return failures
    }

    /// Sends one batch of record changes (retrying transient failures, splitting a batch
    /// the server finds too large) and reports it; returns the failures by record ID.
    private func sendRecords(
        _ records: [Record], deleting recordIDs: [Record.ID], atomicByZone: Bool, options: SendChangesOptions
    ) async throws -> [AnyHashable: any Error] {
        let versions = state.versions(of: records.map(\.recordID) + recordIDs)
        var savedRecords: [Record] = []
        var failedSaves: [Event.SentRecordZoneChanges.FailedRecordSave] = []
        var deletedIDs: [Record.ID] = []
        var failedDeletes: [Record.ID: FogError] = [:]
        /// Changes no longer pending: sent, or failed for a reason the app must resolve.
        var done: [PendingRecordZoneChange] = []

        // Changes outside the send's scope fail, and stay pending for a send that covers them.
        let outside = FogError(.invalidArguments, message: "the change is outside the scope of the send's options")
        var toSave = records.filter { options.scope.contains($0.recordID) }
        var toDelete = recordIDs.filter { options.scope.contains($0) }
        for record in records where !options.scope.contains(record.recordID) {
            failedSaves.append(Event.SentRecordZoneChanges.FailedRecordSave(record: record, error: outside))
        }
        for id in recordIDs where !options.scope.contains(id) { failedDeletes[id] = outside }

        var splitFailures: [AnyHashable: any Error] = [:]
        var attempt = 0
        while !(toSave.isEmpty && toDelete.isEmpty) {
            let saving = toSave
            let deleting = toDelete
            let result: (saveResults: [Record.ID: Result<Record, FogError>], deleteResults: [Record.ID: Result<Void, FogError>])
            do {
                result = try await server.modifyRecords(
                    saving: saving, deleting: deleting, atomicByZone: atomicByZone, group: options.operationGroup)
            } catch {
                let failure = FogError.syncError(error)
                if failure.code == .operationCancelled { throw failure }
                if failure.code == .serverResponseLost {
                    // The request may have committed: remember what it saved.
                    lostSaves.withLock { lost in for record in saving { lost[record.recordID] = record } }
                }
                if failure.code == .limitExceeded, saving.count + deleting.count > 1 {
                    // Too large for one request: send it in two halves, each reported alone.
                    let half = (saving.count + deleting.count) / 2
                    let firstSaves = Array(saving.prefix(half))
                    let firstDeletes = Array(deleting.prefix(max(0, half - saving.count)))
                    splitFailures = try await sendRecords(firstSaves, deleting: firstDeletes, atomicByZone: atomicByZone, options: options)
                    splitFailures.merge(
                        try await sendRecords(
                            Array(saving.dropFirst(firstSaves.count)), deleting: Array(deleting.dropFirst(firstDeletes.count)),
                            atomicByZone: atomicByZone, options: options)
                    ) { a, _ in a }
                    toSave = []
                    toDelete = []
                    break
                }
                if SyncRetryPolicy.isRetryable(failure.code), attempt < retry.maximumRetries {
                    attempt += 1
                    try await Task.sleep(for: retry.delay(after: failure, attempt: attempt))
                    continue
                }
                for record in saving { failedSaves.append(Event.SentRecordZoneChanges.FailedRecordSave(record: record, error: failure)) }
                for id in deleting { failedDeletes[id] = failure }
                if !SyncRetryPolicy.keepsPending(failure.code) {
                    done += saving.map { .saveRecord($0.recordID) } + deleting.map { .deleteRecord($0) }
                }
                break
            }
            var retrySaves: [Record] = []
            var retryDeletes: [Record.ID] = []
            var retryError: FogError?
            let lost = lostSaves.withLock { $0 }
            for record in saving {
                let id = record.recordID
                let outcome = result.saveResults[id] ?? .failure(FogError(.internalError, message: "no result for record \(id)"))
                switch outcome {
                case .success(let stored):
                    savedRecords.append(stored)
                    done.append(.saveRecord(id))
                    lostSaves.withLock { _ = $0.removeValue(forKey: id) }
                case .failure(let error):
                    if error.code == .serverRecordChanged, let sent = lost[id], let stored = error.serverRecord,
                        Self.sameContent(sent, stored)
                    {
                        // The save whose reply was lost: it committed.
                        savedRecords.append(stored)
                        done.append(.saveRecord(id))
                        lostSaves.withLock { _ = $0.removeValue(forKey: id) }
                    } else if SyncRetryPolicy.isRetryable(error.code), attempt < retry.maximumRetries {
                        retrySaves.append(record)
                        retryError = retryError ?? error
                    } else {
                        failedSaves.append(Event.SentRecordZoneChanges.FailedRecordSave(record: record, error: error))
                        if !SyncRetryPolicy.keepsPending(error.code) {
                            done.append(.saveRecord(id))
                            lostSaves.withLock { _ = $0.removeValue(forKey: id) }
                        }
                    }
                }
            }
            for id in deleting {
                let outcome = result.deleteResults[id] ?? .failure(FogError(.internalError, message: "no result for record \(id)"))
                switch outcome {
                case .success:
                    deletedIDs.append(id)
                    done.append(.deleteRecord(id))
                case .failure(let error) where error.code == .unknownItem:
                    // Already gone (deleted elsewhere, or by a request whose reply was lost).
                    deletedIDs.append(id)
                    done.append(.deleteRecord(id))
                case .failure(let error):
                    if SyncRetryPolicy.isRetryable(error.code), attempt < retry.maximumRetries {
                        retryDeletes.append(id)
                        retryError = retryError ?? error
                    } else {
                        failedDeletes[id] = error
                        if !SyncRetryPolicy.keepsPending(error.code) { done.append(.deleteRecord(id)) }
                    }
                }
            }
            toSave = retrySaves
            toDelete = retryDeletes
            if !(toSave.isEmpty && toDelete.isEmpty) {
                attempt += 1
                try await Task.sleep(for: retry.delay(after: retryError, attempt: attempt))
            }
        }
        if savedRecords.isEmpty, failedSaves.isEmpty, deletedIDs.isEmpty, failedDeletes.isEmpty { return splitFailures }
        state.removeSent(done, versions: versions)
        await events.post(
            .sentRecordZoneChanges(
                Event.SentRecordZoneChanges(
                    savedRecords: savedRecords, failedRecordSaves: failedSaves, deletedRecordIDs: deletedIDs,
                    failedRecordDeletes: failedDeletes)))
        await postStateUpdate()
        var failures = splitFailures
        for failed in failedSaves { failures[failed.record.recordID] = failed.error }
        for (id, error) in failedDeletes { failures[id] = error }
        return failures
    }

    /// Whether two records hold the same type and fields.
    static func sameContent(_ a: Record, _ b: Record) -> Bool {
        guard a.recordType == b.recordType else { return false }
        let keys = Set(a.allKeys())
        guard keys == Set(b.allKeys()) else { return false }
        return keys.allSatisfy { a.fieldValue(forKey: $0) == b.fieldValue(forKey: $0) }
    }
}
