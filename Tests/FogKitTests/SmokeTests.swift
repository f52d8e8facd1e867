import FogKit
import FogKitTesting
import Foundation
import Testing

@Suite struct SmokeTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    @Test func saveFetchUpdateDelete() async throws {
        let note = Record(recordType: "Note")
        note["title"] = "Groceries"
        note["count"] = 3
        note["pinned"] = true
        let saved = try await db.save(note)
        #expect(saved.recordChangeTag != nil)
        #expect(saved["title"] as? String == "Groceries")
        #expect(saved["count"] as? Int == 3)
        #expect(saved["pinned"] as? Bool == true)
        let fetched = try await db.record(for: note.recordID)
        #expect(fetched.recordChangeTag == saved.recordChangeTag)
        let n: Int64? = fetched["count"]
        #expect(n == 3)
        fetched["title"] = "Groceries 2"
        let updated = try await db.save(fetched)
        #expect(updated.recordChangeTag != saved.recordChangeTag)
        // stale
        saved["title"] = "stale"
        await #expect(throws: FogError.self) { try await db.save(saved) }
        do { _ = try await db.save(saved) } catch let e as FogError {
            #expect(e.code == .serverRecordChanged)
            #expect(e.serverRecord?["title"] as? String == "Groceries 2")
            #expect(e.ancestorRecord?["title"] as? String == "Groceries")
        }
        try await db.deleteRecord(withID: note.recordID)
        do {
            _ = try await db.record(for: note.recordID)
            Issue.record("expected unknownItem")
        } catch let e as FogError {
            #expect(e.code == .unknownItem)
        }
    }
}
