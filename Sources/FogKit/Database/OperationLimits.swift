import Foundation

/// CloudKit's per-request limits.
public struct OperationLimits: Sendable, Hashable {
    /// The most records to save and delete in one request (CloudKit: 400).
    public var maximumItems: Int
    /// The most bytes of record data in one request, assets excluded (CloudKit: 2 MB).
    public var maximumBytes: Int

    /// Creates limits.
    public init(maximumItems: Int, maximumBytes: Int) {
        self.maximumItems = maximumItems
        self.maximumBytes = maximumBytes
    }

    /// CloudKit's limits: 400 items and 2 MB per request.
    public static let cloudKit = OperationLimits(maximumItems: 400, maximumBytes: 2_000_000)
    /// Relaxed limits for bulk loads: 100,000 items and 1 GB per request.
    public static let bulkLoad = OperationLimits(maximumItems: 100_000, maximumBytes: 1_000_000_000)
}

extension OperationLimits {
    /// The engine's form of these limits.
    var requestLimits: RequestLimits { RequestLimits(maximumItems: maximumItems, maximumBytes: maximumBytes) }
}
