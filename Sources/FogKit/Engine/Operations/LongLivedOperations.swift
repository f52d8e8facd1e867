import FogStorage
import Foundation

/// The long-lived operations of each user (CloudKit's `isLongLived`): kept in the `users`
/// table from the moment one is added until its result has been delivered, so that they can
/// be listed and fetched again after a restart. A write operation's outcome is kept in the
/// transaction that commits its work (``recordOutcome(_:operationID:user:in:)``), so that
/// running the operation again delivers that outcome instead of doing the work twice.
final class LongLivedOperations<Store: KeyValueStore>: EngineService {
    let core: EngineCore<Store>
    /// The `users` table, where the operations live (`Layout+Operations.swift`).
    let users: Table

    init(core: EngineCore<Store>) {
        self.core = core
        users = core.store.table(named: Layout.users)
    }

    /// Keeps `operation` for `user` unless an operation of that ID is kept already: a fetched
    /// operation added again keeps the entry, and the outcome, of the original.
    func persist(_ operation: StoredOperation, operationID: String, user: String) throws {
        let key = Layout.longLivedOperationKey(user: user, operationID: operationID)
        let value = try operation.encoded()
        let users = users
        try mapStorageErrors {
            _ = try writeAndWait { txn, _ in try txn.insert(value, forKey: key, in: users) }
        }
    }

    /// The IDs of `user`'s kept operations, in ID order.
    func operationIDs(user: String) throws -> [String] {
        let prefix = Layout.longLivedOperationPrefix(user: user)
        return try mapStorageErrors {
            try read { txn, _ in
                var ids: [String] = []
                try txn.scan(users, range: .prefix(prefix)) { key, _ in
                    var reader = KeyReader(Array(key[prefix.count...]))
                    ids.append(try reader.readString())
                    return true
                }
                return ids
            }
        }
    }

    /// `user`'s kept operation `operationID`, or `nil`.
    func operation(_ operationID: String, user: String) throws -> StoredOperation? {
        let key = Layout.longLivedOperationKey(user: user, operationID: operationID)
        return try mapStorageErrors {
            try read { txn, _ in try txn.withValue(forKey: key, in: users) { try StoredOperation.decode($0) } }
        }
    }

    /// Forgets `user`'s operation `operationID` (its result was delivered).
    func remove(_ operationID: String, user: String) throws {
        let key = Layout.longLivedOperationKey(user: user, operationID: operationID)
        let users = users
        try mapStorageErrors {
            _ = try writeAndWait { txn, _ in try txn.delete(key, in: users) }
        }
    }

    /// What writes the outcome of `user`'s operation `operationID`, encoded by `encode`, in
    /// the transaction that commits the work (``RecordWriter/modifyAndWait(saving:deleting:policy:atomic:limits:context:clientChangeTokenData:alsoWrite:)``).
    func outcomeWriter(
        operationID: String, user: String, encode: @escaping (ModifyOutcome) throws -> Data
    ) -> (ModifyOutcome, Store.WriteTransaction) throws -> Void {
        { [self] outcome, txn in try recordOutcome(try encode(outcome), operationID: operationID, user: user, in: txn) }
    }

    /// Writes the outcome of `user`'s operation `operationID` in `txn`, the transaction that
    /// commits its work; nothing when the operation is not kept.
    func recordOutcome(_ outcome: Data, operationID: String, user: String, in txn: Store.WriteTransaction) throws {
        let key = Layout.longLivedOperationKey(user: user, operationID: operationID)
        guard var stored = try txn.withValue(forKey: key, in: users, { try StoredOperation.decode($0) }) else { return }
        stored.outcome = outcome
        try txn.put(try stored.encoded(), forKey: key, in: users)
    }
}
