import FogKit
import FogKitTesting
import Foundation
import Testing

/// The callbacks that CloudKit deprecated in favour of the `Result` blocks, which older apps
/// still set: each must see what the newer blocks see. The setters are deprecated, so each test
/// is too.
@Suite struct LegacyOperationBlockTests {
    let store: TestStore
    var db: Database { store.privateDatabase }
    static let zone = RecordZone.ID(zoneName: "Legacy")

    init() async throws {
        store = try TestStore()
        _ = try await store.privateDatabase.save(RecordZone(zoneID: Self.zone))
    }

    private func id(_ name: String) -> Record.ID { Record.ID(recordName: name, zoneID: Self.zone) }

    @Test @available(*, deprecated) func modifyRecordsLegacyBlocks() async throws {
        let old = try await db.save(Record(recordType: "Note", recordID: id("old")))
        let new = Record(recordType: "Note", recordID: id("new"))
        let log = EventLog()
        let op = ModifyRecordsOperation(recordsToSave: [new], recordIDsToDelete: [old.recordID])
        op.perRecordProgressBlock = { record, progress in log.append("progress \(record.recordID.recordName) \(progress)") }
        op.perRecordCompletionBlock = { record, error in log.append("saved \(record.recordID.recordName) error=\(error != nil)") }
        op.modifyRecordsCompletionBlock = { saved, deleted, error in
            log.append(
                "done saved=\(saved?.map(\.recordID.recordName) ?? []) deleted=\(deleted?.map(\.recordName) ?? []) error=\(error != nil)")
        }
        await db.run(op)
        #expect(log.all.contains("saved new error=false"))
        #expect(log.all.last == "done saved=[\"new\"] deleted=[\"old\"] error=false")
        #expect(log.all.contains { $0.hasPrefix("progress new") })
    }

    @Test @available(*, deprecated) func fetchRecordsLegacyBlocksAndDesiredKeys() async throws {
        let note = Record(recordType: "Note", recordID: id("n"))
        note["title"] = "Kept"
        note["body"] = "Dropped"
        _ = try await db.save(note)
        let log = EventLog()
        let op = FetchRecordsOperation(recordIDs: [id("n"), id("missing")])
        op.desiredKeys = ["title"]
        op.perRecordProgressBlock = { recordID, _ in log.append("progress \(recordID.recordName)") }
        op.perRecordCompletionBlock = { record, recordID, error in
            let fields = record.map { "\($0["title"] as? String ?? "-")/\($0["body"] as? String ?? "-")" } ?? "none"
            log.append("record \(recordID?.recordName ?? "?") \(fields) \((error as? FogError)?.code.description ?? "ok")")
        }
        op.fetchRecordsCompletionBlock = { byID, error in
            log.append("done \(byID?.keys.map(\.recordName).sorted() ?? []) \((error as? FogError)?.code.description ?? "ok")")
        }
        await db.run(op)
        #expect(log.all.contains("record n Kept/- ok"))
        #expect(log.all.contains("record missing none unknownItem"))
        #expect(log.all.last == "done [\"n\"] partialFailure")
    }

    @Test @available(*, deprecated) func zoneChangesLegacyBlocks() async throws {
        _ = try await db.save(Record(recordType: "Note", recordID: id("a")))
        let log = EventLog()
        let op = FetchRecordZoneChangesOperation(
            recordZoneIDs: [Self.zone],
            configurationsByRecordZoneID: [Self.zone: .init(previousServerChangeToken: nil)])
        op.fetchAllChanges = true
        op.recordChangedBlock = { record in log.append("changed \(record.recordID.recordName)") }
        op.recordZoneFetchCompletionBlock = { zoneID, token, _, moreComing, error in
            log.append("zone \(zoneID.zoneName) token=\(token != nil) more=\(moreComing) error=\(error != nil)")
        }
        op.fetchRecordZoneChangesCompletionBlock = { error in log.append("done error=\(error != nil)") }
        await db.run(op)
        #expect(log.all == ["changed a", "zone Legacy token=true more=false error=false", "done error=false"])
    }

