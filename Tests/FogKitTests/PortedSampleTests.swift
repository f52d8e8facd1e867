// A CloudKit sample ported to FogKit (issue 18, "Done when"): `NotesStore` below is written
// against CloudKit's API, as a CloudKit developer writes it, and compiled against FogKit.
//
// The lines of `NotesStore` that differ from its CloudKit original:
//   - `import FogKit` instead of `import CloudKit`.
//   - Every `CK` prefix removed: `CKContainer` → `Container`, `CKDatabase` → `Database`,
//     `CKRecord` → `Record`, `CKRecordZone` → `RecordZone`, `CKServerChangeToken` →
//     `ServerChangeToken`, `CKOperationGroup` → `OperationGroup`,
//     `CKModifyRecordsOperation` → `ModifyRecordsOperation`,
//     `CKFetchRecordZoneChangesOperation` → `FetchRecordZoneChangesOperation`,
//     `CKCurrentUserDefaultName` → `CurrentUserDefaultName`; and `CKError` → `FogError`
//     (without its prefix `CKError` would be Swift's `Error`; Docs/CloudKitDifferences.md).
//   - The two archive lines of the last edited record ID (`rememberLastEdited(_:)` and
//     `lastEditedRecordID`): FogKit's IDs are values, so `NSKeyedArchiver` archives
//     `recordID.archive` and unarchives `Record.ID.Archive.self` then takes `.recordID`
//     (CloudKit: `recordID` and `CKRecord.ID.self`), the one-line change
//     Docs/CloudKitDifferences.md documents.
// Everything else in `NotesStore` is CloudKit code unchanged (written in Swift 6 style,
// `(any Error)?`, because this package enables ExistentialAny; plain `Error?` compiles too,
// with warnings). The tests after it are FogKit's
// own harness: Swift Testing, `TestStore`, and the container's fault plan, which stands in
// for CloudKit's throttling.

import FogKit
import FogKitTesting
import Testing

/// A small notes store in the style of Apple's private-database sync sample: records' system
/// fields and the zone's change token kept as `NSKeyedArchiver` archives, completion-handler
/// convenience methods, operations in an operation group, and a retry loop on
/// `retryAfterSeconds`.
final class NotesStore: @unchecked Sendable {
    let container: Container
    let database: Database
    let zoneID = RecordZone.ID(zoneName: "Notes", ownerName: CurrentUserDefaultName)
    let group: OperationGroup

    private let lock = NSLock()
    /// Archived system fields by record name: what an app keeps on disk between launches.
    private var systemFields: [String: Data] = [:]
    private var titles: [String: String] = [:]
    private var tokenData: Data?
    private var lastEditedData: Data?
    private var retryCount = 0

