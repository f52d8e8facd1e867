import FogKit
import FogKitTesting
import Foundation
import Testing

@Suite struct ArchivingTests {
    /// A fresh store for each test (Swift Testing makes a suite instance per test).
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    @Test func systemFieldsSurviveKeyedArchiving() async throws {
        let parent = Record(recordType: "Folder")
        try await db.save(parent)
        let note = Record(recordType: "Note")
        note["title"] = "Hello"
        note.setParent(parent)
        let saved = try await db.save(note)

        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        saved.encodeSystemFields(with: archiver)
        let data = archiver.encodedData
        let restored = try #require(Record(coder: try NSKeyedUnarchiver(forReadingFrom: data)))
        #expect(restored.recordType == "Note")
        #expect(restored.recordID == saved.recordID)
        #expect(restored.recordChangeTag == saved.recordChangeTag)
        #expect(restored.creationDate == saved.creationDate)
        #expect(restored.modificationDate == saved.modificationDate)
        #expect(restored.creatorUserRecordID == saved.creatorUserRecordID)
        #expect(restored.lastModifiedUserRecordID == saved.lastModifiedUserRecordID)
        #expect(restored.parent?.recordID == parent.recordID)
        #expect(restored.allKeys().isEmpty)
        #expect(restored.changedKeys().isEmpty)

        // An edit made on the restored record saves with conflict detection.
        restored["title"] = "Edited"
        let resaved = try await db.save(restored)
        #expect(resaved["title"] as? String == "Edited")
        // The old archive is now stale.
        let stale = try Record(systemFieldsData: saved.systemFieldsData())
        stale["title"] = "Stale"
        await #expect(throws: FogError.self) { try await db.save(stale) }
        #expect(try await db.record(for: note.recordID)["title"] as? String == "Edited")
    }

    @Test func damagedArchivesAreRejected() throws {
        #expect(throws: FogError.self) { try Record(systemFieldsData: Data([1, 2, 3])) }
        #expect(throws: FogError.self) { try Record(systemFieldsData: Data()) }
        let record = Record(recordType: "Note")
        var bytes = record.systemFieldsData()
        bytes.append(0)
        #expect(throws: FogError.self) { try Record(systemFieldsData: bytes) }
        for cut in 0..<record.systemFieldsData().count {
            #expect(throws: FogError.self) { try Record(systemFieldsData: record.systemFieldsData().prefix(cut)) }
        }
    }
}
