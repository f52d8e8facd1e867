import FogKit
import FogKitTesting
import Foundation
import Testing

/// `NSPredicate` where CloudKit takes one (`Query`, `QuerySubscription`) and CloudKit's global
/// name constants: what a file written for CloudKit uses unchanged.
@Suite struct PredicateBridgeTests {
    let store: TestStore
    var db: Database { store.privateDatabase }
    init() throws { store = try TestStore() }

    @Test func constantNSPredicatesBecomeCloudKitPredicates() {
        #expect(QueryPredicate(NSPredicate(value: true)) == QueryPredicate(value: true))
        #expect(QueryPredicate(NSPredicate(value: false)) == QueryPredicate(value: false))
        #expect(Query(recordType: "Note", predicate: NSPredicate(value: true)).predicate.description == "TRUEPREDICATE")
        // The shorthand still means FogKit's own predicate, not NSPredicate's.
        #expect(Query(recordType: "Note", predicate: .init(value: true)).predicate == QueryPredicate(value: true))
    }

    @Test func aQueryWithNSPredicateRuns() async throws {
        for name in ["a", "b"] { _ = try await db.save(Record(recordType: "Note", recordID: Record.ID(recordName: name))) }
        let all = try await db.records(matching: Query(recordType: "Note", predicate: NSPredicate(value: true)), inZoneWith: .default)
        #expect(all.matchResults.count == 2)
        let none = try await db.records(matching: Query(recordType: "Note", predicate: NSPredicate(value: false)), inZoneWith: .default)
        #expect(none.matchResults.isEmpty)
    }

    @Test func aBlockPredicateIsRefusedWhenUsedAndChangesNothing() async throws {
        _ = try await db.save(Record(recordType: "Note", recordID: Record.ID(recordName: "kept")))
        let block = NSPredicate { _, _ in true }
        let query = Query(recordType: "Note", predicate: block)
        do {
            _ = try await db.records(matching: query, inZoneWith: .default)
            Issue.record("a block predicate must be refused")
        } catch let error as FogError {
            #expect(error.code == .invalidArguments)
            #expect(error.message.contains("BLOCKPREDICATE"))
        }
        let subscription = QuerySubscription(recordType: "Note", predicate: block, subscriptionID: "bad", options: [.firesOnRecordCreation])
        await #expect(throws: FogError.self) { try await db.save(subscription) }
        #expect(try await db.allSubscriptions().isEmpty)
        #expect(try await db.record(for: Record.ID(recordName: "kept")).recordType == "Note")
    }

    @Test func aSubscriptionWithNSPredicateFires() async throws {
        let subscription = QuerySubscription(recordType: "Note", predicate: NSPredicate(value: true), options: [.firesOnRecordCreation])
        subscription.notificationInfo = Subscription.NotificationInfo(shouldSendContentAvailable: true)
        let saved = try await db.save(subscription)
        #expect((saved as? QuerySubscription)?.predicate == QueryPredicate(value: true))
    }

    @Test func globalNamesEqualTheirMembers() {
        #expect(RecordZoneDefaultName == "_defaultZone" && RecordZoneDefaultName == RecordZone.ID.default.zoneName)
        #expect(RecordNameZoneWideShare == "cloudkit.zoneshare")
        #expect(RecordTypeUserRecord == "Users" && RecordTypeShare == "cloudkit.share")
        #expect(Share(recordZoneID: RecordZone.ID(zoneName: "Z")).recordID.recordName == RecordNameZoneWideShare)
    }
}
