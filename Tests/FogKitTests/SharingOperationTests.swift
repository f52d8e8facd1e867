import FogKitTesting
import Foundation
import Synchronization
import Testing

@testable import FogKit

/// The sharing operations (reference §6.9; `Docs/Sharing.md`, "Sharing operations"):
/// `FetchShareMetadataOperation`, `AcceptSharesOperation` and `FetchShareParticipantsOperation`,
/// run on a container, each item with its own result and the batch with `partialFailure`.
@Suite struct SharingOperationTests {
    let store: TestStore
    var alice: Container { store.container }
    var db: Database { store.privateDatabase }
    static let zone = RecordZone.ID(zoneName: "Albums")

    init() async throws {
        store = try TestStore()
        _ = try await store.privateDatabase.save(RecordZone(zoneID: Self.zone))
        _ = try await store.admin.addUser("bob", emailAddress: "bob@example.com")
        _ = try await store.admin.addUser("carol", emailAddress: "carol@example.com")
    }

    var bob: Container { get throws { try store.container(user: "bob") } }
    var carol: Container { get throws { try store.container(user: "carol") } }

    /// Alice shares the album `name` (with a title and a year) with bob.
    func share(_ name: String) async throws -> Share {
        let root = Record(recordType: "Album", recordID: Record.ID(recordName: name, zoneID: Self.zone))
        root["title"] = "Holiday"
        root["year"] = 2026
        let share = Share(rootRecord: root)
        share.addParticipant(try await alice.shareParticipant(forEmailAddress: "bob@example.com"))
        let result = try await db.modifyRecords(saving: [root, share], deleting: [])
        return try #require(try result.saveResults[share.recordID]?.get() as? Share)
    }

    /// Adds `operation` to `container` and waits until it has finished.
    func run(_ operation: CloudOperation, on container: Container) async {
        container.add(operation)
        await wait(for: operation)
    }