    @Test @available(*, deprecated) func databaseChangesLegacyBlockAndPaging() async throws {
        for name in ["B", "C"] { _ = try await db.save(RecordZone(zoneName: name)) }
        let log = EventLog()
        let op = FetchDatabaseChangesOperation(previousServerChangeToken: nil)
        op.resultsLimit = 1
        op.fetchAllChanges = false
        op.recordZoneWithIDChangedBlock = { zoneID in log.append("zone \(zoneID.zoneName)") }
        op.fetchDatabaseChangesCompletionBlock = { token, moreComing, error in
            log.append("done token=\(token != nil) more=\(moreComing) error=\(error != nil)")
        }
        await db.run(op)
        // One page of at most one change; more are coming.
        #expect(log.all.count <= 2 && log.all.last == "done token=true more=true error=false", "\(log.all)")

        let all = EventLog()
        let everything = FetchDatabaseChangesOperation(previousServerChangeToken: nil)
        everything.resultsLimit = 1
        everything.recordZoneWithIDChangedBlock = { zoneID in all.append(zoneID.zoneName) }
        await db.run(everything)
        #expect(Set(all.all) == ["Legacy", "B", "C"], "fetchAllChanges follows moreComing")
    }

    @Test @available(*, deprecated) func zoneOperationsLegacyBlocks() async throws {
        let log = EventLog()
        let modify = ModifyRecordZonesOperation(recordZonesToSave: [RecordZone(zoneName: "New")], recordZoneIDsToDelete: [Self.zone])
        modify.modifyRecordZonesCompletionBlock = { saved, deleted, error in
            log.append("modified \(saved?.map(\.zoneID.zoneName) ?? []) \(deleted?.map(\.zoneName) ?? []) \(error != nil)")
        }
        await db.run(modify)
        let fetch = FetchRecordZonesOperation(recordZoneIDs: [RecordZone.ID(zoneName: "New"), Self.zone])
        fetch.fetchRecordZonesCompletionBlock = { zones, error in
            log.append("fetched \(zones?.keys.map(\.zoneName).sorted() ?? []) \((error as? FogError)?.code.description ?? "ok")")
        }
        await db.run(fetch)
        #expect(log.all == ["modified [\"New\"] [\"Legacy\"] false", "fetched [\"New\"] partialFailure"])
    }

    @Test @available(*, deprecated) func subscriptionLegacyBlocks() async throws {
        let log = EventLog()
        let subscription = RecordZoneSubscription(zoneID: Self.zone, subscriptionID: "zone-changes")
        subscription.notificationInfo = Subscription.NotificationInfo(shouldSendContentAvailable: true)
        let save = ModifySubscriptionsOperation(subscriptionsToSave: [subscription])
        save.modifySubscriptionsCompletionBlock = { saved, deleted, error in
            log.append("saved \(saved?.map(\.subscriptionID) ?? []) \(deleted ?? []) \(error != nil)")
        }
        await db.run(save)
        let fetch = FetchSubscriptionsOperation.fetchAllSubscriptionsOperation()
        fetch.fetchSubscriptionCompletionBlock = { byID, error in log.append("fetched \(byID?.keys.sorted() ?? []) \(error != nil)") }
        await db.run(fetch)
        let delete = ModifySubscriptionsOperation(subscriptionIDsToDelete: ["zone-changes", "absent"])
        delete.perSubscriptionDeleteBlock = { subscriptionID, result in
            log.append("delete \(subscriptionID) \(((try? result.get()) != nil) ? "ok" : "failed")")
        }
        await db.run(delete)
        #expect(log.all.prefix(2) == ["saved [\"zone-changes\"] [] false", "fetched [\"zone-changes\"] false"])
        #expect(log.all.contains("delete zone-changes ok"))
        #expect(try await db.allSubscriptions().isEmpty)
    }
}