    init(container: Container) {
        self.container = container
        database = container.privateCloudDatabase
        group = OperationGroup()
        group.name = "Notes sync"
        group.expectedSendSize = .kilobytes
        group.expectedReceiveSize = .kilobytes
        group.quantity = 1
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    var notes: [String: String] { locked { titles } }
    var retries: Int { locked { retryCount } }
    var archivedToken: Data? { locked { tokenData } }

    // MARK: Zone

    func createZone(completion: @escaping @Sendable ((any Error)?) -> Void) {
        database.save(RecordZone(zoneID: zoneID)) { _, error in
            completion(error)
        }
    }

    // MARK: Saving, with system fields and a retry loop

    func saveNote(named name: String, title: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        let record = cachedRecord(named: name) ?? Record(recordType: "Note", recordID: Record.ID(recordName: name, zoneID: zoneID))
        record["title"] = title
        save([record], attemptsLeft: 3, completion: completion)
    }

    private func save(_ records: [Record], attemptsLeft: Int, completion: @escaping @Sendable ((any Error)?) -> Void) {
        let operation = ModifyRecordsOperation(recordsToSave: records, recordIDsToDelete: nil)
        operation.savePolicy = .ifServerRecordUnchanged
        operation.group = group
        operation.perRecordSaveBlock = { [weak self] _, result in
            if case .success(let record) = result {
                self?.remember(record)
            }
        }
        operation.modifyRecordsResultBlock = { [weak self] result in
            guard let self else { return }
            switch result {
            case .success:
                completion(nil)
            case .failure(let error):
                if let ckError = error as? FogError, let retryAfter = ckError.retryAfterSeconds, attemptsLeft > 0 {
                    self.locked { self.retryCount += 1 }
                    DispatchQueue.global().asyncAfter(deadline: .now() + retryAfter) {
                        self.save(records, attemptsLeft: attemptsLeft - 1, completion: completion)
                    }
                } else {
                    completion(error)
                }
            }
        }
        database.add(operation)
    }

    /// Keeps the record's system fields (not its values) and its title.
    private func remember(_ record: Record) {
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        record.encodeSystemFields(with: archiver)
        archiver.finishEncoding()
        let data = archiver.encodedData
        let title = record["title"] as? String
        locked {
            systemFields[record.recordID.recordName] = data
            titles[record.recordID.recordName] = title
        }
        rememberLastEdited(record.recordID)
    }

    private func forget(_ recordName: String) {
        locked {
            systemFields[recordName] = nil
            titles[recordName] = nil
        }
    }

    /// The record as last seen, system fields only, for saving an edit with conflict detection.
    func cachedRecord(named name: String) -> Record? {
        guard let data = locked({ systemFields[name] }) else { return nil }
        guard let unarchiver = try? NSKeyedUnarchiver(forReadingFrom: data) else { return nil }
        unarchiver.requiresSecureCoding = true
        defer { unarchiver.finishDecoding() }
        return Record(coder: unarchiver)
    }

    private func rememberLastEdited(_ recordID: Record.ID) {
        let data = try? NSKeyedArchiver.archivedData(withRootObject: recordID.archive, requiringSecureCoding: true)
        locked { lastEditedData = data }
    }

    var lastEditedRecordID: Record.ID? {
        guard let data = locked({ lastEditedData }) else { return nil }
        return (try? NSKeyedUnarchiver.unarchivedObject(ofClass: Record.ID.Archive.self, from: data))??.recordID
    }

    // MARK: Fetching and deleting

    func fetchNote(named name: String, completion: @escaping @Sendable (Record?, (any Error)?) -> Void) {
        database.fetch(withRecordID: Record.ID(recordName: name, zoneID: zoneID)) { record, error in
            completion(record, error)
        }
    }

    func deleteNote(named name: String, completion: @escaping @Sendable ((any Error)?) -> Void) {
        database.delete(withRecordID: Record.ID(recordName: name, zoneID: zoneID)) { [weak self] _, error in
            if error == nil {
                self?.forget(name)
            }
            completion(error)
        }
    }

    // MARK: Change tokens

    func fetchChanges(completion: @escaping @Sendable ((any Error)?) -> Void) {
        var token: ServerChangeToken?
        if let data = locked({ tokenData }) {
            token = try? NSKeyedUnarchiver.unarchivedObject(ofClass: ServerChangeToken.self, from: data)
        }
        let configuration = FetchRecordZoneChangesOperation.ZoneConfiguration()
        configuration.previousServerChangeToken = token
        let operation = FetchRecordZoneChangesOperation(
            recordZoneIDs: [zoneID], configurationsByRecordZoneID: [zoneID: configuration])
        operation.fetchAllChanges = true
        operation.group = group
        operation.recordWasChangedBlock = { [weak self] _, result in
            if case .success(let record) = result {
                self?.remember(record)
            }
        }
        operation.recordWithIDWasDeletedBlock = { [weak self] recordID, _ in
            self?.forget(recordID.recordName)
        }
        operation.recordZoneChangeTokensUpdatedBlock = { [weak self] _, token, _ in
            self?.store(token)
        }
        operation.recordZoneFetchResultBlock = { [weak self] _, result in
            if case .success(let (token, _, _)) = result {
                self?.store(token)
            }
        }
        operation.fetchRecordZoneChangesResultBlock = { result in
            switch result {
            case .success: completion(nil)
            case .failure(let error): completion(error)
            }
        }
        database.add(operation)
    }

    private func store(_ token: ServerChangeToken?) {
        guard let token, let data = try? NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true) else { return }
        locked { tokenData = data }
    }
}

/// The ported sample runs against FogKit: two "devices" of one user sync through archived
/// tokens and system fields, an edit from cached system fields saves without a conflict and a
/// stale one conflicts, and the retry loop rides out injected throttling.
@Suite struct PortedSampleTests {
    let store: TestStore
    init() throws { store = try TestStore() }