    /// Waits until `operation` has finished.
    func wait(for operation: CloudOperation) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                operation.waitUntilFinished()
                continuation.resume()
            }
        }
    }

    func code(_ error: (any Error)?) -> FogError.Code? { (error as? FogError)?.code }

    @Test func fetchShareMetadataReportsEachURLWithItsOwnResult() async throws {
        let holiday = try #require(try await share("holiday").url)
        let gone = try await share("trip")
        try await db.deleteRecord(withID: gone.recordID)
        let notAShare = try #require(URL(string: "https://example.com/share"))

        let operation = FetchShareMetadataOperation(shareURLs: [holiday, try #require(gone.url), notAShare])
        operation.shouldFetchRootRecord = true
        operation.rootRecordDesiredKeys = ["title"]
        let results = Mutex<[URL: Result<Share.Metadata, any Error>]>([:])
        let final = Mutex<Result<Void, any Error>?>(nil)
        operation.perShareMetadataResultBlock = { url, result in results.withLock { $0[url] = result } }
        operation.fetchShareMetadataResultBlock = { result in final.withLock { $0 = result } }
        await run(operation, on: try bob)

        let all = results.withLock { $0 }
        let metadata = try #require(try all[holiday]?.get())
        #expect(metadata.participantStatus == .pending)
        #expect(metadata.hierarchicalRootRecordID?.recordName == "holiday")
        let root = try #require(metadata.rootRecord)
        #expect(root.recordID == metadata.hierarchicalRootRecordID)
        #expect(root["title"] as? String == "Holiday")
        #expect(root["year"] == nil, "only the desired keys")
        #expect(root.share?.recordID == metadata.share.recordID)
        if case .failure(let error)? = all[try #require(gone.url)] { #expect(code(error) == .unknownItem) } else { Issue.record("gone") }
        if case .failure(let error)? = all[notAShare] { #expect(code(error) == .invalidArguments) } else { Issue.record("not a share") }
        let batch = try #require(final.withLock { $0 })
        guard case .failure(let error) = batch, let fog = error as? FogError else {
            Issue.record("no partial failure")
            return
        }
        #expect(fog.code == .partialFailure)
        #expect(Set(fog.partialErrorsByItemID?.keys.compactMap { $0.base as? URL } ?? []) == [try #require(gone.url), notAShare])

        // Without shouldFetchRootRecord there is no root; someone the share does not name
        // needs verification.
        let plain = FetchShareMetadataOperation(shareURLs: [holiday])
        let plainResult = Mutex<Result<Share.Metadata, any Error>?>(nil)
        plain.perShareMetadataResultBlock = { _, result in plainResult.withLock { $0 = result } }
        await run(plain, on: try bob)
        #expect(try plainResult.withLock { $0 }?.get().rootRecord == nil)
        let stranger = FetchShareMetadataOperation(shareURLs: [holiday])
        let strangerResult = Mutex<Result<Share.Metadata, any Error>?>(nil)
        stranger.perShareMetadataResultBlock = { _, result in strangerResult.withLock { $0 = result } }
        await run(stranger, on: try carol)
        if case .failure(let error)? = strangerResult.withLock({ $0 }) {
            #expect(code(error) == .participantMayNeedVerification)
        } else {
            Issue.record("carol read the metadata")
        }
    }

    @Test func acceptSharesAcceptsEachShareOnItsOwn() async throws {
        let holiday = try await share("holiday")
        let trip = try await share("trip")
        let bob = try bob
        let first = try await bob.shareMetadata(for: try #require(holiday.url))
        let second = try await bob.shareMetadata(for: try #require(trip.url))
        // Alice removes bob from the trip after he read its metadata.
        let owned = try #require(try await db.record(for: trip.recordID) as? Share)
        owned.removeParticipant(try #require(owned.participants.last))
        _ = try await db.save(owned)

        let operation = AcceptSharesOperation(shareMetadatas: [first, second])
        let results = Mutex<[Share.Metadata: Result<Share, any Error>]>([:])
        let final = Mutex<Result<Void, any Error>?>(nil)
        operation.perShareResultBlock = { metadata, result in results.withLock { $0[metadata] = result } }
        operation.acceptSharesResultBlock = { result in final.withLock { $0 = result } }
        await run(operation, on: bob)

        let all = results.withLock { $0 }
        let accepted = try #require(try all[first]?.get())
        #expect(accepted.currentUserParticipant?.acceptanceStatus == .accepted)
        if case .failure(let error)? = all[second] {
            #expect(code(error) == .participantMayNeedVerification)
        } else {
            Issue.record("bob accepted a share he was removed from")
        }
        guard case .failure(let error)? = final.withLock({ $0 }), let fog = error as? FogError else {
            Issue.record("no failure")
            return
        }
        #expect(fog.code == .partialFailure)
        #expect(fog.partialErrorsByItemID?.keys.compactMap { $0.base as? Share.Metadata } == [second])
        // The accepted share's zone is in bob's shared database, and the owner sees him accepted.
        #expect(try await bob.sharedCloudDatabase.allRecordZones().map(\.zoneID.zoneName) == ["Albums"])
        let ownerView = try #require(try await db.record(for: holiday.recordID) as? Share)
        #expect(ownerView.participants.last?.acceptanceStatus == .accepted)
    }

    @Test func fetchShareParticipantsFindsUsersByEmailOrUserRecordID() async throws {
        let carolID = try await carol.userRecordID()
        let byEmail = UserIdentity.LookupInfo(emailAddress: "bob@example.com")
        let byID = UserIdentity.LookupInfo(userRecordID: carolID)
        let unknown = UserIdentity.LookupInfo(emailAddress: "nobody@example.com")
        let phone = UserIdentity.LookupInfo(phoneNumber: "+15555550100")
        let malformed = UserIdentity.LookupInfo(emailAddress: "not an address")
        let operation = FetchShareParticipantsOperation(userIdentityLookupInfos: [byEmail, byID, unknown, phone, malformed])
        let results = Mutex<[UserIdentity.LookupInfo: Result<Share.Participant, any Error>]>([:])
        let final = Mutex<Result<Void, any Error>?>(nil)
        operation.perShareParticipantResultBlock = { info, result in results.withLock { $0[info] = result } }
        operation.fetchShareParticipantsResultBlock = { result in final.withLock { $0 = result } }
        await run(operation, on: alice)

        let all = results.withLock { $0 }
        let bob = try #require(try all[byEmail]?.get())
        #expect(bob.userIdentity.userRecordID == (try await self.bob.userRecordID()))
        #expect(bob.role == .privateUser && bob.permission == .readOnly && bob.acceptanceStatus == .unknown)
        #expect(try all[byID]?.get().userIdentity.lookupInfo?.emailAddress == "carol@example.com")
        for (info, expected) in [(unknown, FogError.Code.unknownItem), (phone, .unknownItem), (malformed, .invalidArguments)] {
            if case .failure(let error)? = all[info] { #expect(code(error) == expected, "\(info)") } else { Issue.record("\(info) found") }
        }
        guard case .failure(let error)? = final.withLock({ $0 }), let fog = error as? FogError else {
            Issue.record("no failure")
            return
        }
        #expect(fog.code == .partialFailure)
        #expect(fog.partialErrorsByItemID?.count == 3)
        // The participant joins a share as one from shareParticipant(forEmailAddress:) would.
        let root = Record(recordType: "Album", recordID: Record.ID(recordName: "a", zoneID: Self.zone))
        let share = Share(rootRecord: root)
        share.addParticipant(bob)
        let saved = try await db.modifyRecords(saving: [root, share], deleting: [])
        let url = try #require(try (saved.saveResults[share.recordID]?.get() as? Share)?.url)
        #expect(try await self.bob.shareMetadata(for: url).participantStatus == .pending)
    }

    @Test func theWholeOperationFailsForNobodyOrWithoutAContainer() async throws {
        let url = try #require(try await share("holiday").url)
        let nobody = try store.container(user: nil)
        let operations: [(ContainerOperation, () -> (any Error)?)] = {
            let fetch = FetchShareMetadataOperation(shareURLs: [url])
            let fetchError = Mutex<(any Error)?>(nil)
            fetch.fetchShareMetadataResultBlock = { if case .failure(let e) = $0 { fetchError.withLock { $0 = e } } }
            let participants = FetchShareParticipantsOperation(userIdentityLookupInfos: [.init(emailAddress: "bob@example.com")])
            let participantsError = Mutex<(any Error)?>(nil)
            participants.fetchShareParticipantsResultBlock = { if case .failure(let e) = $0 { participantsError.withLock { $0 = e } } }
            return [(fetch, { fetchError.withLock { $0 } }), (participants, { participantsError.withLock { $0 } })]
        }()
        for (operation, error) in operations {
            await run(operation, on: nobody)
            #expect(code(error()) == .notAuthenticated, "\(operation)")
        }
        // Not added to a container: invalidArguments for the operation and each item.
        let loose = FetchShareMetadataOperation(shareURLs: [url])
        let item = Mutex<(any Error)?>(nil)
        loose.perShareMetadataResultBlock = { _, result in if case .failure(let e) = result { item.withLock { $0 = e } } }
        let queue = OperationQueue()
        queue.addOperation(loose)
        await wait(for: loose)
        #expect(code(item.withLock { $0 }) == .invalidArguments)
        // A database operation added to a container without a database runs on its private database.
        let fetch = FetchRecordsOperation(recordIDs: [Record.ID(recordName: "holiday", zoneID: Self.zone)])
        let fetched = Mutex<Record?>(nil)
        fetch.perRecordResultBlock = { _, result in fetched.withLock { $0 = try? result.get() } }
        await run(fetch, on: alice)
        #expect(fetch.database === alice.privateCloudDatabase)
        #expect(fetched.withLock { $0 }?["title"] as? String == "Holiday")
    }
}
