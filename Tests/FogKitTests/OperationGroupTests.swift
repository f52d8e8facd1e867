import FogKit
import FogKitTesting
import Foundation
import Testing

/// Operation groups and configurations: CloudKit's merge of an operation's configuration with
/// its group's default one, and `configuredWith`.
@Suite struct OperationGroupTests {
    let store: TestStore
    var db: Database { store.privateDatabase }

    init() throws { store = try TestStore() }

    @Test func newConfigurationHasCloudKitDefaults() {
        let configuration = CloudOperation.Configuration()
        #expect(configuration.qualityOfService == .default)
        #expect(configuration.allowsCellularAccess)
        #expect(!configuration.isLongLived)
        #expect(configuration.timeoutIntervalForRequest == 60)
        #expect(configuration.timeoutIntervalForResource == 604_800)
        // DatabaseOperation.Configuration is the same type.
        let same: DatabaseOperation.Configuration = configuration
        #expect(same == configuration)
    }

    @Test func groupHasCloudKitDefaultsAndRawValues() {
        let group = OperationGroup()
        #expect(group.name == nil)
        #expect(group.quantity == 0)
        #expect(group.expectedSendSize == .unknown)
        #expect(group.expectedReceiveSize == .unknown)
        #expect(group.defaultConfiguration == CloudOperation.Configuration())
        #expect(OperationGroup.TransferSize.allCases.map(\.rawValue) == Array(0...7))
        #expect(OperationGroup.TransferSize.hundredsOfGigabytes.rawValue == 7)
        #expect(OperationGroup().operationGroupID != group.operationGroupID)
        group.name = "Import"
        group.quantity = 12
        group.expectedSendSize = .megabytes
        group.expectedReceiveSize = .kilobytes
        #expect(group.name == "Import" && group.quantity == 12)
        #expect(group.expectedSendSize == .megabytes && group.expectedReceiveSize == .kilobytes)
    }

    @Test func setOperationValuesWinOverGroupDefaultsWhichWinOverCloudKitDefaults() {
        let group = OperationGroup()
        group.defaultConfiguration.qualityOfService = .utility
        group.defaultConfiguration.timeoutIntervalForRequest = 5
        group.defaultConfiguration.allowsCellularAccess = false
        let operation = FetchRecordsOperation(recordIDs: [])
        operation.configuration.qualityOfService = .userInitiated
        // Set to the default value: still set, so it wins over the group's `false`.
        operation.configuration.allowsCellularAccess = true
        operation.group = group
        let effective = operation.effectiveConfiguration
        #expect(effective.qualityOfService == .userInitiated)
        #expect(effective.allowsCellularAccess)
        #expect(effective.timeoutIntervalForRequest == 5)
        #expect(effective.timeoutIntervalForResource == 604_800)
        #expect(!effective.isLongLived)
        // The operation's own configuration is left as it was set.
        #expect(operation.configuration.timeoutIntervalForRequest == 60)
        // Without a group, the operation's configuration is the effective one.
        operation.group = nil
        #expect(operation.effectiveConfiguration == operation.configuration)
    }

    @Test func addedOperationRunsWithTheMergedQualityOfService() async throws {
        let group = OperationGroup()
        group.defaultConfiguration.qualityOfService = .utility
        let operation = FetchRecordsOperation(recordIDs: [])
        operation.group = group
        await db.run(operation)
        #expect(operation.qualityOfService == .utility)
    }

    @Test func configuredWithAppliesItsConfigurationAndGroupToAddedOperations() async throws {
        let group = OperationGroup()
        group.name = "Sync"
        group.defaultConfiguration.timeoutIntervalForRequest = 9
        var configuration = CloudOperation.Configuration()
        configuration.qualityOfService = .userInitiated
        configuration.timeoutIntervalForResource = 30
        let own = FetchRecordsOperation(recordIDs: [])
        own.configuration.timeoutIntervalForResource = 10
        let plain = FetchRecordsOperation(recordIDs: [])
        let fetched = try await db.configuredWith(configuration: configuration, group: group) { database in
            database.add(own)
            store.container.add(plain)
            return try await database.record(for: try await database.save(Record(recordType: "Note")).recordID)
        }
        #expect(fetched.recordType == "Note")
        for operation in [own, plain] {
            #expect(operation.group === group)
            #expect(operation.effectiveConfiguration.qualityOfService == .userInitiated)
            #expect(operation.effectiveConfiguration.timeoutIntervalForRequest == 9)
        }
        // The operation's own value wins over the scope's.
        #expect(own.effectiveConfiguration.timeoutIntervalForResource == 10)
        #expect(plain.effectiveConfiguration.timeoutIntervalForResource == 30)
        await finished(own)
        await finished(plain)
        // Outside the call nothing is applied.
        let after = FetchRecordsOperation(recordIDs: [])
        await db.run(after)
        #expect(after.group == nil)
        #expect(after.effectiveConfiguration == CloudOperation.Configuration())
    }

    @Test func configuredWithKeepsAnOperationsOwnGroupAndNests() throws {
        let outerGroup = OperationGroup()
        let ownGroup = OperationGroup()
        ownGroup.defaultConfiguration.timeoutIntervalForRequest = 3
        var outer = CloudOperation.Configuration()
        outer.qualityOfService = .utility
        outer.timeoutIntervalForRequest = 20
        var inner = CloudOperation.Configuration()
        inner.qualityOfService = .userInteractive
        let mine = FetchRecordsOperation(recordIDs: [])
        mine.group = ownGroup
        let other = FetchRecordsOperation(recordIDs: [])
        // The synchronous form, nested.
        store.container.configuredWith(configuration: outer, group: outerGroup) { container in
            container.configuredWith(configuration: inner) { container in
                container.privateCloudDatabase.add(mine)
                container.add(other)
            }
        }
        #expect(mine.group === ownGroup)
        #expect(other.group === outerGroup)
        #expect(mine.effectiveConfiguration.qualityOfService == .userInteractive)
        // The scope's set value wins over the group's default.
        #expect(mine.effectiveConfiguration.timeoutIntervalForRequest == 20)
        #expect(other.effectiveConfiguration.timeoutIntervalForRequest == 20)
        mine.waitUntilFinished()
        other.waitUntilFinished()
    }
}

/// Waits until `operation` has finished, off the calling task.
func finished(_ operation: CloudOperation) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().async {
            operation.waitUntilFinished()
            continuation.resume()
        }
    }
}