    /// Waits for a completion-handler call.
    static func wait(_ body: (@escaping @Sendable ((any Error)?) -> Void) -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            body { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    @Test func twoDevicesSyncThroughArchivedTokensAndSystemFields() async throws {
        let phone = NotesStore(container: store.container)
        let laptop = NotesStore(container: store.container)
        try await Self.wait { phone.createZone(completion: $0) }
        try await Self.wait { phone.saveNote(named: "groceries", title: "Milk", completion: $0) }
        try await Self.wait { phone.saveNote(named: "todo", title: "Call Bob", completion: $0) }
        #expect(phone.lastEditedRecordID == Record.ID(recordName: "todo", zoneID: phone.zoneID))

        // The laptop starts from no token and gets both notes, and a token.
        try await Self.wait { laptop.fetchChanges(completion: $0) }
        #expect(laptop.notes == ["groceries": "Milk", "todo": "Call Bob"])
        let firstToken = try #require(laptop.archivedToken)

        // The phone edits from its cached system fields: no conflict.
        let cached = try #require(phone.cachedRecord(named: "groceries"))
        #expect(cached.recordChangeTag != nil && cached.allKeys().isEmpty)
        try await Self.wait { phone.saveNote(named: "groceries", title: "Milk, eggs", completion: $0) }
        try await Self.wait { phone.deleteNote(named: "todo", completion: $0) }

        // The laptop fetches from its archived token: the edit and the deletion only.
        try await Self.wait { laptop.fetchChanges(completion: $0) }
        #expect(laptop.notes == ["groceries": "Milk, eggs"])
        #expect(laptop.archivedToken != firstToken)

        // The laptop edits from its cached system fields, which its fetch brought up to date.
        try await Self.wait { laptop.saveNote(named: "groceries", title: "Milk, eggs, bread", completion: $0) }
        let fetched = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Record, any Error>) in
            phone.fetchNote(named: "groceries") { record, error in
                if let record { continuation.resume(returning: record) } else { continuation.resume(throwing: error!) }
            }
        }
        #expect(fetched["title"] as? String == "Milk, eggs, bread")

        // The phone's cached system fields are stale now: its save conflicts.
        await #expect {
            try await Self.wait { phone.saveNote(named: "groceries", title: "Milk only", completion: $0) }
        } throws: { error in
            let partial = (error as? FogError)?.partialErrorsByItemID?.values.first as? FogError
            return (error as? FogError)?.code == .partialFailure && partial?.code == .serverRecordChanged
        }
    }

    @Test func theRetryLoopRidesOutThrottling() async throws {
        let notes = NotesStore(container: store.container)
        try await Self.wait { notes.createZone(completion: $0) }
        store.container.faultPlan = FaultPlan([
            .init(.error(.requestRateLimited, retryAfterSeconds: 0.02), requests: [.modifyRecords], trigger: .firstCalls(2))
        ])
        try await Self.wait { notes.saveNote(named: "n", title: "saved at last", completion: $0) }
        #expect(notes.retries == 2)
        let stored = try await store.privateDatabase.record(for: Record.ID(recordName: "n", zoneID: notes.zoneID))
        #expect(stored["title"] as? String == "saved at last")
    }

    @Test func theRetryLoopGivesUpAfterThreeRetries() async throws {
        let notes = NotesStore(container: store.container)
        try await Self.wait { notes.createZone(completion: $0) }
        store.container.faultPlan = FaultPlan([
            .init(.error(.serviceUnavailable, retryAfterSeconds: 0.01), requests: [.modifyRecords], trigger: .always)
        ])
        await #expect {
            try await Self.wait { notes.saveNote(named: "n", title: "never", completion: $0) }
        } throws: { error in
            (error as? FogError)?.code == .serviceUnavailable && (error as? FogError)?.retryAfterSeconds == 0.01
        }
        #expect(notes.retries == 3)
        store.container.faultPlan = FaultPlan()
        await #expect(throws: FogError.self) {
            _ = try await store.privateDatabase.record(for: Record.ID(recordName: "n", zoneID: notes.zoneID))
        }
    }
}
